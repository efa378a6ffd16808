import { join } from "node:path";
import { piAgentDir } from "../config-dirs.ts";
import { locateSession } from "../session/navigation.ts";
import type { SessionHeader } from "../store/entries.ts";
import { withJsonlExport } from "../store/jsonl-export.ts";
import { databasePath } from "../store/paths.ts";
import { withSessionFiles } from "../store/session-files.ts";
import { withStorageErrors } from "../store/storage-guard.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import { corruption, type Recovery, setAside } from "../store/db-recovery.ts";
import { log } from "../util/log.ts";
import { asStorageError, damagedMarker } from "../store/storage-error.ts";
import { existsSync, rmSync, statSync } from "node:fs";
import type { SessionStore } from "../store/store.ts";

export interface SessionFolder {
  /** The sessions base directory (`--session-dir`, the setting, or `$PION_HOME/sessions`). */
  base: string;
  /** Whether the folder was named (`--session-dir`, env, setting): then the reference's default folder is not read. */
  named: boolean;
  env: Record<string, string | undefined>;
  /** Where an imported file that cannot be continued in place (v1, v2, a torn tail) gets its v3 copy. */
  fileFor: (h: SessionHeader) => string | undefined;
  /** Told (besides the stderr line) when an unusable database was moved aside and made anew. */
  onRecovery?: (r: Recovery) => void;
}

/**
 * The session database of `base`, writing each session's JSONL export, with every session file of
 * the folder in its answers (store/session-files.ts); without a named folder, the reference's own
 * default one (`~/.pi/agent/sessions`) too.
 */
export function openSessionFolder(f: SessionFolder): SessionStore {
  const dbPath = databasePath(f.base);
  // A database made anew (missing, or one set aside) is filled from the files at once.
  let indexNow = !existsSync(dbPath) || statSync(dbPath).size === 0;
  const store = withJsonlExport(
    openUsable(dbPath, (r) => {
      indexNow = true;
      f.onRecovery?.(r);
    }),
  );
  const dirs = f.named ? [f.base] : [f.base, join(piAgentDir(f.env), "sessions")];
  const importFile = (path: string) => locateSession(store, path, f.base, f.fileFor);
  return withStorageErrors(withSessionFiles(store, { dbPath, dirs, importFile, indexNow }), dbPath);
}

const CORRUPT_CODES = new Set(["SQLITE_NOTADB", "SQLITE_CORRUPT"]);

/** The database, after one that is not usable was moved aside (db-recovery.ts). */
function openUsable(dbPath: string, onRecovery?: (r: Recovery) => void): SessionStore {
  const aside = (why: string) => {
    const r = setAside(dbPath, why);
    rmSync(damagedMarker(dbPath), { force: true });
    log("store", r.message);
    onRecovery?.(r);
  };
  try {
    const marked = existsSync(damagedMarker(dbPath)) && existsSync(dbPath);
    const why = marked ? "SQLite reported it damaged while in use" : corruption(dbPath);
    if (why) aside(why);
    try {
      return openSqliteStore(dbPath);
    } catch (err) {
      const code = (err as { code?: string }).code ?? "";
      if (why || !CORRUPT_CODES.has(code.replace(/_[A-Z]+$/, "")) && !CORRUPT_CODES.has(code)) throw err;
      aside(`SQLite reported ${code}`);
      return openSqliteStore(dbPath);
    }
  } catch (err) {
    throw asStorageError(err, dbPath);
  }
}
