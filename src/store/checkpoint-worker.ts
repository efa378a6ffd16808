/**
 * The checkpoint thread (checkpoint.ts): a connection of its own runs a PASSIVE checkpoint of the
 * database it is sent, and answers whether it worked. Built into a code string for the binary
 * (build.ts); run from this file from source.
 */
import { Database } from "bun:sqlite";

declare const self: { onmessage: ((e: MessageEvent<string>) => void) | null; postMessage(m: unknown): void };

self.onmessage = (e) => {
  try {
    const db = new Database(e.data, { readwrite: true });
    const result = db.query("PRAGMA wal_checkpoint(PASSIVE)").get();
    db.close();
    self.postMessage({ ok: true, result });
  } catch (err) {
    self.postMessage({ ok: false, error: err instanceof Error ? err.message : String(err) });
  }
};
