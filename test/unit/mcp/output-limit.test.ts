import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { limitContent, MCP_TEXT_LIMIT_BYTES } from "../../../src/mcp/output-limit.ts";
import { cutMiddle } from "../../../src/util/middle-cut.ts";
import { limitResult } from "../../../src/mcp/tools.ts";

describe("MCP result limit", () => {
  test("text within 20 KB passes unchanged", () => {
    const content = [{ type: "text" as const, text: "x".repeat(MCP_TEXT_LIMIT_BYTES) }];
    expect(limitContent(content).content).toBe(content);
  });

  test("longer text keeps its start and end around a marker; the whole text is in a 0600 temp file named in the result", () => {
    const text = `${"a".repeat(15_000)}MIDDLE${"b".repeat(15_000)}`;
    const r = limitResult({ content: [{ type: "text", text }, { type: "image", data: "AAAA", mimeType: "image/png" }], details: { structuredContent: { n: 1 } } });
    const path = (r.details as { fullOutputPath: string }).fullOutputPath;
    expect(readFileSync(path, "utf8")).toBe(text);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const shown = (r.content[0] as { text: string }).text;
    expect(shown).toContain(path);
    expect(shown).not.toContain("MIDDLE");
    expect(shown).toContain(`…${30_006 - MCP_TEXT_LIMIT_BYTES} chars truncated…`);
    expect(shown.startsWith("Output cut")).toBe(true);
    expect(r.content[1]).toEqual({ type: "image", data: "AAAA", mimeType: "image/png" });
    expect((r.details as { structuredContent: unknown }).structuredContent).toEqual({ n: 1 });
  });

  test("the cut never splits a character", () => {
    const cut = cutMiddle("é".repeat(100), 51);
    expect(cut).toMatch(/^é+…\d+ chars truncated…é+$/);
    const [head, tail] = cut.split(/…\d+ chars truncated…/);
    const removed = Number(/…(\d+) chars/.exec(cut)![1]);
    expect(head!.length + tail!.length + removed).toBe(100);
  });
});
