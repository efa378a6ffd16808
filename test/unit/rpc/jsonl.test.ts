import { describe, expect, test } from "bun:test";
import { jsonLines, type JsonlRecord } from "../../../src/rpc/jsonl.ts";

async function collect(chunks: (string | Uint8Array)[], max?: number): Promise<JsonlRecord[]> {
  const enc = new TextEncoder();
  async function* gen() {
    for (const c of chunks) yield typeof c === "string" ? enc.encode(c) : c;
  }
  const out: JsonlRecord[] = [];
  for await (const r of jsonLines(gen(), max)) out.push(r);
  return out;
}

describe("jsonLines", () => {
  test("splits on LF only and strips one trailing CR", async () => {
    expect(await collect(["a\r\nb\n", "c\r\r\n"])).toEqual([{ line: "a" }, { line: "b" }, { line: "c\r" }]);
  });

  test("keeps U+2028 and U+2029 inside a record", async () => {
    const line = JSON.stringify({ type: "prompt", message: "x\u2028y\u2029z" });
    const out = await collect([`${line}\n`]);
    expect(out).toEqual([{ line }]);
    expect(JSON.parse((out[0] as { line: string }).line).message).toBe("x\u2028y\u2029z");
  });

  test("reassembles a record split inside a multi-byte character", async () => {
    const bytes = new TextEncoder().encode('{"m":"héllo €"}\n');
    const cut = bytes.indexOf(0xe2) + 1; // inside the 3-byte euro sign
    const out = await collect([bytes.subarray(0, 5), bytes.subarray(5, cut), bytes.subarray(cut)]);
    expect(out).toEqual([{ line: '{"m":"héllo €"}' }]);
  });

  test("yields a final record without LF, and empty lines as empty", async () => {
    expect(await collect(["a\n\nb"])).toEqual([{ line: "a" }, { line: "" }, { line: "b" }]);
  });

  test("reports invalid UTF-8 per line and goes on", async () => {
    const out = await collect([new Uint8Array([0x7b, 0xff, 0xfe, 0x7d, 0x0a]), "ok\n"]);
    expect(out).toEqual([{ error: "invalid UTF-8 in input line" }, { line: "ok" }]);
  });

  test("a line over the limit is one error, the next line is fine", async () => {
    const out = await collect(["x".repeat(10), "y".repeat(10), "\nshort\n"], 15);
    expect(out).toEqual([{ error: "line exceeds 15 bytes" }, { line: "short" }]);
  });

  test("many records in one chunk", async () => {
    const text = Array.from({ length: 1000 }, (_, i) => `{"i":${i}}`).join("\n");
    const out = await collect([text]);
    expect(out.length).toBe(1000);
    expect(out[999]).toEqual({ line: '{"i":999}' });
  });
});
