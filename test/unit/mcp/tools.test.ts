import { describe, expect, test } from "bun:test";
import { splitMcpToolSpec } from "../../../src/mcp/select.ts";
import { toolNames, toToolResult } from "../../../src/mcp/tools.ts";

describe("mcp tool names", () => {
  test("mcp__<server>__<tool> with other characters as _, collisions and long names hashed", () => {
    const names = toolNames("my-server", ["get-sum", "get_sum", "echo", "x".repeat(80)]);
    expect(names.get("echo")).toBe("mcp__my_server__echo");
    const a = names.get("get-sum")!;
    const b = names.get("get_sum")!;
    expect(a).not.toBe(b);
    expect(a).toMatch(/^mcp__my_server__get_sum_[0-9a-f]{6}$/);
    expect(b).toMatch(/^mcp__my_server__get_sum_[0-9a-f]{6}$/);
    expect(names.get("x".repeat(80))!.length).toBeLessThanOrEqual(64);
  });
});

describe("mcp results", () => {
  test("text, image, resources, structured content and isError", () => {
    const r = toToolResult({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a.txt", text: "file text" } },
        { type: "resource", resource: { uri: "file:///b.bin", blob: "AAAA", mimeType: "application/octet-stream" } },
        { type: "resource_link", uri: "file:///c", name: "c" },
      ],
      structuredContent: { n: 1 },
      isError: true,
    });
    expect(r).toEqual({
      content: [
        { type: "text", text: "hello" },
        { type: "image", data: "AAAA", mimeType: "image/png" },
        { type: "text", text: "file text" },
        { type: "text", text: "[resource file:///b.bin (application/octet-stream): binary content not shown]" },
        { type: "text", text: "[resource link: file:///c (c)]" },
      ],
      details: { structuredContent: { n: 1 } },
      isError: true,
    });
    expect(toToolResult({ content: [], structuredContent: { a: 2 } }).content).toEqual([{ type: "text", text: '{"a":2}' }]);
  });
});

describe("--tools with MCP entries", () => {
  test("no MCP entry: every MCP tool, the spec unchanged", () => {
    const s = splitMcpToolSpec("read,bash");
    expect(s.rest).toBe("read,bash");
    expect(s.mcp("mcp__a__b")).toBe(true);
    expect(splitMcpToolSpec(undefined).rest).toBeUndefined();
  });
  test("plain MCP entries are an allowlist; -mcp__ removes", () => {
    const s = splitMcpToolSpec("read,mcp__gh__*,-mcp__gh__delete");
    expect(s.rest).toEqual(["read"]);
    expect(s.mcp("mcp__gh__search")).toBe(true);
    expect(s.mcp("mcp__gh__delete")).toBe(false);
    expect(s.mcp("mcp__other__x")).toBe(false);
    expect(splitMcpToolSpec("mcp__gh__x").rest).toBe("");
    const minus = splitMcpToolSpec(["+ls", "-mcp__gh__*"]);
    expect(minus.rest).toEqual(["+ls"]);
    expect(minus.mcp("mcp__gh__a")).toBe(false);
    expect(minus.mcp("mcp__x__a")).toBe(true);
  });
});

describe("--tools with codemode", () => {
  test("the reference's example: read, codemode and one server's tools", () => {
    const spec = splitMcpToolSpec("read,codemode,mcp__radius__*");
    expect(spec.rest).toEqual(["read"]);
    expect(["codemode", "mcp__radius__search", "mcp__other__x", "tool_search"].filter(spec.mcp)).toEqual(["codemode", "mcp__radius__search"]);
  });
});

describe("resource links", () => {
  test("name the server and the tool that reads them", () => {
    const r = toToolResult({ content: [{ type: "resource_link", uri: "demo://a", name: "a" }] }, "everything");
    expect(r.content[0]).toEqual({ type: "text", text: '[resource link: demo://a (a); read it with read_mcp_resource {"server": "everything", "uri": "demo://a"}]' });
  });
});
