/** Schemas with argument objects for the validateToolArguments differential test (surface-ai-validate.test.ts), and both sides' pi-ai. */
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

type Rec = Record<string, unknown>;
export type Fn = (...args: any[]) => any;
export type Mod = Record<string, any>;

export const REFERENCE = process.env.PION_REFERENCE_PKG;
/** pion's pi-ai as an extension sees it, and the reference's. */
export const pion = referenceModules()["pi-ai"] as Mod;
export const reference = async (): Promise<Mod> => (await import(join(REFERENCE!, "../pi-ai/dist/index.js"))) as Mod;

export const obj = (properties: Rec, required: string[] = Object.keys(properties), extra: Rec = {}): Rec => ({ type: "object", properties, required, ...extra });
export const closed = (properties: Rec, required?: string[]): Rec => obj(properties, required, { additionalProperties: false });

/** Each schema with argument objects for it: coercions, missing and unknown fields, nesting, unions, enums, formats. */
export const CASES: [string, Rec, unknown[]][] = [
  ["numbers", obj({ n: { type: "number" }, i: { type: "integer" } }), [
    { n: "42", i: "7" }, { n: 42, i: 7 }, { n: "4.5", i: "3.5" }, { n: "", i: "" }, { n: " 12 ", i: "0x10" }, { n: "abc", i: 1 },
    { n: true, i: false }, { n: "true", i: "false" }, { n: null, i: null }, { n: "1e3", i: "1e2" }, { n: [1], i: { a: 1 } }, { n: "Infinity", i: 1 }, { n: "12n", i: "9n" },
  ]],
  ["strings and booleans", obj({ s: { type: "string" }, b: { type: "boolean" } }), [
    { s: 1, b: "true" }, { s: true, b: "FALSE" }, { s: null, b: null }, { s: "x", b: 1 }, { s: "x", b: 0 }, { s: "x", b: "1" }, { s: "x", b: "yes" },
    { s: { a: 1 }, b: 2 }, { s: [1], b: "0" }, { s: 1.5, b: true },
  ]],
  ["arrays", obj({ a: { type: "array", items: { type: "string" } }, n: { type: "array", items: { type: "number" }, minItems: 1, maxItems: 2 } }), [
    { a: "one", n: "3" }, { a: ["x", 1], n: [1, "2"] }, { a: [], n: [] }, { a: 5, n: [1, 2, 3] }, { a: null, n: null }, { a: { x: 1 }, n: ["q"] },
  ]],
  ["tuples", obj({ t: { type: "array", prefixItems: [{ type: "number" }, { type: "string" }], items: false } }), [
    { t: ["1", 2] }, { t: "1" }, { t: [1, "a", 3] }, { t: [1] },
  ]],
  ["optional nulls", obj({ req: { type: "string" }, opt: { type: "number" }, nul: { type: ["number", "null"] }, any: {} }, ["req"]), [
    { req: "a", opt: null }, { req: null, opt: null }, { req: "a", nul: null, any: null }, { req: "a", nul: "5" }, { req: "a", nul: "" }, { req: "a", opt: undefined },
  ]],
  ["missing and unknown fields", closed({ path: { type: "string" }, offset: { type: "integer", minimum: 1 } }, ["path"]), [
    {}, { path: "a", extra: 1 }, { offset: "0" }, { path: "a", offset: "10" }, { path: "a", offset: 0, x: 1, y: 2 }, [], "text", null, 3,
  ]],
  ["required but undeclared", closed({ n: { type: "number" } }, ["n", "q"]), [{ n: "1" }, { n: "1", q: 2 }]],
  ["nested objects", obj({ edits: { type: "array", items: closed({ oldText: { type: "string" }, newText: { type: "string" }, line: { type: "integer" } }, ["oldText", "newText"]) }, opts: obj({ depth: { type: "number" }, deep: obj({ flag: { type: "boolean" } }) }, []) }, ["edits"]), [
    { edits: [{ oldText: "a", newText: 1, line: "3" }] }, { edits: { oldText: "a", newText: "b" } }, { edits: [{ oldText: "a" }, { newText: "b", z: 1 }] },
    { edits: [], opts: { depth: "2", deep: { flag: "true" } } }, { edits: [], opts: { deep: { flag: "maybe" } } }, { edits: [], opts: "x" },
  ]],
  ["unions", obj({ u: { anyOf: [{ type: "number" }, { type: "boolean" }] }, v: { anyOf: [{ type: "string" }, { type: "array", items: { type: "string" } }] }, w: { oneOf: [{ type: "integer" }, { type: "null" }] } }, ["u"]), [
    { u: "5" }, { u: "true" }, { u: "zz" }, { u: 1, v: 3 }, { u: 1, v: ["a", 2] }, { u: 1, w: "3" }, { u: 1, w: "" }, { u: 1, w: "x" }, { u: null },
  ]],
  ["tagged union", obj({ block: { anyOf: [closed({ kind: { const: "text" }, text: { type: "string" } }), closed({ kind: { const: "image" }, width: { type: "integer", minimum: 0 } })] } }), [
    { block: { kind: "text", text: 1 } }, { block: { kind: "image", width: "3" } }, { block: { kind: "image", width: -1 } }, { block: { kind: "text" } },
  ]],
  ["enums and consts", obj({ mode: { type: "string", enum: ["text", "binary"] }, level: { enum: [1, 2, 3] }, on: { const: true }, tag: { const: "v1" } }, []), [
    { mode: "text", level: "2", on: "true", tag: "v1" }, { mode: "TEXT" }, { level: "4" }, { level: 2.0, on: 1 }, { on: "false" }, { tag: 1 }, { mode: 1 },
  ]],
  ["string limits", obj({ s: { type: "string", minLength: 2, maxLength: 4, pattern: "^[a-z]+$" } }), [{ s: "abc" }, { s: "a" }, { s: "abcdef" }, { s: "AB" }, { s: 12 }]],
  ["number limits", obj({ n: { type: "number", exclusiveMinimum: 0, maximum: 10, multipleOf: 0.5 }, m: { type: "integer", exclusiveMaximum: 5, minimum: -2 } }, []), [
    { n: "0" }, { n: "10.5" }, { n: "2.25" }, { n: 3 }, { m: "5" }, { m: "-3" }, { m: "4.9" },
  ]],
  ["formats", obj({ email: { type: "string", format: "email" }, when: { type: "string", format: "date-time" }, id: { type: "string", format: "uuid" }, url: { type: "string", format: "uri" } }, []), [
    { email: "a@b.co" }, { email: "nope" }, { when: "2024-01-02T03:04:05Z" }, { when: "yesterday" }, { id: "123e4567-e89b-12d3-a456-426614174000" }, { id: 5 }, { url: "https://x.y/z" }, { url: "::" },
  ]],
  ["maps and patterns", obj({ env: { type: "object", additionalProperties: { type: "number" } }, tags: { type: "object", patternProperties: { "^x-": { type: "boolean" } }, additionalProperties: false } }, []), [
    { env: { A: "1", B: 2 } }, { env: { A: "one" } }, { tags: { "x-a": "true", "x-b": 0 } }, { tags: { y: true } },
  ]],
  ["refs", { type: "object", $defs: { point: closed({ x: { type: "number" }, y: { type: "number" } }) }, properties: { from: { $ref: "#/$defs/point" }, to: { $ref: "#/$defs/point" } }, required: ["from"] }, [
    { from: { x: "1", y: "2" } }, { from: { x: "a", y: 1 }, to: { x: 1 } }, { from: null }, { from: { x: 1, y: 2 }, to: null },
  ]],
  ["allOf", { allOf: [obj({ a: { type: "number" } }), obj({ b: { type: "string" } })] }, [{ a: "1", b: 2 }, { a: "x" }]],
  ["type array", obj({ v: { type: ["integer", "string"] }, w: { type: ["boolean", "null"] } }, []), [{ v: "3" }, { v: 3.5 }, { v: true }, { w: "true" }, { w: "" }, { w: 5 }]],
  ["empty schema", { type: "object" }, [{}, { anything: [1, { b: null }] }, "x"]],
  ["required nulls", obj({ n: { type: "number" }, s: { type: "string" }, b: { type: "boolean" }, a: { type: "array", items: { type: "number" } } }), [{ n: null, s: null, b: null, a: null }]],
  ["nested arrays", obj({ grid: { type: "array", items: { type: "array", items: { type: "integer" } } } }), [{ grid: "1" }, { grid: [["1", 2], "3"] }, { grid: [[{}]] }]],
  ["draft-7 tuple", obj({ t: { type: "array", items: [{ type: "boolean" }, { type: "number" }], additionalItems: { type: "string" } } }), [{ t: ["true", "2", 3] }, { t: "true" }]],
  ["recursive", { $defs: { node: obj({ name: { type: "string" }, children: { type: "array", items: { $ref: "#/$defs/node" } } }, ["name"]) }, $ref: "#/$defs/node" }, [
    { name: 1, children: [{ name: 2 }, { name: "c", children: { name: 3 } }] }, { name: "a", children: [{ children: [] }] }, { name: "a", children: [5] },
  ]],
  ["enum in a union", obj({ v: { anyOf: [{ type: "string", enum: ["auto", "off"] }, { type: "integer", minimum: 1 }] } }), [{ v: "auto" }, { v: "5" }, { v: "0" }, { v: "on" }, { v: 2.5 }]],
  ["nullable", obj({ v: { anyOf: [{ type: "number" }, { type: "null" }] }, w: { anyOf: [{ type: "string" }, { type: "null" }] } }, []), [{ v: null, w: null }, { v: "null", w: 1 }, { v: "", w: "" }, { v: "3" }]],
  ["oneOf overlap", obj({ v: { oneOf: [{ type: "number" }, { type: "integer" }] } }), [{ v: 3 }, { v: 3.5 }, { v: "x" }]],
  ["not and conditionals", obj({ v: { not: { type: "string" } }, k: { type: "string" }, n: { type: "number" } }, ["v"], { if: { properties: { k: { const: "num" } } }, then: { required: ["n"] } }), [{ v: "s" }, { v: 1, k: "num" }, { v: 1, k: "num", n: "2" }]],
  ["unique and counts", obj({ u: { type: "array", uniqueItems: true, items: { type: "number" } }, o: { type: "object", minProperties: 1, maxProperties: 2 } }, []), [{ u: [1, "1"] }, { u: [1, 2] }, { o: {} }, { o: { a: 1, b: 2, c: 3 } }]],
];

const LOOSE = ["42", "4.5", "", " ", "true", "FALSE", "null", "undefined", "0", "1", "-3", "12n", "abc", "a@b.co", 0, 1, 2.5, -1, true, false, null, "x-a", "text", "image", "v1"];
const KEYS = ["a", "n", "s", "kind", "text", "x", "y", "name", "children"];

/** `count` argument objects per case, each a case's own with some properties replaced by loose values (seeded, so every run is the same). */
export function* looseArguments(count: number, seed = 7): Generator<[string, Rec, Rec]> {
  let state = seed;
  const rnd = () => (state = (state * 1103515245 + 12345) % 2147483648) / 2147483648;
  const pick = <T>(list: T[]): T => list[Math.floor(rnd() * list.length)]!;
  const value = (depth: number): unknown => {
    const k = rnd();
    if (depth > 2 || k < 0.6) return pick(LOOSE);
    if (k < 0.8) return Array.from({ length: Math.floor(rnd() * 3) }, () => value(depth + 1));
    return Object.fromEntries(KEYS.filter(() => rnd() < 0.3).map((key) => [key, value(depth + 1)]));
  };
  for (const [label, parameters, list] of CASES) {
    for (const base of list) {
      for (let i = 0; i < count; i++) {
        const args: Rec = base && typeof base === "object" && !Array.isArray(base) ? { ...(base as Rec) } : {};
        for (const key of Object.keys((parameters.properties as Rec | undefined) ?? {})) if (rnd() < 0.5) args[key] = value(0);
        yield [label, parameters, args];
      }
    }
  }
}
