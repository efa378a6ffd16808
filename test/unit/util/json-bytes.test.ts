import { describe, expect, test } from "bun:test";
import { JsonBytesEscaper } from "../../../src/util/json-bytes.ts";
import { createAsciiEscaper } from "../../../src/util/json-escape-wasm.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

/** Escape `chunks` as consecutive deltas and return the decoded deltas. */
function escapedDeltas(chunks: Uint8Array[], simd: boolean): string[] {
  const e = new JsonBytesEscaper({ simd });
  const pre = enc.encode('{"d":"');
  const post = enc.encode('"}');
  return chunks.map((c, i) => JSON.parse(dec.decode(e.line(pre, c, post, i === chunks.length - 1))).d as string);
}

describe.each([true, false])("JsonBytesEscaper (simd %p)", (withSimd) => {
  const deltas = (chunks: Uint8Array[]) => escapedDeltas(chunks, withSimd);
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

describe("JsonBytesEscaper: the SIMD path", () => {
  test("WebAssembly SIMD is available here, so the fast path is the one tested", () => {
    expect(createAsciiEscaper()).toBeDefined();
  });

  test("gives the same bytes as the byte loop: long ASCII runs, escapes at every lane, multi-byte text, growth", () => {
    let seed = 11;
    const rand = () => (seed = (seed * 1103515245 + 12345) & 0x7fffffff) / 0x7fffffff;
    const fast = new JsonBytesEscaper();
    const slow = new JsonBytesEscaper({ simd: false });
    const pre = enc.encode('{"type":"x","delta":"');
    const post = enc.encode('"}\n');
    for (let round = 0; round < 300; round++) {
      const size = round === 299 ? 600_000 : Math.floor(rand() * 200);
      const bytes = new Uint8Array(size);
      const mix = rand();
      for (let i = 0; i < size; i++) {
        const r = rand();
        bytes[i] = r < mix ? 0x20 + Math.floor(rand() * 95) : r < mix + (1 - mix) / 2 ? Math.floor(rand() * 0x20) : 0x80 + Math.floor(rand() * 128);
      }
      const mixed = enc.encode("é€😀\"\\\n");
      if (round % 3 === 0 && size > mixed.length) bytes.set(mixed, Math.floor((size - mixed.length) / 2));
      const cut = Math.floor(rand() * (size + 1));
      // Each line is valid until the next call: decoded at once.
      const both = (e: JsonBytesEscaper) => [dec.decode(e.line(pre, bytes.subarray(0, cut), post)), dec.decode(e.line(pre, bytes.subarray(cut), post, true))];
      expect(both(fast)).toEqual(both(slow));
    }
  });
});
