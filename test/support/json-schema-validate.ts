/**
 * A JSON Schema validator for the subset src/protocol/gen-schemas.ts emits (draft 2020-12):
 * $ref into the document's $defs, anyOf, oneOf (exactly one), const, enum, type,
 * properties, required, additionalProperties, propertyNames, items, minimum, minLength.
 * Any other keyword throws, so a schema feature this does not check can never pass silently.
 */
type Schema = { readonly [key: string]: unknown } | boolean;

const KNOWN = new Set([
  "$schema",
  "title",
  "description",
  "$defs",
  "$ref",
  "anyOf",
  "oneOf",
  "const",
  "enum",
  "type",
  "properties",
  "required",
  "additionalProperties",
  "propertyNames",
  "items",
  "minimum",
  "minLength",
]);

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

function typeMatches(t: string, v: unknown): boolean {
  if (t === "integer") return Number.isInteger(v);
  if (t === "object") return isObject(v);
  return kind(v) === t;
}

/** The first problem with `value`, naming its path, or undefined when it conforms. */
export function validateJsonSchema(root: Record<string, unknown>, value: unknown): string | undefined {
  const defs = isObject(root.$defs) ? root.$defs : {};

  const check = (schema: Schema, v: unknown, path: string): string | undefined => {
    if (schema === true) return undefined;
    if (schema === false) return `${path}: not allowed`;
    for (const k of Object.keys(schema)) if (!KNOWN.has(k)) throw new Error(`unsupported JSON Schema keyword ${k} at ${path}`);
    if (typeof schema.$ref === "string") {
      const name = schema.$ref.replace(/^#\/\$defs\//, "");
      const target = defs[name];
      if (!isObject(target)) throw new Error(`unresolved $ref ${schema.$ref}`);
      const err = check(target, v, path);
      if (err) return err;
    }
    if (Array.isArray(schema.anyOf)) {
      const errs = schema.anyOf.map((s: Schema) => check(s, v, path));
      if (errs.every((e) => e !== undefined)) return bestOf(errs as string[]);
    }
    if (Array.isArray(schema.oneOf)) {
      const errs = schema.oneOf.map((s: Schema) => check(s, v, path));
      const ok = errs.filter((e) => e === undefined).length;
      if (ok === 0) return bestOf(errs as string[]);
      if (ok > 1) return `${path}: matches ${ok} alternatives of a oneOf`;
    }
    if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(v)) return `${path}: expected ${JSON.stringify(schema.const)}, got ${JSON.stringify(v)}`;
    if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(v))) {
      return `${path}: ${JSON.stringify(v)} is not one of ${JSON.stringify(schema.enum)}`;
    }
    if (schema.type !== undefined) {
      const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
      if (!types.some((t) => typeMatches(t, v))) return `${path}: expected ${types.join(" or ")}, got ${kind(v)}`;
    }
    if (typeof v === "number" && typeof schema.minimum === "number" && v < schema.minimum) return `${path}: below ${schema.minimum}`;
    if (typeof v === "string" && typeof schema.minLength === "number" && v.length < schema.minLength) return `${path}: shorter than ${schema.minLength}`;
    if (Array.isArray(v) && schema.items !== undefined) {
      for (let i = 0; i < v.length; i++) {
        const err = check(schema.items as Schema, v[i], `${path}[${i}]`);
        if (err) return err;
      }
    }
    if (isObject(v)) {
      const props = isObject(schema.properties) ? schema.properties : {};
      for (const key of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
        if (!(key in v)) return `${path}.${key}: required`;
      }
      for (const [key, item] of Object.entries(v)) {
        const sub = props[key] as Schema | undefined;
        const err =
          sub !== undefined
            ? check(sub, item, `${path}.${key}`)
            : schema.additionalProperties !== undefined
              ? check(schema.additionalProperties as Schema, item, `${path}.${key}`)
              : undefined;
        if (err) return err;
      }
    }
    return undefined;
  };
  return check(root, value, "$");
}

/** Of the alternatives' errors, the one that got deepest (the likely intended branch). */
function bestOf(errs: string[]): string {
  return errs.reduce((a, b) => (b.split(":")[0]!.length > a.split(":")[0]!.length ? b : a));
}
