/**
 * A small stand-in for TypeBox's `Type` builders: each returns a plain JSON Schema object,
 * which is all pion needs from an extension's tool parameters (it validates arguments as
 * JSON Schema and sends the schema to the model). Optionality is a symbol-keyed mark, so it
 * never reaches JSON. Static type inference is not provided: extensions are transpiled, not
 * type-checked, at load time.
 */
export type Schema = Record<string, unknown>;

const OPTIONAL = Symbol.for("pion.optional");

const isOptional = (s: Schema): boolean => (s as Record<symbol, unknown>)[OPTIONAL] === true;

function withoutOptional(s: Schema): Schema {
  const copy: Schema = { ...s };
  delete (copy as Record<symbol, unknown>)[OPTIONAL];
  return copy;
}

function objectSchema(properties: Record<string, Schema>, options: Schema = {}): Schema {
  const props: Record<string, Schema> = {};
  const required: string[] = [];
  for (const [key, sub] of Object.entries(properties)) {
    props[key] = withoutOptional(sub);
    if (!isOptional(sub)) required.push(key);
  }
  return { type: "object", properties: props, ...(required.length ? { required } : {}), ...options };
}

function literalType(value: unknown): string | undefined {
  if (value === null) return "null";
  const t = typeof value;
  return t === "string" || t === "number" || t === "boolean" ? t : undefined;
}

export const Type = {
  String: (options: Schema = {}): Schema => ({ type: "string", ...options }),
  Number: (options: Schema = {}): Schema => ({ type: "number", ...options }),
  Integer: (options: Schema = {}): Schema => ({ type: "integer", ...options }),
  Boolean: (options: Schema = {}): Schema => ({ type: "boolean", ...options }),
  Null: (options: Schema = {}): Schema => ({ type: "null", ...options }),
  Any: (options: Schema = {}): Schema => ({ ...options }),
  Unknown: (options: Schema = {}): Schema => ({ ...options }),
  Literal: (value: unknown, options: Schema = {}): Schema => {
    const type = literalType(value);
    return { ...(type ? { type } : {}), const: value, ...options };
  },
  Array: (items: Schema, options: Schema = {}): Schema => ({ type: "array", items: withoutOptional(items), ...options }),
  Tuple: (items: Schema[], options: Schema = {}): Schema => ({
    type: "array",
    prefixItems: items.map(withoutOptional),
    minItems: items.length,
    maxItems: items.length,
    ...options,
  }),
  Object: objectSchema,
  Record: (_key: Schema, value: Schema, options: Schema = {}): Schema => ({
    type: "object",
    additionalProperties: withoutOptional(value),
    ...options,
  }),
  Union: (schemas: Schema[], options: Schema = {}): Schema => ({ anyOf: schemas.map(withoutOptional), ...options }),
  Intersect: (schemas: Schema[], options: Schema = {}): Schema => ({ allOf: schemas.map(withoutOptional), ...options }),
  /** Accepts an array of values or a TS enum object (numeric enums' reverse keys are dropped). */
  Enum: (values: readonly unknown[] | Record<string, unknown>, options: Schema = {}): Schema => {
    const list = Array.isArray(values) ? [...values] : enumValues(values as Record<string, unknown>);
    return { enum: list, ...options };
  },
  Optional: (schema: Schema): Schema => ({ ...schema, [OPTIONAL]: true }),
  Readonly: (schema: Schema): Schema => schema,
  Partial: (schema: Schema): Schema => {
    const props = (schema.properties ?? {}) as Record<string, Schema>;
    const { required: _dropped, ...rest } = schema;
    return { ...rest, properties: props };
  },
};

function enumValues(obj: Record<string, unknown>): unknown[] {
  return Object.entries(obj)
    .filter(([key]) => !/^\d+$/.test(key))
    .map(([, v]) => v);
}

/** The reference's string-enum helper: a plain `{type: "string", enum}` every provider accepts. */
export function StringEnum(values: readonly string[], options: Schema = {}): Schema {
  return { type: "string", enum: [...values], ...options };
}

/**
 * Plain JSON Schema from whatever an extension passed as `parameters`: our builders, a real
 * TypeBox schema (symbol-keyed metadata is dropped by the JSON round trip) or a literal object.
 */
export function toJsonSchema(parameters: unknown): Schema {
  if (parameters === undefined || parameters === null) return { type: "object", properties: {} };
  // TypeBox marks modifiers with "~"-prefixed keys ("~optional", "~readonly"): its own, not JSON Schema.
  const plain: unknown = JSON.parse(JSON.stringify(parameters, (key, value: unknown) => (key.startsWith("~") ? undefined : value)));
  if (!plain || typeof plain !== "object" || Array.isArray(plain)) throw new Error("tool parameters must be a JSON Schema object");
  return plain as Schema;
}
