import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { formatOutcome, parseOptions, toImage } from "../../../src/codemode/script-output.ts";
import { storeOnBranch } from "../../../src/codemode/script-store.ts";
import { scriptReach } from "../../../src/codemode/tool.ts";
import type { Entry } from "../../../src/store/entries.ts";

const PNG = "iVBORw0KGgo=";

describe("codemode scripts", () => {
  test("the options line: first line only, known keys, positive integers", () => {
    expect(parseOptions('// @options: {"max_output_tokens": 50, "timeout_ms": 1000}\nreturn 1')).toEqual({ maxOutputTokens: 50, timeoutMs: 1000 });
    expect(parseOptions("return 1")).toEqual({ maxOutputTokens: 10_000 });
    expect(() => parseOptions('return 1\n// @options: {"timeout_ms": 5}')).toThrow("first line");
    expect(() => parseOptions('// @options: {"speed": 1}')).toThrow('unknown option "speed"');
    expect(() => parseOptions('// @options: {"timeout_ms": -1}')).toThrow("positive integer");
    expect(() => parseOptions("// @options: nope")).toThrow("JSON object");
  });

  test("image() takes data URLs, {image_url} and image blocks of the four formats", () => {
    expect(toImage(`data:image/png;base64,${PNG}`)).toEqual({ type: "image", mimeType: "image/png", data: PNG });
    expect(toImage({ image_url: { url: `data:image/webp;base64,${PNG}` } }).mimeType).toBe("image/webp");
    expect(toImage({ type: "image", data: PNG, mimeType: "image/gif" }).mimeType).toBe("image/gif");
    expect(() => toImage("https://example.com/a.png")).toThrow("remote URLs");
    expect(() => toImage({ type: "image", data: PNG, mimeType: "image/tiff" })).toThrow("not PNG");
  });

  test("the result: header, numbered texts, images saved, console block, the error; long output cut with the whole in a file", () => {
    const r = formatOutcome({ ok: false, error: "Error: no", items: [{ kind: "text", text: "a" }, { kind: "image", value: { type: "image", data: PNG, mimeType: "image/png" } }, { kind: "text", text: "b" }], console: ["l1", "l2"], writes: {} }, 1234, { maxOutputTokens: 10_000 });
    const text = (r.content[0] as { text: string }).text;
    expect(text).toMatch(/^Script failed in 1\.23 s\n==> text 1\/2 <==\na\n\[image: \S+\.png\]\n==> text 2\/2 <==\nb\n<console_output>\nl1\nl2\n<\/console_output>\nScript error: Error: no$/);
    expect(r.content[1]).toEqual({ type: "image", data: PNG, mimeType: "image/png" });
    expect(r.isError).toBe(true);
    const long = formatOutcome({ ok: true, items: [{ kind: "text", text: "x".repeat(1000) }], console: [], writes: {} }, 5, { maxOutputTokens: 50 });
    expect((long.content[0] as { text: string }).text).toContain("chars truncated");
    expect(readFileSync(long.fullOutputPath!, "utf8")).toContain("x".repeat(1000));
  });

  test("the store of a branch folds its codemode-store entries; null deletes", () => {
    const e = (writes: Record<string, unknown>): Entry => ({ type: "custom", id: "x", parentId: null, timestamp: "", customType: "codemode-store", data: { writes } }) as Entry;
    expect(storeOnBranch([e({ a: 1, b: 2 }), e({ b: null, c: [3] })])).toEqual({ a: 1, c: [3] });
  });

  test("a script waits for the servers it names, or all of them when it searches", () => {
    expect(scriptReach("await tools.mcp__docs__search({}); tools.mcp__dev_radius__x()")).toEqual(["docs", "dev_radius"]);
    expect(scriptReach("ALL_TOOLS.filter(Boolean)")).toBe("all");
  });
});

describe("tool declarations for scripts", () => {
  test("a JSON Schema as a TypeScript type, descriptions as comments", async () => {
    const { toolDeclaration } = await import("../../../src/codemode/declaration.ts");
    const d = toolDeclaration("mcp__x__search", "Search things", {
      type: "object",
      properties: { query: { type: "string", description: "What to find" }, limit: { type: "integer" }, mode: { enum: ["a", "b"] }, tags: { type: "array", items: { type: ["string", "null"] } }, "odd-key": { type: "boolean" } },
      required: ["query"],
    }, "CallToolResult");
    expect(d).toBe(
      '/**\n * Search things\n */\ndeclare function mcp__x__search(args: {\n  /** What to find */\n  query: string;\n  limit?: number;\n  mode?: "a" | "b";\n  tags?: (string | null)[];\n  "odd-key"?: boolean;\n}): Promise<CallToolResult>;',
    );
  });
});
