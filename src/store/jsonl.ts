import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import * as v from "valibot";
import { PionError } from "../util/errors.ts";
import type { Entry, SessionHeader } from "./entries.ts";
import { CHECK_FROM_BYTES, startImportCheck } from "./import-checker.ts";
import { checkTree, confirmMessage, entryLineBytes, keptAsBytes, type Loose, lineText, migrateV1, migrateV2, parsed, type QuickMessage, quickMessage, type RawRecord, records } from "./jsonl-lines.ts";
import type { StoredEntry } from "./store.ts";

/*
 * The reference agent's session file: a header line, then one entry per line.
 * v1: no ids (a linear list); compactions point at `firstKeptEntryIndex` (a line index).
 * v2: `id`/`parentId` tree. v3: message role `hookMessage` renamed `custom`.
 * Entry kinds and message roles pion does not model (`usage`, `context_edit`, system-role
 * messages, ...) are kept as parsed, so they round-trip through the store and the export.
 */

export const JSONL_VERSION = 3;
const HEADER_WINDOW = 4096;

export const headerLine = (header: SessionHeader): string => `${JSON.stringify(header)}\n`;
export const entryLine = (entry: Entry): string => `${JSON.stringify(entry)}\n`;

/**
 * A session file being read: the header is checked at once; `entries()` reads the file again a
 * window at a time and parses, checks and migrates one line at a time, so a large file is never
 * held in memory, as text or as objects (the import writes each entry to the store as it comes).
 */
export interface JsonlSource {
  header: SessionHeader;
  /** The version the file was written in. */
  version: number;
  /** A last line that was not complete JSON (a crash mid-write); it is skipped. */
  tornTail: boolean;
  /**
   * Migrated to v3, in file order, each with its JSON: the line as written when migration left
   * it unchanged. Throws naming the line of an invalid one.
   */
  entries(): Generator<StoredEntry>;
  /**
   * For an import into the store: `entries()`, except that a message line whose row can be read
   * from its bytes (quickMessage, keptAsBytes) is neither decoded nor parsed: its entry holds what its row needs only
   * (type, id, parent id, time, role; the first user message is parsed whole, for the session's first
   * message), and its body is the line's bytes in the reader's window, which the next row reuses
   * (write each row before taking the next). Its message is still to be confirmed as JSON: by the
   * store as it writes the row (StoredEntry.unconfirmed), or, in a file of CHECK_FROM_BYTES or more,
   * by a thread that reads the file meanwhile (import-check.ts). `agreed()`, once every row is
   * written, waits for that thread: false means a message is not JSON, like an UnconfirmedRow from
   * the store, and the import must be redone from `entries()`. A v1 file is `entries()`.
   */
  importRows(): { rows: Generator<StoredEntry>; agreed(): boolean };
}

/** Opens a session file written by the reference agent or by pion, for a streaming read (see JsonlSource). */
export function readJsonl(path: string): JsonlSource {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch (err) {
    const missing = err instanceof Error && "code" in err && err.code === "ENOENT";
    throw new PionError(
      missing ? `Session file not found: ${path}` : `Cannot read session file ${path}: ${String(err)}`,
      missing ? "session_not_found" : "invalid_jsonl",
    );
  }
  let stopAt: number;
  let tornTail: boolean;
  let first: RawRecord | undefined;
  try {
    ({ stopAt, torn: tornTail } = completeEnd(fd));
    // The header only: a small window (it grows for a longer line), not the import's megabyte.
    first = records(fd, stopAt, path, HEADER_WINDOW).next().value;
  } finally {
    closeSync(fd);
  }
  const parsedHeader = v.safeParse((headerRecord ??= makeHeaderRecord()), first?.value);
  if (!first || !parsedHeader.success) {
    throw new PionError(`${path} is not a session file: its first line is not a session header`, "invalid_jsonl");
  }
  const h = parsedHeader.output;
  const version = h.version ?? 1;
  if (version > JSONL_VERSION) {
    throw new PionError(`${path} is session format v${version}; this pion reads up to v${JSONL_VERSION}`, "invalid_jsonl");
  }
  const header: SessionHeader = {
    type: "session",
    version: JSONL_VERSION,
    id: h.id,
    timestamp: h.timestamp,
    cwd: h.cwd ?? "",
    ...(h.parentSession !== undefined ? { parentSession: h.parentSession } : {}),
  };
  function* entries(): Generator<StoredEntry> {
    const fd = openSync(path, "r");
    try {
      if (version < 2) {
        // v1 files (no ids) come from old versions and are small: migrated as a whole.
        const lines = records(fd, stopAt, path);
        lines.next(); // the header
        for (const e of migrateV1([...lines], first!, path)) {
          migrateV2(e);
          yield { entry: e as unknown as Entry, body: JSON.stringify(e) };
        }
        return;
      }
      for (const l of entryLineBytes(fd, stopAt)) yield treeRow(l.line, lineText(l), quickMessage(l.buf, l.start, l.end));
    } finally {
      closeSync(fd);
    }
  }
  /**
   * A line after the header as its row. A message line in the usual layout is its first fields and
   * its message parsed from the rest (quickMessage): the row then knows where the message starts. Any
   * other line is parsed whole; where nothing is migrated its body is the line as written, and a parse
   * cannot tell that nothing follows the message (a field written twice keeps its first place).
   */
  const treeRow = (line: number, text: string, q: QuickMessage | undefined): StoredEntry => {
    const message = q && q.role !== "hookMessage" ? confirmMessage(q, text) : undefined;
    if (q && message) return { entry: quickEntry(q, message), body: text, messageAt: q.at };
    const e = checkTree(parsed(line, text, path), path);
    if (version < 3 && migrateV2(e)) return { entry: e as unknown as Entry, body: JSON.stringify(e) };
    return { entry: e as unknown as Entry, body: text, messageAt: null };
  };
  function* quickRows(confirmHere: boolean): Generator<StoredEntry> {
    const fd = openSync(path, "r");
    try {
      let userSeen = false;
      for (const l of entryLineBytes(fd, stopAt)) {
        const q = quickMessage(l.buf, l.start, l.end);
        if (q && q.role !== "hookMessage" && (userSeen || q.role !== "user")) {
          const bytes = l.buf.subarray(l.start, l.end);
          if (keptAsBytes(bytes, q)) {
            const row: StoredEntry = { entry: quickEntry(q, { role: q.role }), body: bytes, messageAt: q.at };
            if (confirmHere) row.unconfirmed = true;
            yield row;
            continue;
          }
        }
        const row = treeRow(l.line, lineText(l), q);
        if (row.entry.type === "message" && row.entry.message.role === "user") userSeen = true;
        yield row;
      }
    } finally {
      closeSync(fd);
    }
  }
  const importRows = () => {
    if (version < 2) return { rows: entries(), agreed: () => true };
    const check = stopAt >= CHECK_FROM_BYTES ? startImportCheck(path, stopAt) : undefined;
    return { rows: quickRows(check === undefined), agreed: () => check?.agreed() ?? true };
  };
  return { header, version, tornTail, entries, importRows };
}

const quickEntry = (q: QuickMessage, message: Loose): Entry =>
  ({ type: "message", id: q.id, parentId: q.parentId, timestamp: q.timestamp, message }) as unknown as Entry;

/** Built on the first file read. */
const makeHeaderRecord = () =>
  v.looseObject({
    type: v.literal("session"),
    id: v.string(),
    timestamp: v.string(),
    cwd: v.optional(v.string()),
    version: v.optional(v.number()),
    parentSession: v.optional(v.string()),
  });
let headerRecord: ReturnType<typeof makeHeaderRecord> | undefined;

/**
 * Where the file's complete lines end. A last line that is not JSON is a write cut short by a
 * crash (everything before it is intact): it is left out. Reads the file's tail only.
 */
function completeEnd(fd: number): { stopAt: number; torn: boolean } {
  const size = fstatSync(fd).size;
  const TAIL = 1 << 16;
  const buf = Buffer.allocUnsafe(TAIL);
  // Skip trailing whitespace, then find the start of the last line.
  let end = size;
  let start = -1;
  const parts: Buffer[] = [];
  for (let pos = size; pos > 0 && start < 0; ) {
    const from = Math.max(0, pos - TAIL);
    const n = readSync(fd, buf, 0, pos - from, from);
    let i = n - 1;
    if (end === pos) {
      while (i >= 0 && isSpace(buf[i]!)) i--;
      end = from + i + 1;
      if (i < 0) {
        pos = from;
        continue;
      }
    }
    const nl = buf.lastIndexOf(10, i);
    if (nl !== -1) start = from + nl + 1;
    else if (from === 0) start = 0;
    parts.unshift(Buffer.from(buf.subarray(nl + 1, i + 1)));
    pos = from;
  }
  if (start < 0 || end <= start || parses(Buffer.concat(parts).toString("utf8"))) return { stopAt: size, torn: false };
  return { stopAt: start, torn: true };
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

function parses(line: string): boolean {
  try {
    JSON.parse(line);
    return true;
  } catch {
    return false;
  }
}
