import { Database } from "bun:sqlite";
import { existsSync, readdirSync, realpathSync, statSync } from "node:fs";
import { join } from "node:path";
import { log } from "../util/log.ts";
import { summarizeFile } from "./file-summary.ts";

/*
 * JSONL session files the database did not write or import: the reference's, in a flat
 * `--session-dir` or in `--<cwd>--/` folders, or pion's own after its database was lost. Each is
 * a `session` row with `file_only` set and no entries (see the schema), listed and found by id
 * like any session; the file is imported when the session is opened (session-files.ts).
 */

interface KnownFile {
  id: string;
  file: string;
  file_only: number | null;
  file_size: number | null;
  file_mtime: number | null;
}

/** The session id in a file name `<time>_<id>.jsonl`, as pion and the reference name them. */
const idInName = (path: string): string => path.slice(path.lastIndexOf("_") + 1, -".jsonl".length);

/** A `--<cwd>--` folder, as the reference names them. */
const CWD_FOLDER = /^--.*--$/;

export class FileIndex {
  private readonly db: Database;

  /** `dbPath`: a database the store has opened (and migrated) already. */
  constructor(dbPath: string, private readonly dirs: readonly string[]) {
    this.db = new Database(dbPath, { readwrite: true, strict: true });
    this.db.run("PRAGMA busy_timeout = 10000");
  }

  /** The file of a listed-only session, undefined for any other. */
  fileOnly(sessionId: string): string | undefined {
    return this.db.query<{ file: string }, [string]>("SELECT file FROM session WHERE id = ?1 AND file_only = 1").get(sessionId)?.file;
  }

  /** Listed-only sessions (of `cwd` when given). */
  allFileOnly(cwd?: string): { id: string; file: string }[] {
    return this.db
      .query<{ id: string; file: string }, [string | null]>("SELECT id, file FROM session WHERE file_only = 1 AND (?1 IS NULL OR cwd = ?1)")
      .all(cwd ?? null);
  }

  /** Drops a listed-only row before its file is imported (the import writes the session's real row). */
  forget(sessionId: string): void {
    this.db.query("DELETE FROM session WHERE id = ?1 AND file_only = 1").run(sessionId);
  }

  /**
   * Brings the listed-only rows up to date with the folders: a new file is summed up, one whose
   * size or mtime changed is summed up again, a row whose file is gone is dropped. Files of
   * sessions the database holds are not read (nor stat'ed). Returns how many files were read.
   */
  refresh(): number {
    const known = new Map<string, KnownFile>();
    for (const row of this.db.query<KnownFile, []>("SELECT id, file, file_only, file_size, file_mtime FROM session WHERE file IS NOT NULL").all()) {
      known.set(row.file, row);
    }
    // A file named for a session the database holds (`<time>_<id>.jsonl`) is that session's, by whatever path.
    const stored = new Set<string>();
    for (const row of known.values()) if (!row.file_only) stored.add(row.id);
    const skip = new Map<string, { size: number; mtime: number }>();
    for (const row of this.db.query<{ path: string; size: number; mtime: number }, []>("SELECT path, size, mtime FROM file_skip").all()) skip.set(row.path, row);
    const seen = new Set<string>();
    const todo: { path: string; size: number; mtime: number; replace: boolean }[] = [];
    for (const path of this.files()) {
      seen.add(path);
      const row = known.get(path);
      if (row ? !row.file_only : stored.has(idInName(path))) continue;
      let st;
      try {
        st = statSync(path);
      } catch {
        continue; // gone meanwhile
      }
      if (row && row.file_size === st.size && row.file_mtime === st.mtimeMs) continue;
      const skipped = skip.get(path);
      if (!row && skipped && skipped.size === st.size && skipped.mtime === st.mtimeMs) continue;
      todo.push({ path, size: st.size, mtime: st.mtimeMs, replace: row !== undefined });
    }
    const gone = [...known.values()].filter((r) => r.file_only && !seen.has(r.file) && !existsSync(r.file));
    if (todo.length === 0 && gone.length === 0) return 0;
    const insert = this.db.query(
      `INSERT OR IGNORE INTO session (id, cwd, name, parent_session, file, created_at, updated_at, header, first_message,
         message_count, entry_count, file_only, file_size, file_mtime)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 0, 1, ?11, ?12)`,
    );
    const drop = this.db.query("DELETE FROM session WHERE file = ?1 AND file_only = 1");
    const skipFile = this.db.query("INSERT OR REPLACE INTO file_skip (path, size, mtime) VALUES (?1, ?2, ?3)");
    this.db
      .transaction(() => {
        for (const r of gone) drop.run(r.file);
        for (const f of todo) {
          if (f.replace) drop.run(f.path);
          let s;
          try {
            s = summarizeFile(f.path);
          } catch (err) {
            log("store", "a session file could not be read; it is left out of the list", { path: f.path, error: err instanceof Error ? err.message : String(err) });
            continue;
          }
          const h = s?.header;
          const added = s && h ? insert.run(h.id, h.cwd, s.name, h.parentSession ?? null, f.path, h.timestamp, s.updatedAt, JSON.stringify(h), s.firstMessage, s.messageCount, f.size, f.mtime).changes : 0;
          // Not a session file, or one whose id the database holds by another file.
          if (added === 0) skipFile.run(f.path, f.size, f.mtime);
        }
      })
      .immediate();
    return todo.length;
  }

  /** Every `.jsonl` file in the folders and their `--<cwd>--` subfolders, by real path. */
  private *files(): Generator<string> {
    for (const dir of this.dirs) {
      let real: string;
      try {
        real = realpathSync(dir);
      } catch {
        continue; // no such folder: nothing to list
      }
      for (const d of readdirSync(real, { withFileTypes: true })) {
        if (d.isFile() && d.name.endsWith(".jsonl")) yield join(real, d.name);
        else if (d.isDirectory() && CWD_FOLDER.test(d.name)) {
          const sub = join(real, d.name);
          for (const name of readdirSync(sub)) if (name.endsWith(".jsonl")) yield join(sub, name);
        }
      }
    }
  }

  close(): void {
    this.db.close(false);
  }
}
