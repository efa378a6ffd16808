/**
 * The reference's session file behind a persisted SessionManager (session-manager.ts), in the v3
 * JSONL format pion's store reads and writes (store/jsonl.ts, store/jsonl-export.ts): a header
 * line, then one entry per line. As the reference does it, a new session's file is written only
 * once the session holds a user or assistant message (setup entries alone leave no file behind),
 * all at once and never over an existing file; each later entry is appended. A file opened from
 * disk is read with pion's reader (older versions migrated to v3, which rewrites the file, as the
 * reference does; a torn last line skipped and its line ended before the next append).
 * `looseLines` / `readLooseEntries` read a file as the reference does when it discovers or forks
 * sessions: every line that parses kept, nothing migrated or checked but the header.
 */
import { closeSync, existsSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import type { Entry, SessionHeader } from "../../store/entries.ts";
import { JsonlAppender } from "../../store/jsonl-export.ts";
import { fileLineBytes, lineText } from "../../store/jsonl-lines.ts";
import { entryLine, headerLine, JSONL_VERSION, readJsonl } from "../../store/jsonl.ts";

type Rec = Record<string, unknown>;
export type FileEntry = { id: string; parentId: string | null; type: string; [key: string]: unknown };

const conversation = (entries: readonly FileEntry[]): boolean =>
  entries.some((e) => e.type === "message" && ["user", "assistant"].includes((e.message as { role?: string } | undefined)?.role ?? ""));

function write(path: string, flags: "wx" | "w", header: Rec, entries: readonly FileEntry[]): void {
  const out = JsonlAppender.open(path, flags);
  try {
    out.write(headerLine(header as unknown as SessionHeader) + entries.map((e) => entryLine(e as unknown as Entry)).join(""));
  } finally {
    out.close();
  }
}

/** Whether the file's last byte ends a line (an empty file counts as ended). */
export function endsWithNewline(path: string): boolean {
  const size = statSync(path).size;
  if (size === 0) return true;
  const fd = openSync(path, "r");
  try {
    const last = Buffer.alloc(1);
    readSync(fd, last, 0, 1, size - 1);
    return last[0] === 0x0a;
  } finally {
    closeSync(fd);
  }
}

/** Where a persisted SessionManager's entries go, and whether its file is written yet. */
export class SessionFile {
  constructor(
    public path: string,
    /** The file holds the header and every entry so far (appends go on it). */
    public flushed: boolean,
  ) {}

  /** After `entries` gained `entry`: the whole file once there is a conversation, then one line per entry. */
  persist(header: Rec, entries: readonly FileEntry[], entry: FileEntry): void {
    if (this.flushed) {
      const out = JsonlAppender.open(this.path);
      try {
        out.write(entryLine(entry as unknown as Entry));
      } finally {
        out.close();
      }
      return;
    }
    if (!conversation(entries)) return;
    write(this.path, "wx", header, entries);
    this.flushed = true;
  }

  /** The file written anew from `header` and `entries` (a migration, a branch that already has a conversation). */
  rewrite(header: Rec, entries: readonly FileEntry[]): void {
    write(this.path, "w", header, entries);
    this.flushed = true;
  }

  /** Start over at `path` with nothing written: the next conversation entry writes the file. */
  moveTo(path: string): void {
    this.path = path;
    this.flushed = false;
  }

  /** Write now if `entries` hold a conversation (a branched session), else when one comes. */
  startWith(path: string, header: Rec, entries: readonly FileEntry[]): void {
    this.moveTo(path);
    if (conversation(entries)) this.rewrite(header, entries);
  }
}

/**
 * A session file as a persisted SessionManager starts from: missing (a new session written there
 * later), empty (a new session whose header is written at once), or its header and entries.
 * Throws for a file that is not a session.
 */
export function readSessionFile(path: string): { kind: "missing" } | { kind: "empty" } | { kind: "read"; header: Rec; entries: FileEntry[] } {
  if (!existsSync(path)) return { kind: "missing" };
  if (statSync(path).size === 0) return { kind: "empty" };
  const source = readJsonl(path);
  const entries = [...source.entries()].map((s) => s.entry as unknown as FileEntry);
  const header = source.header as unknown as Rec;
  if (source.version < JSONL_VERSION) write(path, "w", header, entries);
  else endLastLine(path);
  return { kind: "read", header, entries };
}

/** A torn last line (skipped by the readers) is ended, so the next entry starts a line of its own. */
function endLastLine(path: string): void {
  if (endsWithNewline(path)) return;
  const out = JsonlAppender.open(path);
  try {
    out.write("\n");
  } finally {
    out.close();
  }
}

/** A line as the reference reads one when it looks for sessions: its JSON value, or null for a blank, malformed or falsy line, which it skips. */
export function parseLooseLine(text: string): unknown {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text) || null;
  } catch {
    return null;
  }
}

/**
 * The non-blank lines of the file's first `limit` bytes, split on LF by the store's line reader.
 * The reference keeps a UTF-8 byte-order mark on the first line, which then does not parse: so
 * does this (the store's reader drops it).
 */
export function* looseLines(path: string, limit = Number.POSITIVE_INFINITY): Generator<string> {
  const fd = openSync(path, "r");
  try {
    const stopAt = Math.min(fstatSync(fd).size, limit);
    const mark = Buffer.alloc(3);
    const bom = readSync(fd, mark, 0, 3, 0) === 3 && mark[0] === 0xef && mark[1] === 0xbb && mark[2] === 0xbf;
    for (const l of fileLineBytes(fd, stopAt)) yield bom && l.start === 3 && l.line === 1 ? `\uFEFF${lineText(l)}` : lineText(l);
  } finally {
    closeSync(fd);
  }
}

/**
 * Every entry of a session file as the reference's fork reads its source: no migration, no checks
 * beyond a header (type "session" with a string id) as the first entry, else none at all; a last
 * line without its line break is ended in the file, as the reference repairs it.
 */
export function readLooseEntries(path: string): Rec[] {
  if (!existsSync(path)) return [];
  const entries = [...looseLines(path)].map(parseLooseLine).filter((e): e is Rec => e !== null);
  const header = entries[0];
  if (!header || header.type !== "session" || typeof header.id !== "string") return [];
  endLastLine(path);
  return entries;
}
