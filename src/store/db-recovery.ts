import { Database } from "bun:sqlite";
import { appendFileSync, closeSync, existsSync, fstatSync, openSync, readSync, renameSync, rmSync } from "node:fs";
import { readJsonl } from "./jsonl.ts";

/*
 * A session database that is not one any more (random bytes, a truncated file, a page SQLite
 * finds corrupt) is moved aside and made anew: the JSONL files are the complete export by
 * contract, so the new one is filled from them (file-index.ts) as the folder is listed. What only
 * the old database had (entries committed but not yet exported when a crash came) is copied into
 * the files where SQLite can still read it, and what could not be read is counted.
 */

const SQLITE_MAGIC = Buffer.from("SQLite format 3\0");
/** Databases up to this size get `PRAGMA quick_check` on open (about 3 ms a megabyte here: at most 13 ms). */
const QUICK_CHECK_MAX_BYTES = 4 << 20;

/** Why the database at `path` cannot be used, or undefined when it can (or does not exist yet). */
export function corruption(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const fd = openSync(path, "r");
  const head = Buffer.alloc(100);
  let n: number;
  let size: number;
  try {
    n = readSync(fd, head, 0, 100, 0);
    size = fstatSync(fd).size;
  } finally {
    closeSync(fd);
  }
  if (n === 0) return undefined; // made empty, before SQLite wrote it: a new database
  if (n < 100 || !head.subarray(0, 16).equals(SQLITE_MAGIC)) return "it is not a SQLite database";
  // The header's page size (1 means 65536) and page count: a file cut short holds fewer pages.
  const pageSize = head.readUInt16BE(16) === 1 ? 65536 : head.readUInt16BE(16);
  const pages = head.readUInt32BE(28);
  if (size % pageSize !== 0 || size < pages * pageSize) return `it is cut short (${size} bytes, ${pages} pages of ${pageSize} expected)`;
  // The integrity check reads every page (about 3 ms a megabyte here): on every open for a small
  // database only; a large one is checked by SQLite as its pages are read (see openUsable).
  if (size > QUICK_CHECK_MAX_BYTES) return undefined;
  let db: Database | undefined;
  try {
    db = new Database(path, { readwrite: true });
    const rows = db.query<{ quick_check: string }, []>("PRAGMA quick_check").all();
    if (rows.length === 1 && rows[0]!.quick_check === "ok") return undefined;
    return `its integrity check failed (${rows.slice(0, 3).map((r) => r.quick_check).join("; ")})`;
  } catch (err) {
    // Only SQLite's word that the file is damaged counts: a full disk or a lock is no reason to move it.
    const code = String((err as { code?: unknown }).code ?? "");
    if (code.startsWith("SQLITE_CORRUPT") || code.startsWith("SQLITE_NOTADB")) return `SQLite cannot read it (${(err as Error).message})`;
    return undefined;
  } finally {
    db?.close(false);
  }
}

export interface Recovery {
  /** Where the old database went. */
  movedTo: string;
  why: string;
  /** Entries only the old database had, written to their sessions' files. */
  recovered: number;
  /** Sessions of the old database whose rows could not be read, or null when nothing of it could. */
  unreadable: number | null;
  /** The one line that says what happened. */
  message: string;
}

/** Moves the database (and its WAL) aside, copies what it alone had into the files, and says so. */
export function setAside(path: string, why: string, now = new Date()): Recovery {
  const movedTo = `${path}.corrupt-${now.toISOString().replace(/[:.]/g, "-")}`;
  renameSync(path, movedTo);
  if (existsSync(`${path}-wal`)) renameSync(`${path}-wal`, `${movedTo}-wal`);
  rmSync(`${path}-shm`, { force: true });
  const { recovered, unreadable } = salvage(movedTo);
  const lost = unreadable === null ? "nothing of it could be read, so entries not yet in the session files (if any) are lost" : `${recovered} entr${recovered === 1 ? "y" : "ies"} only it had copied into the session files${unreadable > 0 ? `; ${unreadable} session(s) could not be read and may have lost their newest entries` : ""}`;
  const message = `the session database ${path} was unusable (${why}); moved to ${movedTo} and rebuilt from the session files; ${lost}`;
  return { movedTo, why, recovered, unreadable, message };
}

/** Entries of the old database that its session's file lacks, appended to that file. */
function salvage(oldPath: string): { recovered: number; unreadable: number | null } {
  let db: Database;
  let sessions: { id: string; file: string | null }[];
  try {
    db = new Database(oldPath, { readonly: true });
    sessions = db.query<{ id: string; file: string | null }, []>("SELECT id, file FROM session WHERE file IS NOT NULL AND file_only IS NOT 1").all();
  } catch {
    try {
      // A schema older than file_only.
      db = new Database(oldPath, { readonly: true });
      sessions = db.query<{ id: string; file: string | null }, []>("SELECT id, file FROM session WHERE file IS NOT NULL").all();
    } catch {
      return { recovered: 0, unreadable: null };
    }
  }
  let recovered = 0;
  let unreadable = 0;
  for (const s of sessions) {
    try {
      const bodies = db.query<{ id: string; body: string }, [string]>("SELECT id, body FROM entry WHERE session_id = ?1 ORDER BY seq").all(s.id);
      if (!existsSync(s.file!)) continue; // no file: nothing to complete (its header is gone with the database)
      const source = readJsonl(s.file!);
      if (source.tornTail) throw new Error("a torn last line"); // appending after it would join the two
      const have = new Set<string>();
      for (const row of source.entries()) have.add(row.entry.id);
      const missing = bodies.filter((b) => !have.has(b.id));
      if (missing.length > 0) appendFileSync(s.file!, missing.map((b) => `${b.body}\n`).join(""));
      recovered += missing.length;
    } catch {
      unreadable++;
    }
  }
  db.close(false);
  return { recovered, unreadable };
}
