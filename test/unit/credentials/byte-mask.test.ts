import { describe, expect, test } from "bun:test";
import { ByteStreamMasker, type ByteSecret } from "../../../src/credentials/byte-mask.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();
const secret = (value: string, label: string): ByteSecret => ({ bytes: enc.encode(value), replacement: enc.encode(`[redacted: ${label}]`) });
const SECRETS = [secret("sk-ant-abcdef123456", "ANTHROPIC_API_KEY"), secret("sk-ant-abc", "SHORT_KEY"), secret("zzzzzzzz", "Z")];

/** The reference result: string replacement, longest secret first at each position. */
function expected(text: string): string {
  const sorted = [...SECRETS].sort((a, b) => b.bytes.length - a.bytes.length).map((s) => [dec.decode(s.bytes), dec.decode(s.replacement)] as const);
  let out = "";
  for (let i = 0; i < text.length; ) {
    const hit = sorted.find(([v]) => text.startsWith(v, i));
    if (hit) {
      out += hit[1];
      i += hit[0].length;
    } else out += text[i++];
  }
  return out;
}

/** `text` pushed through a masker cut at `cuts`, the outputs joined. */
function through(text: string, cuts: number[]): string {
  const m = new ByteStreamMasker(SECRETS);
  const bytes = enc.encode(text);
  const parts: string[] = [];
  let from = 0;
  for (const c of [...cuts, bytes.length]) {
    // The masker may return a view into the chunk: copy as the shell's consumer does.
    parts.push(dec.decode(m.push(bytes.slice(from, c), c === bytes.length)));
    from = c;
  }
  return parts.join("");
}

describe("ByteStreamMasker", () => {
  const text = "key=sk-ant-abcdef123456\nshort sk-ant-abc and sk-ant-abcdef12 zzzzzzzzz end sk-ant-abcdef123456";

  test("masks whole secrets, longest first, and leaves near misses alone", () => {
    expect(through(text, [])).toBe(
      "key=[redacted: ANTHROPIC_API_KEY]\nshort [redacted: SHORT_KEY] and [redacted: SHORT_KEY]def12 [redacted: Z]z end [redacted: ANTHROPIC_API_KEY]",
    );
    expect(through(text, [])).toBe(expected(text));
  });

  test("a secret split between chunks at any position is still masked", () => {
    for (let a = 0; a <= text.length; a++) expect(through(text, [a])).toBe(expected(text));
  });

  test("three-way splits and one-byte chunks give the same result", () => {
    for (let a = 0; a < 40; a++) for (let b = a; b < 60; b += 3) expect(through(text, [a, b])).toBe(expected(text));
    expect(through(text, [...Array(text.length).keys()].slice(1))).toBe(expected(text));
  });

  test("a held-back beginning that never completes comes out on the next chunk or at the end", () => {
    const m = new ByteStreamMasker(SECRETS);
    expect(dec.decode(m.push(enc.encode("abc sk-ant-ab"), false))).toBe("abc ");
    expect(dec.decode(m.push(enc.encode("X"), false))).toBe("sk-ant-abX");
    expect(dec.decode(m.push(enc.encode("tail sk-a"), false))).toBe("tail ");
    expect(dec.decode(m.push(new Uint8Array(0), true))).toBe("sk-a");
  });

  test("held counts the bytes the last push kept back", () => {
    const m = new ByteStreamMasker(SECRETS);
    m.push(enc.encode("abc sk-ant-ab"), false);
    expect(m.held).toBe("sk-ant-ab".length);
    m.push(enc.encode("cdef123456 done"), false);
    expect(m.held).toBe(0);
    expect(m.masked).toBe(1);
  });

  test("a chunk with nothing to mask is passed on without a copy", () => {
    const m = new ByteStreamMasker(SECRETS);
    const chunk = enc.encode("plain output\n");
    const out = m.push(chunk, false);
    expect(out.buffer).toBe(chunk.buffer);
    expect(out.length).toBe(chunk.length);
  });

  test("random text with secrets planted at random places matches the string reference", () => {
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) % n);
    const alphabet = "sk-ant-abcdez123456\n ";
    for (let round = 0; round < 200; round++) {
      let t = "";
      while (t.length < 300) t += rnd(10) === 0 ? dec.decode(SECRETS[rnd(3)]!.bytes) : alphabet[rnd(alphabet.length)];
      const cuts = [...new Set([rnd(t.length), rnd(t.length), rnd(t.length)])].sort((x, y) => x - y);
      expect(through(t, cuts)).toBe(expected(t));
    }
  });
});
