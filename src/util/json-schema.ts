/**
 * JSON Schema checks for tool arguments declared by hosts and extensions (and for pion's own
 * published wire schemas in tests). `compileJsonSchema` refuses, at once and by name, any
 * schema that uses something the validator cannot check (an unknown keyword, a remote or
 * dangling `$ref`, an unknown `format`, a pattern that is not a regular expression), so no
 * argument ever passes a check that was silently skipped. The validator itself
 * (@cfworker/json-schema: drafts 4 to 2020-12, no code generation, no dependencies) is loaded
 * on first use with the coercion and the wording of issues (json-schema-engine.ts): a session
 * whose tools are never called never pays for it. `parseNow` first coerces loose arguments as
 * the reference agent does (json-coerce.ts), then checks.
 */
import { pointerParts } from "./json-pointer.ts";

export type JsonSchema = Record<string, unknown>;

export class JsonSchemaError extends Error {}

type Draft = "4" | "7" | "2019-09" | "2020-12";
export type OutputUnit = { instanceLocation: string; keyword: string; keywordLocation: string; error: string };
type Validator = { validate(value: unknown): { valid: boolean; errors: OutputUnit[] } };

/** Keywords that assert nothing (annotations) or that the validator checks. */
const ANNOTATIONS = ["$schema", "$id", "id", "$anchor", "$comment", "title", "description", "default", "examples", "deprecated", "readOnly", "writeOnly", "contentMediaType", "contentEncoding", "$recursiveAnchor"];
const VALUES = ["type", "const", "enum", "required", "minProperties", "maxProperties", "dependentRequired", "minContains", "maxContains", "minItems", "maxItems", "uniqueItems", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minLength", "maxLength", "pattern", "format", "$ref", "$recursiveRef"];
/** Keywords whose value is a schema, a list of schemas, or a map of them. */
const ONE = ["not", "if", "then", "else", "additionalProperties", "unevaluatedProperties", "propertyNames", "additionalItems", "unevaluatedItems", "contains", "contentSchema"];
const LIST = ["anyOf", "allOf", "oneOf", "prefixItems"];
const MAP = ["properties", "patternProperties", "$defs", "definitions", "dependentSchemas"];
const KNOWN = new Set([...ANNOTATIONS, ...VALUES, ...ONE, ...LIST, ...MAP, "items", "dependencies"]);

/** The formats the validator checks (its own list); any other is refused rather than ignored. */
const FORMATS = new Set(["date", "time", "date-time", "duration", "uri", "uri-reference", "uri-template", "url", "email", "hostname", "ipv4", "ipv6", "regex", "uuid", "json-pointer", "json-pointer-uri-fragment", "relative-json-pointer"]);

const DRAFTS: [RegExp, Draft][] = [
  [/draft-0[34]\/schema/, "4"],
  [/draft-0[67]\/schema/, "7"],
  [/2019-09\/schema/, "2019-09"],
  [/2020-12\/schema/, "2020-12"],
];

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** A compiled check; undefined when the value conforms, else the problems, each naming its path. */
export interface SchemaCheck {
  check(value: unknown): Promise<string | undefined>;
  /** Resolves once the validator is loaded; then `checkNow` answers synchronously. */
  readonly ready: Promise<void>;
  /** Throws when called before `ready` resolved. */
  checkNow(value: unknown): string | undefined;
  /**
   * Loose arguments brought towards the schema first (`"42"` for a number, one value for an
   * array, a null optional dropped; see json-coerce.ts), then checked: the coerced value, or
   * each problem at the path of the value it concerns. Throws when called before `ready` resolved.
   */
  parseNow(value: unknown): { ok: true; value: unknown } | { ok: false; issues: SchemaIssue[] };
  /** The coercion step of `parseNow` alone, for a caller that checks with a validator of its own. */
  coerceNow(value: unknown): unknown;
}

/** One problem of a checked value: the path to it (property names and item indexes) and what is wrong. */
export interface SchemaIssue {
  path: string[];
  message: string;
}

type Engine = typeof import("./json-schema-engine.ts");
let loading: Promise<Engine> | undefined;
/** Set once loaded, so schemas compiled later can be checked at once. */
let engine: Engine | undefined;

/** Start loading the validator (json-schema-engine.ts); resolves once it is loaded. */
export const loadJsonSchemaEngine = (): Promise<Engine> => (engine ? Promise.resolve(engine) : (loading ??= import("./json-schema-engine.ts").then((m) => (engine ??= m))));

/**
 * For a caller that must check synchronously and already holds the engine module (the
 * extensions' pi-ai surface imports it with itself): every schema compiled after is ready at once.
 */
export function useJsonSchemaEngine(m: Engine): void {
  engine ??= m;
}

/** Refuse what cannot be checked (throws JsonSchemaError naming the place), then start loading the validator. */
export function compileJsonSchema(schema: unknown): SchemaCheck {
  if (!isObject(schema)) throw new JsonSchemaError("the parameters schema must be a JSON object");
  const draft = draftOf(schema.$schema);
  inspect(schema, schema, "#");
  let validator: Validator | undefined;
  /** Reports every problem rather than the first; built on the first failed parse. */
  let full: Validator | undefined;
  let lookup: ReturnType<Engine["dereference"]> | undefined;
  const loaded = (): Engine => {
    if (!engine) throw new Error("the JSON Schema validator is not loaded yet (await ready)");
    validator ??= new engine.Validator(schema as never, draft, true) as Validator;
    return engine;
  };
  const ready: Promise<void> = engine ? Promise.resolve(void loaded()) : loadJsonSchemaEngine().then(() => void loaded());
  const checkNow = (value: unknown): string | undefined => {
    loaded();
    const result = (validator as Validator).validate(value);
    return result.valid ? undefined : describe(result.errors);
  };
  const coerceNow = (value: unknown): unknown => {
    const m = loaded();
    // Sub-schemas are checked against the root's definitions, so their `$ref`s resolve.
    const refs = (lookup ??= m.dereference(schema as never));
    return m.coerceToSchema(schema, value, (node, x) => m.validate(x, node as never, draft, refs, true).valid);
  };
  return {
    ready,
    checkNow,
    coerceNow,
    parseNow(value) {
      const m = loaded();
      const coerced = coerceNow(value);
      // An undefined property counts as absent (JSON has none; an extension's own call may).
      const checked = m.withoutUndefined(coerced);
      if ((validator as Validator).validate(checked).valid) return { ok: true, value: coerced };
      full ??= new m.Validator(schema as never, draft, false) as Validator;
      return { ok: false, issues: m.issuesOf(schema, checked, full.validate(checked).errors) };
    },
    async check(value) {
      await ready;
      return checkNow(value);
    },
  };
}

function draftOf(uri: unknown): Draft {
  if (uri === undefined) return "2020-12";
  if (typeof uri === "string") for (const [re, d] of DRAFTS) if (re.test(uri)) return d;
  throw new JsonSchemaError(`$schema ${JSON.stringify(uri)} is not a JSON Schema draft pion can check (4, 6, 7, 2019-09, 2020-12)`);
}

function inspect(root: Record<string, unknown>, schema: unknown, at: string): void {
  if (typeof schema === "boolean") return;
  if (!isObject(schema)) throw new JsonSchemaError(`${at}: a schema must be an object or a boolean`);
  for (const [key, value] of Object.entries(schema)) {
    const here = `${at}/${key}`;
    if (key.startsWith("x-")) continue; // vendor annotations assert nothing
    if (!KNOWN.has(key)) throw new JsonSchemaError(`${here}: the keyword "${key}" cannot be checked`);
    if (ONE.includes(key)) inspect(root, value, here);
    else if (LIST.includes(key)) {
      if (!Array.isArray(value)) throw new JsonSchemaError(`${here}: must be an array of schemas`);
      value.forEach((s, i) => inspect(root, s, `${here}/${i}`));
    } else if (MAP.includes(key)) {
      if (!isObject(value)) throw new JsonSchemaError(`${here}: must be an object of schemas`);
      for (const [name, s] of Object.entries(value)) {
        if (key === "patternProperties") regex(name, here);
        inspect(root, s, `${here}/${name}`);
      }
    } else if (key === "items") {
      if (Array.isArray(value)) value.forEach((s, i) => inspect(root, s, `${here}/${i}`));
      else inspect(root, value, here);
    } else if (key === "dependencies") {
      if (!isObject(value)) throw new JsonSchemaError(`${here}: must be an object`);
      for (const [name, dep] of Object.entries(value)) if (!Array.isArray(dep)) inspect(root, dep, `${here}/${name}`);
    } else if (key === "pattern") {
      if (typeof value !== "string") throw new JsonSchemaError(`${here}: must be a string`);
      regex(value, here);
    } else if (key === "format") {
      if (typeof value !== "string" || !FORMATS.has(value)) throw new JsonSchemaError(`${here}: the format ${JSON.stringify(value)} cannot be checked`);
    } else if (key === "$ref") {
      resolveRef(root, value, here);
    } else if (key === "$recursiveRef" && value !== "#") {
      throw new JsonSchemaError(`${here}: only "#" can be checked`);
    }
  }
}

function regex(pattern: string, at: string): void {
  try {
    new RegExp(pattern, "u");
  } catch (err) {
    throw new JsonSchemaError(`${at}: ${JSON.stringify(pattern)} is not a regular expression (${err instanceof Error ? err.message : String(err)})`);
  }
}

/** Only references inside the schema itself: "#", a JSON pointer "#/...", or an "#anchor". */
function resolveRef(root: Record<string, unknown>, ref: unknown, at: string): void {
  if (typeof ref !== "string" || !ref.startsWith("#")) {
    throw new JsonSchemaError(`${at}: ${JSON.stringify(ref)} is not a reference inside the schema (remote references are not fetched)`);
  }
  if (ref === "#") return;
  if (!ref.startsWith("#/")) {
    if (!hasAnchor(root, ref.slice(1))) throw new JsonSchemaError(`${at}: ${ref} names no $anchor in the schema`);
    return;
  }
  let node: unknown = root;
  for (const raw of ref.slice(2).split("/")) {
    const part = decodeURIComponent(raw).replace(/~1/g, "/").replace(/~0/g, "~");
    node = Array.isArray(node) ? node[Number(part)] : isObject(node) ? node[part] : undefined;
    if (node === undefined) throw new JsonSchemaError(`${at}: ${ref} points at nothing in the schema`);
  }
  if (!isObject(node) && typeof node !== "boolean") throw new JsonSchemaError(`${at}: ${ref} does not point at a schema`);
}

function hasAnchor(node: unknown, name: string): boolean {
  if (Array.isArray(node)) return node.some((n) => hasAnchor(n, name));
  if (!isObject(node)) return false;
  return node.$anchor === name || Object.values(node).some((v) => hasAnchor(v, name));
}

/** Wrapper errors ("Property x does not match schema") whose cause follows them. */
export const WRAPPERS = new Set(["properties", "patternProperties", "items", "prefixItems", "additionalItems", "$ref", "$recursiveRef", "allOf", "if", "then", "else", "dependentSchemas", "additionalProperties", "unevaluatedProperties"]);

function describe(errors: { instanceLocation: string; keyword: string; error: string }[]): string {
  const lines = errors
    .filter((e, i) => !WRAPPERS.has(e.keyword) || i === errors.length - 1)
    .map((e) => `${pathOf(e.instanceLocation)}: ${e.keyword === "false" ? "not allowed" : e.error}`);
  return [...new Set(lines)].slice(0, 8).join("; ");
}

/** Issues on one line, as `check` words them: "edits.0.oldText: missing; mode: ...". */
export function describeSchemaIssues(issues: readonly SchemaIssue[]): string {
  const lines = issues.map((i) => `${i.path.length ? i.path.join(".") : "arguments"}: ${i.message}`);
  return [...new Set(lines)].slice(0, 8).join("; ");
}

/** "#/edits/0/oldText" -> "edits.0.oldText"; the whole value is "arguments". */
function pathOf(pointer: string): string {
  const parts = pointerParts(pointer);
  return parts.length ? parts.join(".") : "arguments";
}
