/**
 * The thread that confirms a large import's unparsed lines (jsonl.ts, importRows): it reads the same
 * file up to the same byte and tells whether the message of every line read from its bytes
 * (quickMessage, keptAsBytes) is one JSON value (message-check.ts, in a database of its own in memory). Its verdict
 * is two numbers in shared memory (CHECK_STATE), so the importing thread can wait for it inside its
 * transaction. Built into a code string for the binary (build.ts); run from this file from source.
 */
import { Database } from "bun:sqlite";
import { closeSync, openSync } from "node:fs";
import { CHECK_STATE, type CheckRequest } from "./import-check-state.ts";
import { entryLineBytes, keptAsBytes, quickMessage } from "./jsonl-lines.ts";
import { messageIsJson } from "./message-check.ts";

declare const self: { onmessage: ((e: MessageEvent<CheckRequest>) => void) | null; close(): void };

self.onmessage = (e) => {
  const { path, stopAt, verdict } = e.data;
  const state = new Int32Array(verdict);
  Atomics.store(state, 0, CHECK_STATE.running);
  let result: number = CHECK_STATE.agreed;
  let fd: number | undefined;
  const db = new Database(":memory:");
  try {
    const isJson = db.prepare<[number], [Uint8Array, number]>(`SELECT ${messageIsJson("?1", "?2")}`);
    fd = openSync(path, "r");
    for (const l of entryLineBytes(fd, stopAt)) {
      const q = quickMessage(l.buf, l.start, l.end);
      if (q === undefined) continue;
      const bytes = l.buf.subarray(l.start, l.end);
      if (!keptAsBytes(bytes, q) || isJson.values(bytes, q.at)[0]![0] === 1) continue;
      state[1] = l.line;
      result = CHECK_STATE.disagreed;
      break;
    }
  } catch {
    result = CHECK_STATE.failed;
  } finally {
    if (fd !== undefined) closeSync(fd);
    db.close();
  }
  Atomics.store(state, 0, result);
  Atomics.notify(state, 0);
  self.close(); // one check per thread
};
