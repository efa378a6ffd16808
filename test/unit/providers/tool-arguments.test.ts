import { describe, expect, test } from "bun:test";
import { setToolArguments } from "../../../src/providers/transform.ts";
import type { ToolCall } from "../../../src/providers/types.ts";

const parsed = (raw: string): ToolCall => {
  const call: ToolCall = { type: "toolCall", id: "c", name: "t", arguments: { stale: true }, argumentsError: "stale" };
  setToolArguments(call, raw);
  return call;
};

describe("tool-call arguments from the stream", () => {
  test("a JSON object is taken as it is; nothing at all is an empty object", () => {
    expect(parsed('{"path":"a","limit":2}')).toEqual({ type: "toolCall", id: "c", name: "t", arguments: { path: "a", limit: 2 } });
    expect(parsed("  ")).toEqual({ type: "toolCall", id: "c", name: "t", arguments: {} });
  });

  test("cut-off or malformed text is an error quoting its start, never defaults", () => {
    const cut = parsed('{"path": "/etc", "limit": 1');
    expect(cut.arguments).toEqual({});
    expect(cut.argumentsError).toStartWith("the arguments are not valid JSON (");
    expect(cut.argumentsError).toEndWith('They began: {"path": "/etc", "limit": 1');
    expect(parsed('{"a": 1,}').argumentsError).toContain("not valid JSON");
    expect(parsed("42").argumentsError).toContain("expected a JSON object, got number");
    expect(parsed("null").argumentsError).toContain("got null");
    const long = parsed(`{"content": "${"x".repeat(500)}`);
    expect(long.argumentsError).toContain(`… (${13 + 500} characters in all)`);
    expect(long.argumentsError!.length).toBeLessThan(400);
  });

  test("string literals broken the way models break them are mended: raw control characters, stray backslashes", () => {
    expect(parsed('{"content": "line 1\nline 2\tend"}').arguments).toEqual({ content: "line 1\nline 2\tend" });
    expect(parsed('{"pattern": "\\d+", "path": "C:\\dir\\sub"}').arguments).toEqual({ pattern: "\\d+", path: "C:\\dir\\sub" });
    expect(parsed('{"a": "\\u00e9 \\"q\\""}').arguments).toEqual({ a: 'é "q"' });
    // Mending never touches structure: a newline between fields was valid all along, a cut-off stays an error.
    expect(parsed('{"a": 1,\n"b": 2}').arguments).toEqual({ a: 1, b: 2 });
    expect(parsed('{"content": "line 1\nline').argumentsError).toContain("not valid JSON");
  });
});
