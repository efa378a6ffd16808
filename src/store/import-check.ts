/**
 * The thread that confirms an import's unparsed lines (jsonl.ts, importRows): it reads the same
 * file up to the same byte, parses the message of every line quickMessage reads (confirmMessage),
 * and tells whether each one is what the line's first fields say. Its verdict is two numbers in
 * shared memory (CHECK_STATE), so the importing thread can wait for it inside its transaction.
 * Built into a code string for the binary (build.ts); run from this file from source.
 */
import { closeSync, openSync } from "node:fs";
import { confirmMessage, entryLines, quickMessage } from "./jsonl-lines.ts";
import { CHECK_STATE, type CheckRequest } from "./import-check-state.ts";

declare const self: { onmessage: ((e: MessageEvent<CheckRequest>) => void) | null; close(): void };

self.onmessage = (e) => {
  const { path, stopAt, verdict } = e.data;
  const state = new Int32Array(verdict);
  Atomics.store(state, 0, CHECK_STATE.running);
  let result: number = CHECK_STATE.agreed;
  let fd: number | undefined;
  try {
    fd = openSync(path, "r");
    for (const { line, text } of entryLines(fd, stopAt)) {
      const q = quickMessage(text);
      if (!q) continue;
      const ok = confirmMessage(q, text) !== undefined;
      if (!ok) {
        state[1] = line;
        result = CHECK_STATE.disagreed;
        break;
      }
    }
  } catch {
    result = CHECK_STATE.failed;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  Atomics.store(state, 0, result);
  Atomics.notify(state, 0);
  self.close(); // one check per thread
};
