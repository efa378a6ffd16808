/**
 * The reference's `SessionManager` class. `create(cwd, sessionDir?)` starts a session whose file
 * (`<sessionDir>/<timestamp>_<id>.jsonl`, by default in the session folder for `cwd` under pion's
 * home, where pion's session list finds it) is written in the reference's v3 format once it holds
 * a conversation (session-manager-file.ts); `open(path, sessionDir?, cwdOverride?)` continues a
 * session file (a missing one is started there, as the reference does) and appends to it;
 * `inMemory(cwd, options, entries)` keeps its entries in memory. All three can be appended to,
 * started afresh (`newSession`) or cut down to one branch (`createBranchedSession`)
 * (session-manager-writes.ts), and answer the same reads as `ctx.sessionManager` (context-members.ts).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join, resolve } from "node:path";
import { pionHome } from "../../config.ts";
import { sessionDirFor, sessionFileName } from "../../store/paths.ts";
import { sessionManagerView } from "../context-members.ts";
import type { ExtensionSessionPort, SessionControl } from "../types.ts";
import { readSessionFile, SessionFile, type FileEntry as Entry } from "./session-manager-file.ts";
import { managerWrites, newHeader, type ManagerState } from "./session-manager-writes.ts";

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

  static inMemory(cwd: string = process.cwd(), options?: { id?: string; parentSession?: string }, entries: Entry[] = []): SessionManager {
    const given = entries[0]?.type === "session" ? (entries[0] as Rec) : undefined;
    const header = given ?? newHeader(resolve(cwd), options?.parentSession, options?.id);
    return new SessionManager(cwd, header, entries.filter((e) => e.type !== "session"));
  }
}
