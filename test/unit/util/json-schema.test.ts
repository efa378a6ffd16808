import { describe, expect, test } from "bun:test";
import { compileJsonSchema, JsonSchemaError } from "../../../src/util/json-schema.ts";

const check = (schema: Record<string, unknown>, value: unknown) => compileJsonSchema(schema).check(value);

describe("tool argument schemas are checked in full", () => {
  test("combinators: anyOf, oneOf (exactly one), allOf, not", async () => {
    const any = { anyOf: [{ type: "string" }, { type: "number" }] };
    expect(await check(any, 1)).toBeUndefined();
    expect(await check(any, true)).toContain("arguments");
    const one = { oneOf: [{ type: "number" }, { type: "integer" }] };
    expect(await check(one, 1.5)).toBeUndefined();
    expect(await check(one, 2)).toContain("exactly one subschema (2 matches)");
    const all = { allOf: [{ minLength: 2 }, { maxLength: 3 }] };
    expect(await check(all, "ab")).toBeUndefined();
    expect(await check(all, "abcd")).toBeDefined();
    expect(await check({ not: { const: "x" } }, "x")).toBeDefined();
  });

  test("values: enum, const, pattern, minLength, minItems, uniqueItems, numbers", async () => {
    expect(await check({ enum: ["a", "b"] }, "c")).toBeDefined();
    expect(await check({ const: 3 }, 3)).toBeUndefined();
    expect(await check({ type: "string", pattern: "^v\\d+$" }, "v12")).toBeUndefined();
    expect(await check({ type: "string", pattern: "^v\\d+$" }, "12")).toContain("pattern");
    expect(await check({ minLength: 2 }, "a")).toBeDefined();
    expect(await check({ type: "array", minItems: 1 }, [])).toBeDefined();
    expect(await check({ uniqueItems: true }, [1, 1])).toBeDefined();
    expect(await check({ exclusiveMinimum: 0, multipleOf: 0.5 }, 1.5)).toBeUndefined();
    expect(await check({ exclusiveMinimum: 0 }, 0)).toBeDefined();
  });

  test("formats that can be checked are", async () => {
    expect(await check({ format: "email" }, "someone@example.com")).toBeUndefined();
    expect(await check({ format: "email" }, "not an address")).toContain("format");
    expect(await check({ format: "date-time" }, "2026-12-01T07:00:00Z")).toBeUndefined();
    expect(await check({ format: "uuid" }, "nope")).toBeDefined();
  });

  test("$ref into $defs or definitions, and objects: required, additionalProperties, patternProperties", async () => {
    const schema = {
      $defs: { edit: { type: "object", properties: { oldText: { type: "string" } }, required: ["oldText"], additionalProperties: false } },
      definitions: { path: { type: "string", minLength: 1 } },
      type: "object",
      properties: { path: { $ref: "#/definitions/path" }, edits: { type: "array", items: { $ref: "#/$defs/edit" } } },
      required: ["path"],
      patternProperties: { "^x_": { type: "number" } },
      additionalProperties: false,
    };
    expect(await check(schema, { path: "a", edits: [{ oldText: "x" }], x_n: 1 })).toBeUndefined();
    expect(await check(schema, {})).toContain("required");
    expect(await check(schema, { path: "" })).toContain("path");
    expect(await check(schema, { path: "a", edits: [{ oldText: 1 }] })).toContain("edits.0.oldText");
    expect(await check(schema, { path: "a", edits: [{ oldText: "x", extra: 1 }] })).toContain("edits.0.extra: not allowed");
    expect(await check(schema, { path: "a", x_n: "one" })).toContain("x_n");
    expect(await check(schema, { path: "a", other: 1 })).toContain("other: not allowed");
  });

  test("draft-07 schemas (tuple items, dependencies) are read as draft-07", async () => {
    const schema = { $schema: "http://json-schema.org/draft-07/schema#", items: [{ type: "string" }, { type: "number" }], additionalItems: false };
    expect(await check(schema, ["a", 1])).toBeUndefined();
    expect(await check(schema, ["a", 1, 2])).toBeDefined();
    expect(await check({ dependencies: { a: ["b"] } }, { a: 1 })).toBeDefined();
  });

  test("a schema that cannot be checked is refused when compiled, naming the place", () => {
    const refused = (schema: unknown) => {
      try {
        compileJsonSchema(schema);
      } catch (err) {
        expect(err).toBeInstanceOf(JsonSchemaError);
        return (err as Error).message;
      }
      throw new Error(`accepted ${JSON.stringify(schema)}`);
    };
    expect(refused({ type: "object", properties: { a: { type: "string", mustBeNice: true } } })).toBe('#/properties/a/mustBeNice: the keyword "mustBeNice" cannot be checked');
    expect(refused({ properties: { a: { $ref: "#/$defs/missing" } } })).toContain("points at nothing");
    expect(refused({ $ref: "https://example.com/schema.json" })).toContain("remote references are not fetched");
    expect(refused({ $ref: "#nowhere" })).toContain("names no $anchor");
    expect(refused({ format: "credit-card" })).toContain('the format "credit-card" cannot be checked');
    expect(refused({ pattern: "([a-z" })).toContain("is not a regular expression");
    expect(refused({ $dynamicRef: "#meta" })).toContain("$dynamicRef");
    expect(refused({ $schema: "http://example.com/my-meta" })).toContain("not a JSON Schema draft");
    expect(refused([])).toContain("must be a JSON object");
    // Property names are names, not keywords; annotations and x- vendor keys assert nothing.
    expect(() => compileJsonSchema({ properties: { mustBeNice: { type: "string", title: "t", "x-ui": 1 } } })).not.toThrow();
  });

  test("checkNow answers synchronously once ready", async () => {
    const c = compileJsonSchema({ type: "number" });
    await c.ready;
    expect(c.checkNow(1)).toBeUndefined();
    expect(c.checkNow("1")).toContain('Expected "number"');
  });
});
