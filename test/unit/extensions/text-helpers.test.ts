import { describe, expect, test } from "bun:test";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { stripAnsi } from "../../../src/extensions/text-helpers.ts";
import { textCalls, type TextCall } from "../../support/text-calls.ts";
import { textCorpus, WIDTHS } from "../../support/text-corpus.ts";

const REF = process.env.PION_REFERENCE_PKG;

// Through the module map extensions import, so a helper swapped for a stand-in fails here.
type Truncation = { content: string; truncated: boolean; lastLinePartial: boolean; firstLineExceedsLimit: boolean; totalLines: number };
const agent = referenceModules()["pi-coding-agent"] as Record<string, (...a: never[]) => unknown>;
const tui = referenceModules()["pi-tui"] as Record<string, (...a: never[]) => unknown>;
const truncateHead = agent.truncateHead as unknown as (t: string, o?: { maxLines?: number; maxBytes?: number }) => Truncation;
const truncateTail = agent.truncateTail as unknown as (t: string, o?: { maxLines?: number; maxBytes?: number }) => Truncation;
const truncateLine = agent.truncateLine as unknown as (l: string, max?: number) => { text: string; wasTruncated: boolean };
const fuzzyFilter = tui.fuzzyFilter as unknown as <T>(items: T[], q: string, get?: (i: T) => string) => T[];
const wrap = tui.wrapTextWithAnsi as unknown as (t: string, w: number) => string[];
const visibleWidth = tui.visibleWidth as unknown as (s: string) => number;
const truncateToWidth = tui.truncateToWidth as unknown as (s: string, w: number, e?: string, pad?: boolean) => string;

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
    // A first line over maxBytes is not kept at all ("é" is 2 bytes), as in the reference.
    const head = truncateHead("éééé\nnext", { maxBytes: 5 });
    expect(head).toMatchObject({ content: "", truncatedBy: "bytes", firstLineExceedsLimit: true, outputLines: 0 });
    const tail = truncateTail("ab😀😀", { maxBytes: 6 });
    expect(tail.content).toBe("😀");
    expect(tail.lastLinePartial).toBe(true);
  });

  test("truncateLine answers the reference's shape", () => {
    expect(truncateLine("abc", 5)).toEqual({ text: "abc", wasTruncated: false });
    const cut = truncateLine("x".repeat(600));
    expect(cut.wasTruncated).toBe(true);
    expect(cut.text).toBe(`${"x".repeat(500)}... [truncated]`);
    // Never half of a surrogate pair.
    expect(truncateLine("a😀b", 2).text).toBe("a... [truncated]");
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
    expect(visibleWidth("a\tb")).toBe(5);
    expect(visibleWidth("👨‍👩‍👧 e\u0301")).toBe(4);
    expect(stripAnsi(truncateToWidth("\x1b[1mhello world\x1b[0m", 6))).toBe("hel...");
    expect(truncateToWidth("hello world", 6, "…")).toBe("hello\x1b[0m…\x1b[0m");
    expect(truncateToWidth("abc", 6, "…", true)).toBe("abc   ");
    expect(truncateToWidth("short", 10)).toBe("short");
  });
});

const corpus = textCorpus(320);

/** The calls whose answers differ (at most a few, to read), with both answers; a stall fails at once. */
async function differences(calls: TextCall[]) {
  const [ours, theirs] = await Promise.all([textCalls("pion", calls, 40_000), textCalls(REF!, calls, 40_000)]);
  expect(theirs.stalled).toBeUndefined();
  expect(ours.stalled).toBeUndefined();
  const out: { call: TextCall; reference: unknown; pion: unknown }[] = [];
  calls.forEach((call, i) => {
    if (out.length < 5 && JSON.stringify(ours.results[i]) !== JSON.stringify(theirs.results[i])) out.push({ call, reference: theirs.results[i], pion: ours.results[i] });
  });
  return out;
}

const LONG = 60_000;

describe("the text helpers answer as the reference's over a generated corpus", () => {
  (REF ? test : test.skip)("visibleWidth and wrapTextWithAnsi at every width", async () => {
    const calls: TextCall[] = corpus.map((s) => ["visibleWidth", s]);
    for (const s of corpus) for (const w of WIDTHS) calls.push(["wrapTextWithAnsi", s, w]);
    for (const w of [-1, 2.5, 1e9]) calls.push(["wrapTextWithAnsi", corpus[40]!, w]);
    expect(calls.length).toBeGreaterThan(4000);
    expect(await differences(calls)).toEqual([]);
  }, LONG);

  (REF ? test : test.skip)("truncateToWidth with the default, a wide, an empty and a styled ellipsis, padded or not", async () => {
    const calls: TextCall[] = [];
    for (const s of corpus)
      for (const w of WIDTHS) {
        calls.push(["truncateToWidth", s, w]);
        if (w % 2 === 1) calls.push(["truncateToWidth", s, w, "…", true], ["truncateToWidth", s, w, "", false]);
        if (w < 6) calls.push(["truncateToWidth", s, w, "中…", true], ["truncateToWidth", s, w, "\x1b[2m...\x1b[0m"]);
      }
    expect(await differences(calls)).toEqual([]);
  }, LONG);

  (REF ? test : test.skip)("truncateToVisualLines keeps the first or last wrapped lines, with padding", async () => {
    const calls: TextCall[] = [];
    for (const s of corpus.slice(0, 160))
      for (const w of [0, 1, 2, 4, 9, 30])
        for (const max of [0, 1, 3]) {
          calls.push(["truncateToVisualLines", s, max, w]);
          calls.push(["truncateToVisualLines", s, max, w, 1, "start"], ["truncateToVisualLines", s, max, w, 3, "end"]);
        }
    expect(await differences(calls)).toEqual([]);
  }, LONG);

  (REF ? test : test.skip)("truncateHead, truncateTail and truncateLine at line and byte limits", async () => {
    const texts = ["", "a", "a\n", "a\nb\n", "\n\n\n", "éééé\nnext", "ab😀😀", "x".repeat(100) + "\n" + "y".repeat(100), ...corpus.slice(0, 60)];
    const calls: TextCall[] = [];
    for (const t of texts) {
      calls.push(["truncateHead", t], ["truncateTail", t], ["truncateLine", t], ["truncateLine", t, 3], ["truncateLine", t, 0]);
      for (const maxLines of [0, 1, 2, 5]) for (const maxBytes of [0, 1, 3, 10, 64]) calls.push(["truncateHead", t, { maxLines, maxBytes }], ["truncateTail", t, { maxLines, maxBytes }]);
    }
    expect(await differences(calls)).toEqual([]);
  }, LONG);

  (REF ? test : test.skip)("fuzzyMatch scores and fuzzyFilter orders alike", async () => {
    const items = ["src/session/session.ts", "README.md", "gpt-4o", "gpt4", "claude-opus-4", "openrouter openrouter/anthropic/claude-opus", "a-b_c.d", "4gpt", "ABC", "abc", "", "中文/路径", "test/e2e/sessions.test.ts"];
    const queries = ["", " ", "zzz", "sess", "test sess", "gpt4", "4gpt", "opus", "abc", "a/b", "o", "ab", "md", "4o", "SESS", "中", "  s  t  ", "session.ts"];
    const calls: TextCall[] = queries.map((q) => ["fuzzyFilter", items, q]);
    for (const q of queries) for (const it of items) calls.push(["fuzzyMatch", q, it]);
    expect(await differences(calls)).toEqual([]);
  }, LONG);
});

describe("no width makes wrapping or truncation hang", () => {
  test("a wide character at width 1 or 0 gets a line of its own (after an empty one, as in the reference)", async () => {
    const { results, stalled } = await textCalls("pion", [["wrapTextWithAnsi", "中文", 1], ["wrapTextWithAnsi", "中文", 0], ["truncateToWidth", "中文", 1], ["truncateToVisualLines", "中文", 5, 1]], 10_000);
    expect(stalled).toBeUndefined();
    expect(results).toEqual([["", "中", "", "文"], ["", "中", "", "文"], "\x1b[0m.\x1b[0m", { visualLines: [" ", "中", " ", "文"], skippedCount: 0 }]);
  });

  test("every corpus string at widths 0 to 3 answers within the limit, lines no wider than the width or one grapheme", async () => {
    const calls: TextCall[] = [];
    for (const s of corpus) for (const w of [0, 1, 2, 3]) calls.push(["wrapTextWithAnsi", s, w], ["truncateToWidth", s, w, "…"]);
    const { results, stalled } = await textCalls("pion", calls, 40_000);
    expect(stalled).toBeUndefined();
    const segmenter = new Intl.Segmenter(undefined, { granularity: "grapheme" });
    calls.forEach(([name, , w], i) => {
      if (name === "truncateToWidth") return expect(visibleWidth(results[i] as string)).toBeLessThanOrEqual(w as number);
      for (const line of results[i] as string[]) {
        const graphemes = [...segmenter.segment(stripAnsi(line).replaceAll("\t", " "))].filter((g) => visibleWidth(g.segment) > 0);
        if (graphemes.length > 1) expect(visibleWidth(line)).toBeLessThanOrEqual(w as number);
      }
    });
  }, LONG);

  test("runs of spaces inside a line are kept", () => {
    expect(wrap("a  b   c", 20)).toEqual(["a  b   c"]);
    expect(wrap("aaa  bbb   ccc", 9)).toEqual(["aaa  bbb", "ccc"]);
  });
});

describe("truncateToVisualLines", () => {
  const visual = agent.truncateToVisualLines as unknown as (t: string, max: number, w: number, pad?: number, keep?: "start" | "end") => { visualLines: string[]; skippedCount: number };
  test("keeps the last wrapped lines by default, the first on request, each padded to the width", () => {
    expect(visual("one two three four", 2, 5)).toEqual({ visualLines: ["three", "four "], skippedCount: 2 });
    expect(visual("one two three four", 2, 5, 0, "start")).toEqual({ visualLines: ["one  ", "two  "], skippedCount: 2 });
    expect(visual("ab", 3, 6, 1)).toEqual({ visualLines: [" ab   "], skippedCount: 0 });
    expect(visual("", 3, 10)).toEqual({ visualLines: [], skippedCount: 0 });
    expect(visual("   ", 3, 10)).toEqual({ visualLines: [], skippedCount: 0 });
  });
});
