import { describe, expect, test } from "bun:test";
import { virtualModule } from "../../../src/extensions/virtual-modules.ts";
import { stripAnsi } from "../../../src/extensions/text-helpers.ts";

// Through the module map extensions import, so a helper swapped for a stand-in fails here.
type Truncation = { content: string; truncated: boolean; lastLinePartial: boolean; firstLineExceedsLimit: boolean; totalLines: number };
const agent = virtualModule("@earendil-works/pi-coding-agent") as Record<string, (...a: never[]) => unknown>;
const tui = virtualModule("@earendil-works/pi-tui") as Record<string, (...a: never[]) => unknown>;
const truncateHead = agent.truncateHead as unknown as (t: string, o?: { maxLines?: number; maxBytes?: number }) => Truncation;
const truncateTail = agent.truncateTail as unknown as (t: string, o?: { maxLines?: number; maxBytes?: number }) => Truncation;
const truncateLine = agent.truncateLine as unknown as (l: string, max?: number) => { text: string; wasTruncated: boolean };
const fuzzyFilter = tui.fuzzyFilter as unknown as <T>(items: T[], q: string, get?: (i: T) => string) => T[];
const wrap = tui.wrapTextWithAnsi as unknown as (t: string, w: number) => string[];
const visibleWidth = tui.visibleWidth as unknown as (s: string) => number;
const truncateToWidth = tui.truncateToWidth as unknown as (s: string, w: number, e?: string) => string;

const lines = Array.from({ length: 10 }, (_, i) => `line ${i + 1}`).join("\n");

describe("truncation helpers given to extensions", () => {
  test("truncateHead keeps the first lines, truncateTail the last", () => {
    const head = truncateHead(lines, { maxLines: 3 });
    const tail = truncateTail(lines, { maxLines: 3 });
    expect(head).toMatchObject({ content: "line 1\nline 2\nline 3", truncated: true, totalLines: 10 });
    expect(tail).toMatchObject({ content: "line 8\nline 9\nline 10", truncated: true, totalLines: 10 });
    expect(truncateTail("short")).toMatchObject({ content: "short", truncated: false });
  });

  test("a cut never splits a UTF-8 character", () => {
    // "é" is 2 bytes: 5 bytes of "éééé" would end inside the third one.
    const head = truncateHead("éééé", { maxBytes: 5 });
    expect(head.content).toBe("éé");
    expect(head.firstLineExceedsLimit).toBe(true);
    expect(Buffer.from(head.content).toString()).toBe(head.content);
    const tail = truncateTail("ab😀😀", { maxBytes: 6 });
    expect(tail.content).toBe("😀");
    expect(tail.lastLinePartial).toBe(true);
  });

  test("truncateLine answers the reference's shape", () => {
    expect(truncateLine("abc", 5)).toEqual({ text: "abc", wasTruncated: false });
    const cut = truncateLine("x".repeat(600));
    expect(cut.wasTruncated).toBe(true);
    expect(cut.text.startsWith("x".repeat(500))).toBe(true);
    expect(cut.text).not.toContain("x".repeat(501));
  });
});

describe("TUI text helpers", () => {
  test("fuzzyFilter keeps only matching items, best first; every token must match", () => {
    const items = ["src/session/session.ts", "README.md", "src/rpc/server.ts", "test/e2e/sessions.test.ts"];
    expect(fuzzyFilter(items, "zzz")).toEqual([]);
    expect(fuzzyFilter(items, "")).toEqual(items);
    expect(fuzzyFilter(items, "server")).toEqual(["src/rpc/server.ts"]);
    expect(fuzzyFilter(items, "sess")).toEqual(["src/session/session.ts", "test/e2e/sessions.test.ts"]);
    expect(fuzzyFilter(items, "test sess")).toEqual(["test/e2e/sessions.test.ts"]);
    const objs = [{ name: "alpha" }, { name: "beta" }];
    expect(fuzzyFilter(objs, "bt", (o) => o.name)).toEqual([{ name: "beta" }]);
  });

  test("wrapTextWithAnsi wraps to the width, splits long words, keeps line breaks and reopens the style", () => {
    expect(wrap("the quick brown fox jumps", 10)).toEqual(["the quick", "brown fox", "jumps"]);
    expect(wrap("abcdefghij", 4)).toEqual(["abcd", "efgh", "ij"]);
    expect(wrap("one\ntwo three", 5)).toEqual(["one", "two", "three"]);
    const red = "\x1b[31m";
    const out = wrap(`${red}red words here\x1b[0m plain`, 9);
    for (const l of out) expect(visibleWidth(l)).toBeLessThanOrEqual(9);
    expect(out.map(stripAnsi)).toEqual(["red words", "here", "plain"]);
    expect(out[1]!.startsWith(red)).toBe(true);
    expect(out[2]!.startsWith(red)).toBe(false);
  });

  test("widths count columns, not escape sequences; wide characters take two", () => {
    expect(visibleWidth("\x1b[1mbold\x1b[0m")).toBe(4);
    expect(visibleWidth("日本")).toBe(4);
    expect(stripAnsi(truncateToWidth("\x1b[1mhello world\x1b[0m", 6))).toBe("hello…");
    expect(truncateToWidth("short", 10)).toBe("short");
  });
});
