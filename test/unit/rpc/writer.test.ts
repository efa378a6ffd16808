import { describe, expect, test } from "bun:test";
import type { FileSink } from "bun";
import { closableSink, createWriter } from "../../../src/rpc/writer.ts";

/**
 * A sink whose flush reports a full pipe while `full` is set: the promise it returns resolves
 * when the test calls `drain()`, as Bun's FileSink does once the OS took the bytes.
 */
function pipe() {
  const chunks: Uint8Array[] = [];
  let waiting: (() => void)[] = [];
  const state = { full: false };
  const sink = {
    write(chunk: string | Uint8Array) {
      // Bytes may be cut anywhere (a UTF-8 character too): kept as bytes, decoded whole.
      chunks.push(typeof chunk === "string" ? new TextEncoder().encode(chunk) : Uint8Array.from(chunk));
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
    text: () => Buffer.concat(chunks).toString("utf8"),
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

test("a streamed line is handed to the OS 64 KB at a time while the pipe takes it, and buffered while it is full", async () => {
  const p = pipe();
  const log: string[] = [];
  const sink = {
    write: (chunk: Uint8Array | string) => (log.push(`w${chunk.length}`), p.sink.write(chunk)),
    flush: () => (log.push("f"), p.sink.flush()),
  } as unknown as FileSink;
  const w = createWriter(sink);
  const mb = new Uint8Array(1 << 20).fill(0x61);
  function* pieces() {
    yield '{"data":"';
    yield mb;
    yield mb;
    yield '"}\n';
  }
  // The pipe takes everything: the first megabyte goes out in 64 KB writes, each flushed at once
  // (the first one with the opening string), never gathered in the sink.
  p.state.full = false;
  await w.writeStream(pieces());
  await w.drain();
  const first = log.slice(0, log.indexOf("f") + 1);
  expect(first).toEqual(["w9", `w${65536 - 9}`, "f"]);
  expect(log.slice(first.length, first.length + 4)).toEqual(["w65536", "f", "w65536", "f"]);
  expect(Math.max(...log.filter((e) => e.startsWith("w")).map((e) => Number(e.slice(1))))).toBe(65536);
  expect(JSON.parse(p.text()).data).toBe("a".repeat(2 << 20));

  // The pipe is full: after the flush that found it so, the rest is handed over whole, unflushed,
  // until 4 MB wait (see the first test); one flush follows at the end.
  log.length = 0;
  p.state.full = true;
  const streamed = w.writeStream(pieces());
  expect(log.filter((e) => e === "f").length).toBe(1);
  expect(log).toContain(`w${(1 << 20) - 65536 + 9}`);
  p.state.full = false;
  while (p.text().split("\n").length < 3) {
    p.drain();
    await tick();
  }
  await streamed;
  expect(p.text().split("\n").map((l) => (l ? JSON.parse(l).data.length : 0))).toEqual([2 << 20, 2 << 20, 0]);
});

test("a streamed answer after 512 KB of others starts with a young-generation collection; a large one ends with one", async () => {
  const p = pipe();
  const w = createWriter(p.sink);
  const gc = Bun.gc;
  const calls: boolean[] = [];
  Bun.gc = ((full: boolean) => void calls.push(full)) as typeof Bun.gc;
  try {
    const answer = (bytes: number) => w.writeStream(['{"data":"', new Uint8Array(bytes).fill(0x61), '"}\n']);
    await answer(300 << 10);
    await answer(300 << 10);
    expect(calls).toEqual([]);
    await answer(10);
    expect(calls).toEqual([false]); // 600 KB streamed since the last collection
    await answer(10);
    expect(calls).toEqual([false]);
    await answer(9 << 20); // one young collection at 8 MB streamed, one at the end
    expect(calls).toEqual([false, false, false]);
    await answer(10);
    expect(calls).toEqual([false, false, false]); // the end's collection counts
  } finally {
    Bun.gc = gc;
  }
  await w.drain();
  expect(p.text().split("\n").length).toBe(7);
});

describe("closableSink", () => {
  test("the first refused write (thrown or rejected) calls onGone once; later writes are dropped", async () => {
    const epipe = Object.assign(new Error("broken pipe"), { code: "EPIPE" });
    let writes = 0;
    const gone: unknown[] = [];
    const refuse = (): number => {
      writes++;
      throw epipe;
    };
    const throwing = closableSink({ write: refuse, flush: () => 0 }, (e) => gone.push(e));
    expect(throwing.write("a")).toBe(0);
    expect(throwing.write("b")).toBe(0);
    expect([writes, gone]).toEqual([1, [epipe]]);
    const rejected: unknown[] = [];
    const rejecting = closableSink({ write: () => Promise.reject(epipe), flush: () => 0 }, (e) => rejected.push(e));
    expect(await rejecting.write("a")).toBe(0);
    expect(await rejecting.flush()).toBe(0);
    expect(rejected).toEqual([epipe]);
  });
});
