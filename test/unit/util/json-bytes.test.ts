import { describe, expect, test } from "bun:test";
import { JsonBytesEscaper } from "../../../src/util/json-bytes.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Escape `chunks` as consecutive deltas and return the decoded deltas. */
function deltas(chunks: Uint8Array[]): string[] {
  const e = new JsonBytesEscaper();
  const pre = enc.encode('{"d":"');
  const post = enc.encode('"}');
  return chunks.map((c, i) => JSON.parse(dec.decode(e.line(pre, c, post, i === chunks.length - 1))).d as string);
}

describe("JsonBytesEscaper", () => {
  test("escapes like JSON.stringify for text, quotes, backslashes and control characters", () => {
    const text = 'plain "quoted" back\\slash\nline\ttab\r\u0001\u001f é € 😀';
    expect(deltas([enc.encode(text)])).toEqual([text]);
  });

  test("a character cut between chunks is carried over; the deltas join to the text", () => {
    const bytes = enc.encode("a€b😀c");
    for (let cut = 0; cut <= bytes.length; cut++) {
      const parts = deltas([bytes.subarray(0, cut), bytes.subarray(cut)]);
      expect(parts.join("")).toBe("a€b😀c");
    }
  });

  test("invalid UTF-8 becomes U+FFFD as TextDecoder does", () => {
    const bad = new Uint8Array([0x61, 0xff, 0x62, 0xc3, 0x28, 0xe2, 0x82]);
    expect(deltas([bad]).join("")).toBe(dec.decode(bad));
  });

  test("matches TextDecoder over random byte chunks", () => {
    let seed = 7;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    for (let round = 0; round < 200; round++) {
      const bytes = new Uint8Array(Math.floor(rand() * 64));
      for (let i = 0; i < bytes.length; i++) bytes[i] = rand() < 0.7 ? Math.floor(rand() * 128) : Math.floor(rand() * 256);
      const cut = Math.floor(rand() * (bytes.length + 1));
      const streaming = new TextDecoder();
      const expected = streaming.decode(bytes.subarray(0, cut), { stream: true }) + streaming.decode(bytes.subarray(cut));
      expect(deltas([bytes.subarray(0, cut), bytes.subarray(cut)]).join("")).toBe(expected);
    }
  });
});
