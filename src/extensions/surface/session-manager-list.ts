/**
 * Finding session files as the reference's SessionManager statics do (session-manager.ts):
 * `continueRecent`'s most recent file of a folder, `findById`, and `list` / `listAll`'s
 * SessionInfo (path, id, cwd, name, parent, created, modified: the last user or assistant
 * message's time, else the header's; message count, the first user text, all the text), newest
 * first. Discovery is best-effort, as in the reference: a file that is not a session (its first
 * parsed line no header, unreadable, an entry the reference cannot read) is skipped, and pion's
 * own `pion.db` beside the folders is no folder of sessions. pion's sessions are listed like the
 * reference's: their JSONL exports have the same layout.
 *
 * Header discovery reads lines with the store's line reader (session-manager-file.ts,
 * looseLines); a listing reads with node's readline, as the reference does, because the two
 * split lines differently (readline also at a lone CR) and SessionInfo must match its answer.
 */
import { createReadStream, readdirSync, statSync, type Stats } from "node:fs";
import { readdir, stat } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { expandHome } from "../../util/home-path.ts";
import { looseLines, parseLooseLine } from "./session-manager-file.ts";

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

/** A path as the reference takes one from a caller: `~` expanded, a `file://` URL as its path; relative stays relative. */
export function normalizedPath(path: string): string {
  const expanded = expandHome(path);
  return expanded.startsWith("file://") ? fileURLToPath(expanded) : expanded;
}

/** normalizedPath, made absolute. */
export const resolvedPath = (path: string): string => resolve(normalizedPath(path));

// A header longer than this is not looked for: discovery never reads a large file whole.
const HEADER_SCAN_BYTES = 1024 * 1024;

/** The header of a session file (its first parsed line, when that is one: type "session", a string id), or undefined. */
export function sessionHeaderOf(path: string): Rec | undefined {
  try {
    for (const text of looseLines(path, HEADER_SCAN_BYTES)) {
      const entry = parseLooseLine(text) as Rec | null;
      if (!entry) continue;
      return entry.type === "session" && typeof entry.id === "string" ? entry : undefined;
    }
  } catch {
    // An unreadable file is no session, and must not hide the others.
  }
  return undefined;
}

/** Whether a header's cwd names `resolvedCwd` (an empty or missing one names none). */
export const cwdMatches = (cwd: unknown, resolvedCwd: string): boolean => typeof cwd === "string" && cwd !== "" && resolvedPath(cwd) === resolvedCwd;

const jsonlNames = (dir: string): string[] => readdirSync(dir).filter((f) => f.endsWith(".jsonl"));

/**
 * The most recently modified session file of `dir` (of `cwd`'s sessions only, when given). None
 * when the folder or a file in it cannot be read, as in the reference.
 */
export function mostRecentSession(dir: string, cwd?: string): string | undefined {
  const want = cwd === undefined ? undefined : resolvedPath(cwd);
  try {
    const files = jsonlNames(dir)
      .map((f) => ({ path: join(dir, f), mtime: statSync(join(dir, f)).mtimeMs }))
      .sort((a, b) => b.mtime - a.mtime);
    for (const { path } of files) {
      const header = sessionHeaderOf(path);
      if (header && (want === undefined || cwdMatches(header.cwd, want))) return path;
    }
  } catch {
    // A folder that cannot be read, or a file gone between listing and stat: nothing to continue.
  }
  return undefined;
}

/** The first file of `dir` (in directory order) whose header has exactly `id` (of `cwd`'s sessions only, when given). */
export function sessionFileById(dir: string, id: string, cwd?: string): string | undefined {
  const want = cwd === undefined ? undefined : resolvedPath(cwd);
  try {
    for (const name of jsonlNames(dir)) {
      const path = join(dir, name);
      const header = sessionHeaderOf(path);
      if (header?.id === id && (want === undefined || cwdMatches(header.cwd, want))) return path;
    }
  } catch {
    // A folder that cannot be read holds no session.
  }
  return undefined;
}

/** A user or assistant message's text: a string content, else its text blocks joined by spaces. */
const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : (content as Rec[])
        .filter((b) => b.type === "text")
        .map((b) => b.text)
        .join(" ");

/**
 * One file's SessionInfo, or null for a file that is not a session. An entry the reference's
 * listing fails on (a message entry without a message, content neither text nor an array, a
 * name that is not a string) makes the file unlisted there, so it does here: the property reads
 * below are left to throw as the reference's do, and the throw means null.
 */
async function sessionInfoOf(path: string, signal?: AbortSignal, stats?: Stats): Promise<SessionInfo | null> {
  try {
    const st = stats ?? (await stat(path));
    let header: Rec | undefined;
    let name: string | undefined;
    let messageCount = 0;
    let firstMessage = "";
    let lastActivity: number | undefined;
    const texts: string[] = [];
    // The stream gets no signal (an abort after the loop stopped would raise an error nobody
    // handles); the loop checks it instead, and the stream is closed when reading stops.
    const stream = createReadStream(path, { encoding: "utf8" });
    try {
      for await (const line of createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY })) {
        signal?.throwIfAborted();
        const entry = parseLooseLine(line) as Rec | null;
        if (!entry) continue;
        if (!header) {
          if (entry.type !== "session") return null;
          header = entry;
          continue;
        }
        // The newest name counts, an emptied one too.
        if (entry.type === "session_info") name = (entry.name as string | null | undefined)?.trim() || undefined;
        if (entry.type !== "message") continue;
        messageCount++;
        const message = entry.message as Rec;
        if (typeof message.role !== "string" || !("content" in message)) continue;
        if (message.role !== "user" && message.role !== "assistant") continue;
        const at = typeof message.timestamp === "number" ? message.timestamp : new Date(entry.timestamp as string).getTime();
        if (!Number.isNaN(at)) lastActivity = Math.max(lastActivity ?? 0, at);
        const text = textOf(message.content);
        if (!text) continue;
        texts.push(text);
        if (!firstMessage && message.role === "user") firstMessage = text;
      }
    } finally {
      stream.destroy();
    }
    // An abort while readline waited for the end of the file, after its last line.
    signal?.throwIfAborted();
    if (!header) return null;
    const headerTime = typeof header.timestamp === "string" ? new Date(header.timestamp).getTime() : Number.NaN;
    return {
      path,
      id: header.id as string,
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
    signal?.throwIfAborted();
    return null;
  }
}

export const newestFirst = (sessions: SessionInfo[]): SessionInfo[] => sessions.sort((a, b) => b.modified.getTime() - a.modified.getTime());

/** `map` over `items`, at most `limit` at a time; results in the items' order. */
async function mapLimited<T, R>(items: readonly T[], limit: number, map: (item: T, index: number) => Promise<R>, signal?: AbortSignal): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      signal?.throwIfAborted();
      const index = next++;
      out[index] = await map(items[index]!, index);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

// The reference's figures: files read at once, and how often a listing hands out its partial result.
const INFO_READS = 10;
const DISCOVERY_READS = 64;
const FOLDER_PUBLISH_EVERY = 10;
const ALL_PUBLISH_EVERY = 100;

/**
 * The sessions of one folder, in file-name order, newest name first (the caller sorts them);
 * progress after each file, with the partial result sorted at the first, every tenth and the last.
 */
export async function listFolder(dir: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  signal?.throwIfAborted();
  try {
    const names = (await readdir(dir)).filter((f) => f.endsWith(".jsonl")).sort((a, b) => b.localeCompare(a));
    const found: SessionInfo[] = [];
    let loaded = 0;
    const infos = await mapLimited(
      names,
      INFO_READS,
      async (name) => {
        const info = await sessionInfoOf(join(dir, name), signal);
        loaded++;
        if (info) found.push(info);
        const publish = loaded === 1 || loaded % FOLDER_PUBLISH_EVERY === 0 || loaded === names.length;
        onProgress?.(loaded, names.length, publish ? newestFirst([...found]) : undefined);
        return info;
      },
      signal,
    );
    return infos.filter((i) => i !== null);
  } catch {
    // A missing or unreadable folder lists nothing; an abort still ends the listing.
    signal?.throwIfAborted();
    return [];
  }
}

/**
 * The sessions of every folder under `root` (a sessions directory; files beside the folders, such
 * as pion.db, are not looked at), newest first. Files are read most recently modified first (a
 * tie by file name, newest first), so the partial result handed out at the first file, every
 * hundredth and the last holds the sessions most likely wanted.
 */
export async function listAllFolders(root: string, onProgress?: ListProgress, signal?: AbortSignal): Promise<SessionInfo[]> {
  try {
    const dirs = (await readdir(root, { withFileTypes: true })).filter((e) => e.isDirectory() || e.isSymbolicLink()).map((e) => join(root, e.name));
    const perDir = await mapLimited(
      dirs,
      DISCOVERY_READS,
      async (dir) => {
        try {
          return (await readdir(dir)).filter((f) => f.endsWith(".jsonl")).map((f) => join(dir, f));
        } catch {
          return [];
        }
      },
      signal,
    );
    const candidates = await mapLimited(
      perDir.flat(),
      DISCOVERY_READS,
      async (path): Promise<{ path: string; stats?: Stats }> => {
        try {
          return { path, stats: await stat(path) };
        } catch {
          return { path };
        }
      },
      signal,
    );
    const mtime = (c: { stats?: Stats }) => c.stats?.mtimeMs ?? Number.NEGATIVE_INFINITY;
    candidates.sort((a, b) => mtime(b) - mtime(a) || basename(b.path).localeCompare(basename(a.path)));
    const found: SessionInfo[] = [];
    let loaded = 0;
    let firstLoaded = false;
    const infos = await mapLimited(
      candidates,
      INFO_READS,
      async (c, index) => {
        const info = await sessionInfoOf(c.path, signal, c.stats);
        loaded++;
        if (index === 0) firstLoaded = true;
        if (info) found.push(info);
        const publish = firstLoaded && (index === 0 || loaded % ALL_PUBLISH_EVERY === 0 || loaded === candidates.length);
        onProgress?.(loaded, candidates.length, publish ? newestFirst([...found]) : undefined);
        return info;
      },
      signal,
    );
    return newestFirst(infos.filter((i) => i !== null));
  } catch {
    signal?.throwIfAborted();
    return [];
  }
}
