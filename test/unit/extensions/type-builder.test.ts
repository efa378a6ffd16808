import { expect, test } from "bun:test";
import { StringEnum, toJsonSchema, Type } from "../../../src/extensions/type-builder.ts";

test("Type builders produce plain JSON Schema; Optional only affects `required`", () => {
  const schema = Type.Object(
    {
      path: Type.String({ description: "file" }),
      limit: Type.Optional(Type.Integer({ minimum: 1 })),
      tags: Type.Array(Type.String()),
      mode: Type.Union([Type.Literal("a"), Type.Literal(2)]),
      kind: Type.Enum({ One: "one", Two: "two" }),
      level: StringEnum(["low", "high"]),
      flag: Type.Optional(Type.Boolean()),
      extra: Type.Record(Type.String(), Type.Number()),
    },
    { additionalProperties: false },
  );
  expect(JSON.parse(JSON.stringify(schema))).toEqual(schema);
  expect(toJsonSchema(schema)).toEqual({
    type: "object",
    properties: {
      path: { type: "string", description: "file" },
      limit: { type: "integer", minimum: 1 },
      tags: { type: "array", items: { type: "string" } },
      mode: { anyOf: [{ type: "string", const: "a" }, { type: "number", const: 2 }] },
      kind: { enum: ["one", "two"] },
      level: { type: "string", enum: ["low", "high"] },
      flag: { type: "boolean" },
      extra: { type: "object", additionalProperties: { type: "number" } },
    },
    required: ["path", "tags", "mode", "kind", "level", "extra"],
    additionalProperties: false,
  });
});

test("toJsonSchema drops symbol-keyed metadata and defaults a missing schema to an empty object", () => {
  const withSymbol = { type: "string", [Symbol.for("TypeBox.Kind")]: "String" };
  expect(Object.getOwnPropertySymbols(toJsonSchema(withSymbol))).toEqual([]);
  expect(toJsonSchema(undefined)).toEqual({ type: "object", properties: {} });
  expect(() => toJsonSchema("nope")).toThrow("JSON Schema object");
});
