/**
 * JSON Schema checks for tool arguments declared by hosts and extensions (and for pion's own
 * published wire schemas in tests). `compileJsonSchema` refuses, at once and by name, any
 * schema that uses something the validator cannot check (an unknown keyword, a remote or
 * dangling `$ref`, an unknown `format`, a pattern that is not a regular expression), so no
 * argument ever passes a check that was silently skipped. The validator itself
 * (@cfworker/json-schema: drafts 4 to 2020-12, no code generation, no dependencies) is loaded
 * on first use: a session that registers no such tool never pays for it. `parseNow` first
 * coerces loose arguments as the reference agent does (json-coerce.ts), then checks.
 */
import { coerceToSchema, pointerParts, withoutUndefined } from "./json-coerce.ts";

export type JsonSchema = Record<string, unknown>;

export class JsonSchemaError extends Error {}

type Draft = "4" | "7" | "2019-09" | "2020-12";
type OutputUnit = { instanceLocation: string; keyword: string; keywordLocation: string; error: string };
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
   * each problem at the path of the value it concerns. Loads the validator synchronously when
   * it is not loaded yet.
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

type ValidatorModule = typeof import("@cfworker/json-schema");
let loading: Promise<ValidatorModule> | undefined;
/** Set once loaded, so schemas compiled later can be checked at once. */
let loaded: ValidatorModule | undefined;

/** Refuse what cannot be checked (throws JsonSchemaError naming the place), then start loading the validator. */
export function compileJsonSchema(schema: unknown): SchemaCheck {
  if (!isObject(schema)) throw new JsonSchemaError("the parameters schema must be a JSON object");
  const draft = draftOf(schema.$schema);
  inspect(schema, schema, "#");
  let validator: Validator | undefined;
  /** Reports every problem rather than the first; built on the first failed parse. */
  let full: Validator | undefined;
  let lookup: ReturnType<ValidatorModule["dereference"]> | undefined;
  const build = (m: ValidatorModule) => {
    validator ??= new m.Validator(schema as never, draft, true) as Validator;
  };
  let ready: Promise<void>;
  if (loaded) {
    build(loaded);
    ready = Promise.resolve();
  } else {
    loading ??= import("@cfworker/json-schema").then((m) => (loaded ??= m));
    ready = loading.then(build);
  }
  const checkNow = (value: unknown): string | undefined => {
    if (!validator) throw new Error("the JSON Schema validator is not loaded yet (await ready)");
    const result = validator.validate(value);
    return result.valid ? undefined : describe(result.errors);
  };
  const coerceNow = (value: unknown): unknown => {
    if (!loaded) loaded = require("@cfworker/json-schema") as ValidatorModule;
    const m = loaded;
    build(m);
    // Sub-schemas are checked against the root's definitions, so their `$ref`s resolve.
    const refs = (lookup ??= m.dereference(schema as never));
    return coerceToSchema(schema, value, (node, x) => m.validate(x, node as never, draft, refs, true).valid);
  };
  return {
    ready,
    checkNow,
    coerceNow,
    parseNow(value) {
      const coerced = coerceNow(value);
      const v = validator as Validator;
      // An undefined property counts as absent (JSON has none; an extension's own call may).
      const checked = withoutUndefined(coerced);
      if (v.validate(checked).valid) return { ok: true, value: coerced };
      full ??= new (loaded as ValidatorModule).Validator(schema as never, draft, false) as Validator;
      return { ok: false, issues: issuesOf(schema, checked, full.validate(checked).errors) };
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
const WRAPPERS = new Set(["properties", "patternProperties", "items", "prefixItems", "additionalItems", "$ref", "$recursiveRef", "allOf", "if", "then", "else", "dependentSchemas", "additionalProperties", "unevaluatedProperties"]);

function describe(errors: { instanceLocation: string; keyword: string; error: string }[]): string {
  const lines = errors
    .filter((e, i) => !WRAPPERS.has(e.keyword) || i === errors.length - 1)
    .map((e) => `${pathOf(e.instanceLocation)}: ${e.keyword === "false" ? "not allowed" : e.error}`);
  return [...new Set(lines)].slice(0, 8).join("; ");
}

/**
 * The validator's output as one issue per failing keyword, at the value it concerns: a missing
 * or unknown property is reported at that property, wrapper records ("property x does not
 * match") are left out, and the common keywords are worded from the schema and the value.
 */
function issuesOf(root: Record<string, unknown>, value: unknown, errors: OutputUnit[]): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  const named = (e: OutputUnit) => /"((?:[^"\\]|\\.)*)"/.exec(e.error)?.[1] ?? "";
  const unknown = new Set<string>();
  const blamed = errors.filter((e) => e.keyword === "anyOf" || e.keyword === "oneOf").map((e) => blame(root, value, e, errors));
  // A value of the wrong type is reported for that alone, not for the node's other keywords.
  const mistyped = errors.filter((e) => e.keyword === "type").map((e) => ({ node: e.keywordLocation.slice(0, -"type".length), at: e.instanceLocation }));
  const besideType = (e: OutputUnit) =>
    e.keyword !== "type" && mistyped.some((t) => e.keywordLocation.startsWith(t.node) && (e.instanceLocation === t.at || e.instanceLocation.startsWith(`${t.at}/`)));
  const otherBranch = (e: OutputUnit) => blamed.some((u) => e.keywordLocation.startsWith(u.prefix) && (u.keep === undefined || !e.keywordLocation.startsWith(u.keep)));
  for (const e of errors) {
    // The boolean-schema record that follows an unknown property names it again: one issue is enough.
    if (e.keyword === "additionalProperties" || e.keyword === "unevaluatedProperties") unknown.add(`${e.instanceLocation}/${named(e)}`);
    if (e.keyword === "oneOf" && !errors.some((x) => x.keywordLocation.startsWith(`${e.keywordLocation}/`))) {
      issues.push({ path: pointerParts(e.instanceLocation), message: "matches more than one alternative" });
    }
    const tagIssue = blamed.find((u) => u.record === e)?.issue;
    if (tagIssue) issues.push(tagIssue);
    if (e.keyword === "anyOf" || e.keyword === "oneOf" || otherBranch(e) || besideType(e)) continue;
    const path = pointerParts(e.instanceLocation);
    const node = at(root, pointerParts(e.keywordLocation).slice(0, -1));
    switch (e.keyword) {
      case "required":
        issues.push({ path: [...path, named(e)], message: "missing" });
        break;
      case "additionalProperties":
      case "unevaluatedProperties":
        if (node?.[e.keyword] === false) issues.push({ path: [...path, named(e)], message: "unknown field" });
        break;
      case "false":
        if (!unknown.has(e.instanceLocation)) issues.push({ path, message: "no value is allowed here" });
        break;
      case "type": {
        const types = node && (Array.isArray(node.type) ? node.type : [node.type]);
        const got = valueAt(value, path);
        issues.push({ path, message: types ? `expected ${types.join(" or ")}, got ${typeName(got)}` : e.error });
        break;
      }
      default: {
        const word = WORDS[e.keyword];
        if (!WRAPPERS.has(e.keyword)) issues.push({ path, message: (node && word?.(node[e.keyword])) || e.error });
      }
    }
  }
  return issues;
}

/** A failed keyword in a few words, from its value in the schema. */
const WORDS: Record<string, (k: unknown) => string> = {
  enum: (k) => `expected one of ${JSON.stringify(k)}`,
  const: (k) => `expected ${JSON.stringify(k)}`,
  minimum: (k) => `expected >= ${k}`,
  maximum: (k) => `expected <= ${k}`,
  exclusiveMinimum: (k) => `expected > ${k}`,
  exclusiveMaximum: (k) => `expected < ${k}`,
  multipleOf: (k) => `expected a multiple of ${k}`,
  minLength: (k) => `expected at least ${k} characters`,
  maxLength: (k) => `expected at most ${k} characters`,
  minItems: (k) => `expected at least ${k} items`,
  maxItems: (k) => `expected at most ${k} items`,
  minProperties: (k) => `expected at least ${k} properties`,
  maxProperties: (k) => `expected at most ${k} properties`,
  uniqueItems: () => "expected unique items",
  not: () => "must not match the schema in not",
  pattern: (k) => `expected to match ${k}`,
  format: (k) => `expected format ${k}`,
};


interface Blame {
  record: OutputUnit;
  /** The union's branch records start with this. */
  prefix: string;
  /** The one branch whose records are kept; none when the issue below replaces them all. */
  keep?: string;
  issue?: SchemaIssue;
}

/**
 * A failed union is blamed on one branch, the one the value was most likely meant for: in a
 * tagged union (each branch an object with a distinct `const` property) the branch its tag
 * names, or the tag itself when it names none; else the branch declaring most of an object's
 * properties, then the one whose first problem lies deepest, then the first.
 */
function blame(root: Record<string, unknown>, value: unknown, record: OutputUnit, errors: OutputUnit[]): Blame {
  const prefix = `${record.keywordLocation}/`;
  const list: unknown[] = at(root, pointerParts(record.keywordLocation)) ?? [];
  const branches = list.map((b) => (isObject(b) && typeof b.$ref === "string" ? at(root, pointerParts(b.$ref)) : b));
  const here = valueAt(value, pointerParts(record.instanceLocation));
  const tag = tagOf(branches);
  if (tag && isObject(here)) {
    const i = tag.values.indexOf(here[tag.key]);
    if (i >= 0) return { record, prefix, keep: `${prefix}${i}/` };
    return { record, prefix, issue: { path: [...pointerParts(record.instanceLocation), tag.key], message: `expected one of ${JSON.stringify(tag.values)}` } };
  }
  let best: { i: number; declared: number; depth: number } | undefined;
  branches.forEach((b, i) => {
    const first = errors.find((e) => e.keywordLocation.startsWith(`${prefix}${i}/`) && !WRAPPERS.has(e.keyword));
    if (!first) return;
    const depth = pointerParts(first.instanceLocation).length + (first.keyword === "required" || first.keyword === "additionalProperties" ? 1 : 0);
    const props = isObject(b) && isObject(b.properties) ? b.properties : {};
    const declared = isObject(here) ? Object.keys(here).filter((k) => Object.hasOwn(props, k)).length : 0;
    if (!best || declared > best.declared || (declared === best.declared && depth > best.depth)) best = { i, declared, depth };
  });
  return { record, prefix, keep: `${prefix}${best?.i ?? 0}/` };
}

/** The property every branch fixes to a distinct primitive `const`, with those values in branch order. */
function tagOf(branches: unknown[]): { key: string; values: unknown[] } | undefined {
  const first = branches[0];
  if (!isObject(first) || !isObject(first.properties)) return undefined;
  for (const key of Object.keys(first.properties)) {
    const values = branches.map((b) => {
      const p = isObject(b) && isObject(b.properties) ? b.properties[key] : undefined;
      return isObject(p) ? p.const : undefined;
    });
    if (values.every((x) => x !== undefined && (typeof x !== "object" || x === null)) && new Set(values).size === values.length) return { key, values };
  }
  return undefined;
}

/** The schema at a keyword location, through the local `$ref`s the location passes. */
function at(root: unknown, parts: string[]): any {
  let node = root;
  for (const p of parts) {
    const next: unknown = Array.isArray(node) ? node[Number(p)] : isObject(node) ? node[p] : undefined;
    node = p === "$ref" && typeof next === "string" ? at(root, pointerParts(next)) : next;
  }
  return node;
}

const valueAt = (value: unknown, parts: string[]): unknown =>
  parts.reduce<unknown>((v, p) => (Array.isArray(v) ? v[Number(p)] : isObject(v) ? v[p] : undefined), value);

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number" && Number.isInteger(v)) return "integer";
  return typeof v;
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
