import { log } from "../util/log.ts";
import { catchUpFromFile } from "./file-catch-up.ts";
import { FileIndex } from "./file-index.ts";
import type { ListSessionsOptions, SearchHit, SearchOptions, SessionList, SessionMeta, SessionStore } from "./store.ts";

export interface SessionFilesOptions {
  /** The database file the store opened. */
  dbPath: string;
  /** Folders whose JSONL files are sessions too: the session folder, and the reference's own when pion reads its config. */
  dirs: readonly string[];
  /**
   * Imports a session file into `inner` in full (and continues it in place where it can): the
   * session layer's import, given by the composition root. Returns the session id.
   */
  importFile: (path: string) => string;
  /** List the folders' files at once (a database made anew), not on the first listing. */
  indexNow?: boolean;
}

/**
 * `inner` with the session files it does not know (file-index.ts) in its answers: listed from
 * a summary of each (read again when the file changes, dropped when it is gone), imported in full
 * when one is opened (by id, by its file, or for a search, which reads every entry).
 */
export function withSessionFiles(inner: SessionStore, o: SessionFilesOptions): SessionStore {
  const index = new FileIndex(o.dbPath, o.dirs);
  const refresh = () => {
    try {
      index.refresh();
    } catch (err) {
      log("store", "the session folder could not be listed; sessions the database holds are shown", { error: err instanceof Error ? err.message : String(err) });
    }
  };
  if (o.indexNow) refresh();
  /** Brings in the file of a listed-only session; the id is a stored session afterwards. */
  const opened = (sessionId: string): void => {
    const file = index.fileOnly(sessionId);
    if (file === undefined) return;
    index.forget(sessionId);
    try {
      o.importFile(file);
    } catch (err) {
      // Another process opening the same file imported it first: it is stored all the same.
      if ((err as { code?: string }).code === "session_exists" && inner.getSession(sessionId)) return;
      throw err;
    }
  };
  const overrides: Partial<SessionStore> = {
    listSessions(options?: ListSessionsOptions): SessionList {
      refresh();
      return inner.listSessions(options);
    },
    searchSessions(options: SearchOptions): SearchHit[] {
      refresh();
      for (const s of index.allFileOnly(options.cwd)) {
        try {
          opened(s.id);
        } catch (err) {
          log("store", "a session file could not be imported for the search; it is left out", { path: s.file, error: err instanceof Error ? err.message : String(err) });
        }
      }
      return inner.searchSessions(options);
    },
    getSession(sessionId: string): SessionMeta | undefined {
      let meta = inner.getSession(sessionId);
      if (!meta) {
        refresh();
        meta = inner.getSession(sessionId);
      }
      if (!meta || index.fileOnly(sessionId) === undefined) return meta;
      opened(sessionId);
      return inner.getSession(sessionId);
    },
    findSessionByFile(path: string): SessionMeta | undefined {
      const meta = inner.findSessionByFile(path);
      if (!meta || index.fileOnly(meta.header.id) === undefined) return meta;
      opened(meta.header.id);
      return inner.getSession(meta.header.id);
    },
    acquireSession(sessionId: string): void {
      if (index.fileOnly(sessionId) !== undefined) opened(sessionId);
      else catchUpFromFile(inner, sessionId);
      inner.acquireSession(sessionId);
    },
    close(): void {
      index.close();
      inner.close();
    },
  };
  return new Proxy(inner, {
    get(target, key, receiver) {
      const own = (overrides as Record<PropertyKey, unknown>)[key];
      if (own !== undefined) return own;
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      if (!BY_SESSION.has(key)) return value.bind(target);
      // A listed-only session is read or written only once its file is in.
      return (sessionId: string, ...rest: unknown[]) => {
        if (index.fileOnly(sessionId) !== undefined) opened(sessionId);
        return value.call(target, sessionId, ...rest);
      };
    },
  });
}

/** The store's methods that read or write one session, named by their first argument. */
const BY_SESSION: ReadonlySet<PropertyKey> = new Set<keyof SessionStore>([
  "append", "appendMany", "grantedRules", "entries", "chainPages", "bodyPages", "contextMessages", "entryIndex",
  "bodyReader", "messageReader", "entriesSince", "entriesPage", "entryCount", "getEntry", "setLeaf",
  "acquireSession", "setSessionCache",
]);
