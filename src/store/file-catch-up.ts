import { closeSync, existsSync, openSync, readSync, statSync } from "node:fs";
import { log } from "../util/log.ts";
import type { Entry } from "./entries.ts";
import { readJsonl } from "./jsonl.ts";
import type { SessionStore } from "./store.ts";

/**
 * Entries another writer appended to a stored session's file (the reference, continuing a file
 * pion imported): when the file's last line is an entry the database lacks and every entry the
 * database holds is in the file, the new ones are appended to the database, so pion goes on after
 * them instead of writing beside them. A file that disagrees otherwise is left to the export's
 * check (jsonl-export.ts), which never rewrites it. Returns how many entries came in.
 */
export function catchUpFromFile(store: SessionStore, sessionId: string): number {
  const file = store.getSession(sessionId)?.file;
  if (file === undefined || !existsSync(file)) return 0;
  const last = lastLineId(file);
  if (last === undefined || store.getEntry(sessionId, last)) return 0;
  const stored = new Set(store.entries(sessionId).map((e) => e.id));
  const extra: Entry[] = [];
  let matched = 0;
  try {
    for (const row of readJsonl(file).entries()) {
      if (stored.has(row.entry.id)) {
        // The database's entries come first in the file, in their order: anything after one of
        // the new ones means the two histories are mixed, which is not this case.
        if (extra.length > 0) return 0;
        matched++;
      } else extra.push(row.entry);
    }
  } catch (err) {
    log("store", "a session file another writer changed could not be read; the database's entries are used", { file, error: err instanceof Error ? err.message : String(err) });
    return 0;
  }
  if (matched !== stored.size || extra.length === 0) return 0;
  store.appendMany(sessionId, extra);
  return extra.length;
}

/** The `id` of the file's last complete line, read from its tail; undefined when it has none. */
function lastLineId(path: string): string | undefined {
  const size = statSync(path).size;
  if (size === 0) return undefined;
  const len = Math.min(size, 1 << 16);
  const buf = Buffer.allocUnsafe(len);
  const fd = openSync(path, "r");
  try {
    const n = readSync(fd, buf, 0, len, size - len);
    let end = n;
    while (end > 0 && (buf[end - 1] === 0x0a || buf[end - 1] === 0x0d)) end--;
    const start = buf.lastIndexOf(0x0a, end - 1) + 1;
    const value = JSON.parse(buf.subarray(start, end).toString("utf8")) as { id?: unknown; type?: unknown };
    return value.type !== "session" && typeof value.id === "string" ? value.id : undefined;
  } catch {
    return undefined; // a torn or long last line: the export's own check decides
  } finally {
    closeSync(fd);
  }
}
