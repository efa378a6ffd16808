/**
 * The reference's `SessionManager` class. `create(cwd, sessionDir?)` starts a session whose file
 * (`<sessionDir>/<timestamp>_<id>.jsonl`, by default in the session folder for `cwd` under pion's
 * home, where pion's session list finds it) is written in the reference's v3 format once it holds
 * a conversation (session-manager-file.ts); `open(path, sessionDir?, cwdOverride?)` continues a
 * session file (a missing one is started there, as the reference does) and appends to it;
 * `inMemory(cwd, options, entries)` keeps its entries in memory. All three can be appended to,
 * started afresh (`newSession`) or cut down to one branch (`createBranchedSession`)
 * (session-manager-writes.ts), and answer the same reads as `ctx.sessionManager` (context-members.ts).
 * The finding statics (`continueRecent`, `findById`, `list`, `listAll`) read the folders' files
 * (session-manager-list.ts); `forkFrom` copies another file's entries into a new session here.
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pionHome } from "../../config.ts";
import { sessionDirFor, sessionFileName } from "../../store/paths.ts";
import { sessionManagerView } from "../context-members.ts";
import type { ExtensionSessionPort, SessionControl } from "../types.ts";
import { readLooseEntries, readSessionFile, SessionFile, type FileEntry as Entry } from "./session-manager-file.ts";
import { managerWrites, newHeader, type ManagerState } from "./session-manager-writes.ts";
import {
  cwdMatches,
  listAllFolders,
  listFolder,
  mostRecentSession,
  newestFirst,
  normalizedPath,
  resolvedPath,
  sessionFileById,
  type ListProgress,
  type SessionInfo,
} from "./session-manager-list.ts";
import { JsonlAppender } from "../../store/jsonl-export.ts";

type Rec = Record<string, unknown>;

function view(s: ManagerState) {
  const control: Partial<SessionControl> = {
    header: () => s.header,
    file: () => s.file?.path,
    sessionId: () => String(s.header.id ?? ""),
    leafId: () => s.leaf,
    entries: () => [...s.entries],
    entry: (id) => s.byId.get(id),
    branch: (fromId) => {
      const out: Entry[] = [];
      for (let e = s.byId.get(fromId ?? s.leaf ?? ""); e; e = e.parentId ? s.byId.get(e.parentId) : undefined) out.push(e);
      return out.reverse();
    },
    name: () => String(s.entries.findLast((e) => e.type === "session_info")?.name ?? "").trim() || undefined,
  };
  return sessionManagerView({
    get cwd() {
      return s.cwd;
    },
    control: () => control as SessionControl,
  } as ExtensionSessionPort);
}

/** The reference's default session folder for `cwd`: `<agent dir>/sessions/--<cwd>--` (pion's home is the agent dir), created. */
function defaultSessionDir(cwd: string): string {
  const dir = sessionDirFor(resolve(pionHome(), "sessions"), cwd);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  return dir;
}

const states = new WeakMap<object, ManagerState>();

/**
 * A persisted manager's file, written now if it holds no conversation yet (its header and
 * entries so far), so another reader can open it: `runRpcMode` hands the session to pion's own
 * RPC mode that way. Undefined for a manager in memory (or not this module's).
 */
export function sessionFileNow(manager: unknown): string | undefined {
  const s = manager && typeof manager === "object" ? states.get(manager) : undefined;
  if (!s?.file) return undefined;
  if (!s.file.flushed) s.file.rewrite(s.header, s.entries);
  return s.file.path;
}

/** The reference's rule for a session id given by the caller. */
export function assertValidSessionId(id: string): void {
  if (!/^[A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?$/.test(id)) {
    throw new Error("Session id must be non-empty, contain only letters, digits, '-', '_' and '.', and start and end with a letter or digit");
  }
}

/**
 * The session folder of a static (`sessionDir` as given, `~` and a file URL read; by default the
 * folder for `cwd`, created, as the reference does) and, for a custom folder that is not that
 * default one, the cwd whose sessions alone count there.
 */
function folderFor(cwd: string, sessionDir: string | undefined): { dir: string; filter?: string } {
  if (!sessionDir) return { dir: defaultSessionDir(resolvedPath(cwd)) };
  const dir = normalizedPath(sessionDir);
  return resolve(dir) === sessionDirFor(resolve(pionHome(), "sessions"), resolvedPath(cwd)) ? { dir } : { dir, filter: cwd };
}

export class SessionManager {
  /** `file`: where a persisted manager writes (none in memory); `sessionDir`: where its new sessions go. */
  constructor(cwd: string, header: Rec, entries: Entry[], file?: SessionFile, sessionDir = "") {
    const s: ManagerState = { header, leaf: entries.at(-1)?.id ?? null, entries, byId: new Map(entries.map((e) => [e.id, e])), cwd: resolve(cwd), sessionDir, file };
    if (file && sessionDir && !existsSync(sessionDir)) mkdirSync(sessionDir, { recursive: true, mode: 0o700 });
    states.set(this, s);
    Object.assign(this, view(s), managerWrites(s), {
      isPersisted: () => s.file !== undefined,
      getSessionDir: () => s.sessionDir,
      usesDefaultSessionDir: () => s.file !== undefined && resolve(s.sessionDir) === sessionDirFor(resolve(pionHome(), "sessions"), s.cwd),
      getEntryCount: () => s.entries.length,
      getChildren: (parentId: string) => s.entries.filter((e) => e.parentId === parentId),
      /** Continue in another session file (read if it exists, started there if not). */
      setSessionFile: (path: string) => Object.assign(s, SessionManager.#fromFile(resolve(path), s.cwd)),
    });
  }

  /** The state a persisted manager starts from for the file at `path`. */
  static #fromFile(path: string, cwd: string): Pick<ManagerState, "header" | "entries" | "byId" | "leaf" | "file"> {
    const read = readSessionFile(path);
    const file = new SessionFile(path, read.kind === "read");
    const header = read.kind === "read" ? read.header : newHeader(cwd);
    const entries = read.kind === "read" ? read.entries : [];
    // An empty file becomes a session at once: its header is written (the reference does the same).
    if (read.kind === "empty") file.rewrite(header, entries);
    return { header, entries, byId: new Map(entries.map((e) => [e.id, e])), leaf: entries.at(-1)?.id ?? null, file };
  }

  /** A new session in `sessionDir` (default: the session folder for `cwd`); its file is written once it holds a conversation. */
  static create(cwd: string, sessionDir?: string, options?: { id?: string; parentSession?: string }): SessionManager {
    const dir = sessionDir ? resolve(sessionDir) : defaultSessionDir(cwd);
    const header = newHeader(resolve(cwd), options?.parentSession, options?.id);
    return new SessionManager(cwd, header, [], new SessionFile(join(dir, sessionFileName(String(header.timestamp), String(header.id))), false), dir);
  }

  /**
   * The session in the file at `path`, appended to from now on; a missing file is a new session
   * written there later. `sessionDir` (default: the file's folder) is where its new sessions go;
   * `cwdOverride` replaces the header's folder as the session's cwd.
   */
  static open(path: string, sessionDir?: string, cwdOverride?: string): SessionManager {
    const file = resolve(path);
    const dir = sessionDir ? resolve(sessionDir) : resolve(file, "..");
    const start = SessionManager.#fromFile(file, cwdOverride ?? process.cwd());
    const cwd = cwdOverride ?? (typeof start.header.cwd === "string" && start.header.cwd ? start.header.cwd : process.cwd());
    return new SessionManager(cwd, start.header, start.entries, start.file, dir);
  }

  /**
   * The folder's most recently modified session (with a custom folder: of `cwd`'s sessions),
   * continued with `cwd` as its cwd; else a new one there. The folder is kept as given (a relative
   * one stays relative in `getSessionDir`, as in the reference).
   */
  static continueRecent(cwd: string, sessionDir?: string): SessionManager {
    const { dir, filter } = folderFor(cwd, sessionDir);
    const recent = mostRecentSession(dir, filter);
    if (recent) {
      const start = SessionManager.#fromFile(resolve(recent), resolvedPath(cwd));
      return new SessionManager(resolvedPath(cwd), start.header, start.entries, start.file, dir);
    }
    const header = newHeader(resolvedPath(cwd));
    return new SessionManager(resolvedPath(cwd), header, [], new SessionFile(join(dir, sessionFileName(String(header.timestamp), String(header.id))), false), dir);
  }

  /**
   * A new session in `targetCwd`'s folder (or `sessionDir`) holding every entry of the file at
   * `sourcePath` as written (not migrated, not checked, as the reference copies them), its header
   * naming that file as parent. The source must start with a session header.
   */
  static forkFrom(sourcePath: string, targetCwd: string, sessionDir?: string, options?: { id?: string }): SessionManager {
    const source = resolvedPath(sourcePath);
    const cwd = resolvedPath(targetCwd);
    const read = readLooseEntries(source);
    if (read.length === 0) throw new Error(`Cannot fork: source session file is empty or invalid: ${source}`);
    const dir = sessionDir ? normalizedPath(sessionDir) : defaultSessionDir(cwd);
    if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (options?.id !== undefined) assertValidSessionId(options.id);
    const header = newHeader(cwd, source, options?.id);
    const entries = read.filter((e) => e.type !== "session") as Entry[];
    const path = resolve(join(dir, sessionFileName(String(header.timestamp), String(header.id))));
    const out = JsonlAppender.open(path, "wx");
    try {
      out.write([header, ...entries].map((e) => `${JSON.stringify(e)}\n`).join(""));
    } finally {
      out.close();
    }
    // Built from what was written, not read back: pion's strict reader would refuse entries the reference keeps.
    return new SessionManager(cwd, header, entries, new SessionFile(path, true), dir);
  }

  /** The file of the session with exactly this id in the folder (with a custom folder: of `cwd`'s sessions), or undefined. */
  static findById(cwd: string, id: string, sessionDir?: string): string | undefined {
    const { dir, filter } = folderFor(cwd, sessionDir);
    return sessionFileById(dir, id, filter);
  }

  /** The folder's sessions (with a custom folder: `cwd`'s), newest first. */
  static async list(cwd: string, sessionDir?: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
    const { dir, filter } = folderFor(cwd, sessionDir);
    const want = filter === undefined ? undefined : resolvedPath(filter);
    const keep = (s: SessionInfo) => want === undefined || cwdMatches(s.cwd, want);
    const progress: ListProgress | undefined = onProgress && ((loaded, total, partial) => onProgress(loaded, total, partial?.filter(keep)));
    return newestFirst((await listFolder(dir, progress, signal)).filter(keep));
  }

  /** Every folder's sessions under pion's sessions directory (or under `sessionDir` alone), newest first. */
  static async listAll(sessionDirOrProgress?: string | ListProgress, progressOrSignal?: ListProgress | AbortSignal, signal?: AbortSignal): Promise<SessionInfo[]> {
    const progress = typeof sessionDirOrProgress === "function" ? sessionDirOrProgress : typeof progressOrSignal === "function" ? progressOrSignal : undefined;
    const abort = typeof sessionDirOrProgress === "string" || typeof progressOrSignal === "function" ? signal : ((progressOrSignal as AbortSignal | undefined) ?? signal);
    abort?.throwIfAborted();
    // An empty folder name means the default, as in the reference.
    const custom = typeof sessionDirOrProgress === "string" ? normalizedPath(sessionDirOrProgress) : "";
    if (custom) return newestFirst(await listFolder(custom, progress, abort));
    return listAllFolders(resolve(pionHome(), "sessions"), progress, abort);
  }

  static inMemory(cwd: string = process.cwd(), options?: { id?: string; parentSession?: string }, entries: Entry[] = []): SessionManager {
    const given = entries[0]?.type === "session" ? (entries[0] as Rec) : undefined;
    const header = given ?? newHeader(resolve(cwd), options?.parentSession, options?.id);
    return new SessionManager(cwd, header, entries.filter((e) => e.type !== "session"));
  }
}
