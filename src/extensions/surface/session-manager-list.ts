/**
 * Finding session files as the reference's SessionManager statics do (session-manager.ts):
 * `continueRecent`'s most recent file of a folder, `findById`, and `list` / `listAll`'s
 * SessionInfo (path, id, cwd, name, parent, created, modified: the last user or assistant
 * message's time, else the header's; message count, the first user text, all the text), newest
 * first. Discovery is best-effort: a file that is not a session (no header on its first line,
 * unreadable) is skipped, and pion's own `pion.db` beside the folders is no folder of sessions.
 * pion's sessions are listed like the reference's: their JSONL exports have the same layout.
 */
import { closeSync, createReadStream, existsSync, openSync, readdirSync, readSync, statSync, type Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { createInterface } from "node:readline";

type Rec = Record<string, unknown>;

export interface SessionInfo {
  path: string;
  id: string;
  cwd: string;
  name?: string;
  parentSessionPath?: string;
  created: Date;
  modified: Date;
  messageCount: number;
  firstMessage: string;
  allMessagesText: string;
}

export type ListProgress = (loaded: number, total: number, partial?: SessionInfo[]) => void;

/** The header of a session file (its first line, when it is one), or undefined. */
export function sessionHeaderOf(path: string): Rec | undefined {
  let fd: number | undefined;
  try {
    // The header is one short line: the first 64 KiB hold it, and a large file is never read whole.
    fd = openSync(path, "r");
    const buf = Buffer.alloc(65536);
    const n = readSync(fd, buf, 0, buf.length, 0);
    const line = buf.subarray(0, n).toString("utf8").split("\n", 1)[0]!.trim();
    const parsed = JSON.parse(line) as Rec;
    return parsed && parsed.type === "session" && typeof parsed.id === "string" ? parsed : undefined;
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

const sameCwd = (header: Rec, cwd: string): boolean => typeof header.cwd === "string" && header.cwd !== "" && resolve(header.cwd) === resolve(cwd);

const jsonlIn = (dir: string): string[] => {
  try {
    return readdirSync(dir).filter((f) => f.endsWith(".jsonl")).map((f) => join(dir, f));
  } catch {
    return [];
  }
};

/** The most recently written session file of `dir` (of `cwd`'s sessions only, when given). */
export function mostRecentSession(dir: string, cwd?: string): string | undefined {
  const files = jsonlIn(dir)
    .flatMap((path) => {
      try {
        return [{ path, mtime: statSync(path).mtimeMs }];
      } catch {
        return [];
      }
    })
    .sort((a, b) => b.mtime - a.mtime);
  for (const { path } of files) {
    const header = sessionHeaderOf(path);
    if (header && (!cwd || sameCwd(header, cwd))) return path;
  }
  return undefined;
}

/** The file of `dir` whose header has exactly `id` (of `cwd`'s sessions only, when given). */
export function sessionFileById(dir: string, id: string, cwd?: string): string | undefined {
  for (const path of jsonlIn(dir)) {
    const header = sessionHeaderOf(path);
    if (header?.id === id && (!cwd || sameCwd(header, cwd))) return path;
  }
  return undefined;
}

const textOf = (content: unknown): string =>
  typeof content === "string" ? content : Array.isArray(content) ? content.filter((b: Rec) => b?.type === "text").map((b: Rec) => String(b.text)).join(" ") : "";

/** One file's SessionInfo, or null for a file that is not a session. */
async function sessionInfoOf(path: string, stats?: Stats): Promise<SessionInfo | null> {
  try {
    const st = stats ?? (await stat(path));
    let header: Rec | undefined;
    let name: string | undefined;
    let messageCount = 0;
    let firstMessage = "";
    let lastActivity: number | undefined;
    const texts: string[] = [];
    const stream = createReadStream(path, { encoding: "utf8" });
    try {
      for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
        if (!line.trim()) continue;
        let entry: Rec;
        try {
          entry = JSON.parse(line) as Rec;
        } catch {
          continue;
        }
        if (!header) {
          if (entry.type !== "session") return null;
          header = entry;
          continue;
        }
        if (entry.type === "session_info") name = (typeof entry.name === "string" ? entry.name.trim() : "") || undefined;
        if (entry.type !== "message") continue;
        messageCount++;
        const message = entry.message as Rec | undefined;
        if (!message || typeof message.role !== "string" || !("content" in message)) continue;
        if (message.role !== "user" && message.role !== "assistant") continue;
        const at = typeof message.timestamp === "number" ? message.timestamp : new Date(String(entry.timestamp)).getTime();
        if (!Number.isNaN(at)) lastActivity = Math.max(lastActivity ?? 0, at);
        const text = textOf(message.content);
        if (!text) continue;
        texts.push(text);
        if (!firstMessage && message.role === "user") firstMessage = text;
      }
    } finally {
      stream.destroy();
    }
    if (!header) return null;
    const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : Number.NaN;
    return {
      path,
      id: String(header.id),
      cwd: typeof header.cwd === "string" ? header.cwd : "",
      name,
      parentSessionPath: header.parentSession as string | undefined,
      created: new Date(header.timestamp as string),
      modified: lastActivity !== undefined && lastActivity > 0 ? new Date(lastActivity) : !Number.isNaN(headerTime) ? new Date(headerTime) : st.mtime,
      messageCount,
      firstMessage: firstMessage || "(no messages)",
      allMessagesText: texts.join(" "),
    };
  } catch {
    return null;
  }
}

const newestFirst = (sessions: SessionInfo[]): SessionInfo[] => sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());

/** Every session of `files`, with progress after each; newest first. */
async function infosOf(files: string[], onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  const found: SessionInfo[] = [];
  let loaded = 0;
  for (const path of files) {
    signal?.throwIfAborted();
    const info = await sessionInfoOf(path);
    loaded++;
    if (info) found.push(info);
    onProgress?.(loaded, files.length, newestFirst([...found]));
  }
  signal?.throwIfAborted();
  return newestFirst(found);
}

/** The sessions of one folder (of `cwd`'s only, when given). */
export async function listSessionFiles(dir: string, cwd?: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  signal?.throwIfAborted();
  if (!existsSync(dir)) return [];
  const files = jsonlIn(dir).sort((a, b) => b.localeCompare(a));
  const keep = (s: SessionInfo) => !cwd || sameCwd({ cwd: s.cwd }, cwd);
  const progress: ListProgress | undefined = onProgress && ((loaded, total, partial) => onProgress(loaded, total, partial?.filter(keep)));
  return (await infosOf(files, progress, signal)).filter(keep);
}

/** The sessions of every folder under `root` (a sessions directory). */
export async function listAllSessionFiles(root: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  signal?.throwIfAborted();
  if (!existsSync(root)) return [];
  const dirs = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => join(root, e.name));
  const files = dirs.flatMap(jsonlIn);
  const withTimes = files.map((path) => {
    try {
      return { path, mtime: statSync(path).mtimeMs };
    } catch {
      return { path, mtime: Number.NEGATIVE_INFINITY };
    }
  });
  withTimes.sort((a, b) => b.mtime - a.mtime || b.path.localeCompare(a.path));
  return infosOf(
    withTimes.map((f) => f.path),
    onProgress,
    signal,
  );
}
