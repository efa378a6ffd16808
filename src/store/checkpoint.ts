import type { Database } from "bun:sqlite";
import { statSync } from "node:fs";
import { log } from "../util/log.ts";
import { whenQuiet } from "../util/quiet.ts";
import { workerUrl } from "../util/worker-code.ts";

/**
 * Checkpoints of a large write, off the main thread. A WAL database copies what a transaction
 * wrote from the WAL into the database file at the next checkpoint, and (synchronous=NORMAL)
 * syncs both files to disk: after importing a 100k-entry file (150 MB of pages) that took 1.1-1.7 s
 * of the 2.3 s the import cost, on the thread that answers commands. Here the main connection's
 * automatic checkpoint is turned off for the write, and a worker thread with a connection of its
 * own runs the checkpoint (PASSIVE: readers and writers go on meanwhile) once no command is in hand,
 * two seconds later at the latest (util/quiet.ts: copying 10 MB beside a 10k-entry session's answers made get_messages 37 -> 42-48 ms
 * and get_tree 27-34 -> 36-38 ms; until then the pages are read from the WAL, as fast); the automatic
 * checkpoint is turned back on once it is done. A process that exits first checkpoints the rest as
 * it closes the store (sqlite-store.ts), or leaves it to the next opener if it is killed.
 */
const AUTO_CHECKPOINT_PAGES = 1000; // SQLite's default
/** A WAL at least this large is worth a checkpoint of its own (a thread after an import, the close). */
export const LARGE_WAL_BYTES = 4 << 20;

const autoCheckpointOn = (db: Database): void => {
  db.run(`PRAGMA wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
};

/** The size of the database's WAL file (0 without one). */
export function walBytes(path: string): number {
  try {
    return statSync(`${path}-wal`).size;
  } catch {
    return 0;
  }
}

/**
 * Runs `write` with the automatic checkpoint off, then checkpoints `path` on a worker thread once
 * the process is quiet, unless `closed()` by then (the close checkpoints a large WAL itself).
 */
export function writeThenCheckpointAside<T>(db: Database, path: string, write: () => T, closed: () => boolean): T {
  db.run("PRAGMA wal_autocheckpoint = 0");
  let result: T;
  try {
    result = write();
  } catch (err) {
    autoCheckpointOn(db);
    throw err;
  }
  // A small write is left to the automatic checkpoint (a later commit, or the last connection's
  // close): a thread costs more to start than copying it would (1k entries: 1.5 MB).
  if (walBytes(path) < LARGE_WAL_BYTES) {
    autoCheckpointOn(db);
    return result;
  }
  whenQuiet(() => {
    if (!closed()) checkpointAside(db, path);
  });
  return result;
}

function checkpointAside(db: Database, path: string): void {
  let worker: Worker;
  try {
    worker = new Worker(workerUrl("checkpoint", new URL("./checkpoint-worker.ts", import.meta.url)));
  } catch (err) {
    // No thread to spare: the next commit checkpoints, as it would have anyway.
    log("store", "checkpoint thread did not start", { error: err instanceof Error ? err.message : String(err) });
    autoCheckpointOn(db);
    return;
  }
  const done = (error?: string) => {
    if (error) log("store", "background checkpoint failed; the next commits checkpoint", { error });
    try {
      autoCheckpointOn(db);
    } catch {
      // closed meanwhile: nothing to turn back on
    }
    worker.terminate();
  };
  worker.onmessage = (e: MessageEvent<{ ok: boolean; error?: string }>) => done(e.data.ok ? undefined : e.data.error);
  worker.onerror = (e) => done(e.message);
  worker.unref();
  worker.postMessage(path);
}
