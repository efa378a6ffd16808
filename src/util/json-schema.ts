/**
 * A small JSON Schema checker for tool arguments from hosts and extensions: type (one or
 * several), properties, required, additionalProperties: false, enum, const, items,
 * minimum/maximum, minLength/maxLength. Returns the first problem, naming its path.
 */
export type JsonSchema = Record<string, unknown>;

export function checkJsonSchema(schema: JsonSchema, value: unknown, path = ""): string | undefined {
  const at = path || "arguments";
  const types = schema.type === undefined ? undefined : Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  if (types && !types.some((t) => isType(t, value))) return `${at}: expected ${types.join(" or ")}, received ${kind(value)}`;
  if (Array.isArray(schema.enum) && !schema.enum.some((e) => JSON.stringify(e) === JSON.stringify(value))) {
    return `${at}: expected one of ${schema.enum.map((e) => JSON.stringify(e)).join(", ")}`;
  }
  if ("const" in schema && JSON.stringify(schema.const) !== JSON.stringify(value)) return `${at}: expected ${JSON.stringify(schema.const)}`;
  if (typeof value === "number") {
    if (typeof schema.minimum === "number" && value < schema.minimum) return `${at}: must be >= ${schema.minimum}`;
    if (typeof schema.maximum === "number" && value > schema.maximum) return `${at}: must be <= ${schema.maximum}`;
  }
  if (typeof value === "string") {
    if (typeof schema.minLength === "number" && value.length < schema.minLength) return `${at}: shorter than ${schema.minLength}`;
    if (typeof schema.maxLength === "number" && value.length > schema.maxLength) return `${at}: longer than ${schema.maxLength}`;
  }
  if (Array.isArray(value) && schema.items && typeof schema.items === "object") {
    for (let i = 0; i < value.length; i++) {
      const err = checkJsonSchema(schema.items as JsonSchema, value[i], `${path}[${i}]`);
      if (err) return err;
    }
  }
  if (value && typeof value === "object" && !Array.isArray(value)) {
    const obj = value as Record<string, unknown>;
    const props = (schema.properties ?? {}) as Record<string, JsonSchema>;
    for (const key of Array.isArray(schema.required) ? (schema.required as string[]) : []) {
      if (!(key in obj)) return `${path ? `${path}.` : ""}${key}: required`;
    }
    for (const [key, v] of Object.entries(obj)) {
      const sub = props[key];
      if (sub) {
        const err = checkJsonSchema(sub, v, path ? `${path}.${key}` : key);
        if (err) return err;
      } else if (schema.additionalProperties === false) return `${path ? `${path}.` : ""}${key}: not allowed`;
    }
  }
  return undefined;
}

function isType(t: string, v: unknown): boolean {
  switch (t) {
    case "object":
      return typeof v === "object" && v !== null && !Array.isArray(v);
    case "array":
      return Array.isArray(v);
    case "integer":
      return Number.isInteger(v);
    case "null":
      return v === null;
    default:
      return typeof v === t;
  }
}

const kind = (v: unknown) => (v === null ? "null" : Array.isArray(v) ? "array" : typeof v);
