import { expect, test } from "bun:test";
import type { FileSink } from "bun";
import { createWriter } from "../../../src/rpc/writer.ts";

/**
 * A sink whose flush reports a full pipe while `full` is set: the promise it returns resolves
 * when the test calls `drain()`, as Bun's FileSink does once the OS took the bytes.
 */
function pipe() {
  const chunks: string[] = [];
  let waiting: (() => void)[] = [];
  const state = { full: false };
  const sink = {
    write(chunk: string | Uint8Array) {
      chunks.push(typeof chunk === "string" ? chunk : new TextDecoder().decode(chunk));
      return typeof chunk === "string" ? chunk.length : chunk.byteLength;
    },
    flush() {
      if (!state.full) return 0;
      return new Promise<number>((resolve) => waiting.push(() => resolve(0)));
    },
  } as unknown as FileSink;
  return {
    sink,
    state,
    text: () => chunks.join(""),
    drain() {
      const w = waiting;
      waiting = [];
      for (const f of w) f();
    },
  };
}

const tick = () => new Promise<void>((r) => setImmediate(r));

test("a streamed line is written whole; records written meanwhile follow it in order", async () => {
  const p = pipe();
  const w = createWriter(p.sink);
  const big = "x".repeat(1 << 20);
  p.state.full = true;
  let pulled = 0;
  function* pieces() {
    yield '{"type":"response","data":[';
    for (let i = 0; i < 12; i++) {
      pulled++;
      yield `${i ? "," : ""}"${big}"`;
    }
    yield "]}\n";
  }
  w.writeLine('{"n":0}\n');
  const streamed = w.writeStream(pieces());
  expect(streamed).toBeInstanceOf(Promise);
  // The pipe is full: the stream stopped at two chunks in flight, not all pieces were made.
  expect(pulled).toBeLessThan(12);
  const later = w.write({ n: 1 });
  w.writeBytes(new TextEncoder().encode('{"n":2}\n'));
  const second = w.writeStream(["{\"n\":3,", "\"s\":true}\n"]);
  w.write({ n: 4 });
  expect(p.text()).not.toContain('"n":1');
  p.state.full = false;
  while (pulled < 12 || !p.text().includes('"n":4')) {
    p.drain();
    await tick();
  }
  await Promise.all([streamed, later, second]);
  await w.drain();
  const lines = p.text().split("\n").filter(Boolean);
  expect(lines.map((l) => JSON.parse(l).n ?? "stream")).toEqual([0, "stream", 1, 2, 3, 4]);
  expect(JSON.parse(lines[1]!).data).toEqual(Array(12).fill(big));
});

test("a stream whose piece throws ends its line, rejects, and lets the records behind it out", async () => {
  const p = pipe();
  const w = createWriter(p.sink);
  function* failing() {
    yield '{"type":"response","data":[';
    throw new Error("the database went away");
  }
  const r = w.writeStream(failing());
  w.write({ n: 1 });
  await expect(r).rejects.toThrow("the database went away");
  await w.drain();
  const lines = p.text().split("\n");
  expect(lines[0]).toBe('{"type":"response","data":[');
  expect(JSON.parse(lines[1]!)).toEqual({ n: 1 });
});

test("a streamed line of strings and bytes goes out in their order, chunked, with the records behind it after", async () => {
  const p = pipe();
  const w = createWriter(p.sink);
  const enc = new TextEncoder();
  const big = "é".repeat(1 << 20); // 2 MB of UTF-8 per bytes piece: chunk boundaries fall between pieces
  p.state.full = true;
  function* pieces() {
    yield '{"data":[';
    for (let i = 0; i < 6; i++) {
      if (i) yield ",";
      yield i % 2 ? `"${i}"` : enc.encode(`"${big}${i}"`);
    }
    yield "]}\n";
  }
  const streamed = w.writeStream(pieces());
  w.write({ n: 1 });
  p.state.full = false;
  while (!p.text().includes('"n":1')) {
    p.drain();
    await tick();
  }
  await streamed;
  await w.drain();
  const lines = p.text().split("\n").filter(Boolean);
  expect(JSON.parse(lines[0]!).data).toEqual([`${big}0`, "1", `${big}2`, "3", `${big}4`, "5"]);
  expect(JSON.parse(lines[1]!)).toEqual({ n: 1 });
});
