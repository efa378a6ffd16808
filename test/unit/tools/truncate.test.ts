import { describe, expect, test } from "bun:test";
import {
  formatSize,
  headBytes,
  splitLines,
  TailBuffer,
  tailBytes,
  truncateHead,
  truncateLine,
  truncateTail,
} from "../../../src/tools/truncate.ts";

const numbered = (n: number, width = 0) =>
  Array.from({ length: n }, (_, i) => `line ${i + 1}`.padEnd(width, "x")).join("\n");

describe("splitLines", () => {
  test("a trailing newline ends the last line", () => {
    expect(splitLines("a\nb\n")).toEqual(["a", "b"]);
    expect(splitLines("a\nb")).toEqual(["a", "b"]);
    expect(splitLines("a\n\n")).toEqual(["a", ""]);
    expect(splitLines("")).toEqual([]);
  });
});

describe("truncateHead", () => {
  test("returns short text unchanged", () => {
    const t = truncateHead("a\nb\n");
    expect(t).toMatchObject({ content: "a\nb\n", truncated: false, truncatedBy: null, totalLines: 2, outputLines: 2 });
  });

  test("keeps the first maxLines lines", () => {
    const t = truncateHead(numbered(5000));
    expect(t).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 5000, outputLines: 2000 });
    expect(t.content.split("\n").at(-1)).toBe("line 2000");
  });

  test("keeps whole lines within maxBytes", () => {
    const t = truncateHead(numbered(100, 1000));
    // 51 lines of 1000 bytes plus 50 newlines fit in 51200 bytes; 52 do not.
    expect(t).toMatchObject({ truncated: true, truncatedBy: "bytes", outputLines: 51, outputBytes: 51 * 1000 + 50 });
    expect(t.content.startsWith("line 1x")).toBe(true);
  });

  test("keeps part of a first line that alone is too big", () => {
    const t = truncateHead("é".repeat(100), { maxBytes: 11 });
    expect(t).toMatchObject({ content: "é".repeat(5), partialLine: true, outputLines: 1 });
  });
});

describe("truncateTail", () => {
  test("keeps the last maxLines lines", () => {
    const t = truncateTail(`${numbered(5000)}\n`);
    expect(t).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 5000, outputLines: 2000 });
    expect(t.content.split("\n")[0]).toBe("line 3001");
    expect(t.content.endsWith("line 5000")).toBe(true);
  });

  test("keeps whole lines within maxBytes", () => {
    const t = truncateTail(numbered(100, 1000), { maxBytes: 3000 });
    expect(t).toMatchObject({ truncatedBy: "bytes", outputLines: 2 });
    expect(t.content.split("\n").map((l) => l.slice(0, 8))).toEqual(["line 99x", "line 100"]);
  });

  test("keeps the end of a last line that alone is too big", () => {
    const t = truncateTail(`short\n${"a".repeat(50)}b`, { maxBytes: 10 });
    expect(t).toMatchObject({ content: "aaaaaaaaab", partialLine: true, outputLines: 1 });
  });
});

describe("byte and line cuts", () => {
  test("cut on UTF-8 character boundaries", () => {
    expect(headBytes("aé€", 4)).toBe("aé");
    expect(headBytes("aé€", 5)).toBe("aé");
    expect(tailBytes("aé€", 4)).toBe("€");
    expect(tailBytes("aé€", 5)).toBe("é€");
  });

  test("long lines are cut with a marker", () => {
    expect(truncateLine("short", 10)).toBe("short");
    expect(truncateLine("x".repeat(25), 10)).toBe(`${"x".repeat(10)}... [line truncated, 15 more characters]`);
    expect(truncateLine("x".repeat(10), 5, 1000)).toBe("xxxxx... [line truncated, 995 more characters]");
  });

  test("formatSize", () => {
    expect([formatSize(512), formatSize(51200), formatSize(20 * 1024 * 1024)]).toEqual(["512B", "50.0KB", "20.0MB"]);
  });
});

describe("TailBuffer", () => {
  const enc = new TextEncoder();

  test("holds everything while below the limit", () => {
    const b = new TailBuffer(100);
    b.push(enc.encode("a\nb"));
    b.push(enc.encode("c\n"));
    expect(new TextDecoder().decode(b.bytes())).toBe("a\nbc\n");
    expect([b.totalBytes, b.totalLines, b.droppedBytes]).toEqual([5, 2, 0]);
    expect(b.truncate()).toMatchObject({ content: "a\nbc\n", truncated: false });
  });

  test("stays bounded and reports totals for the whole stream", () => {
    const b = new TailBuffer(50 * 1024);
    const chunk = enc.encode("0123456789abcdef0123456789abcdef0123456789abcdef012345678\n".repeat(1000)); // 58KB
    for (let i = 0; i < 200; i++) b.push(chunk);
    expect(b.totalBytes).toBe(chunk.length * 200);
    expect(b.totalLines).toBe(200_000);
    expect(b.bytes().length).toBeLessThanOrEqual(50 * 1024 + chunk.length);
    const t = b.truncate();
    expect(t).toMatchObject({ truncated: true, totalLines: 200_000, totalBytes: chunk.length * 200 });
    expect(t.outputBytes).toBeLessThanOrEqual(50 * 1024);
    expect(t.content.split("\n").every((l) => l.length === 57)).toBe(true);
  });

  test("peek predicts totals without pushing", () => {
    const b = new TailBuffer(10);
    b.push(enc.encode("ab\n"));
    expect(b.peek(enc.encode("c\nd"))).toEqual({ bytes: 6, lines: 3 });
    expect(b.totalBytes).toBe(3);
  });
});
