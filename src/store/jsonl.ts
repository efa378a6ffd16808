import { closeSync, fstatSync, openSync, readSync } from "node:fs";
import * as v from "valibot";
import { PionError } from "../util/errors.ts";
import { type Entry, newEntryId, type SessionHeader } from "./entries.ts";
import type { StoredEntry } from "./store.ts";

/*
 * The reference agent's session file: a header line, then one entry per line.
 * v1: no ids (a linear list); compactions point at `firstKeptEntryIndex` (a line index).
 * v2: `id`/`parentId` tree. v3: message role `hookMessage` renamed `custom`.
 * Entry kinds and message roles pion does not model (`usage`, `context_edit`, system-role
 * messages, ...) are kept as parsed, so they round-trip through the store and the export.
 */

export const JSONL_VERSION = 3;

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
    first = records(fd, stopAt, path).next().value;
  } finally {
    closeSync(fd);
  }
  const parsedHeader = v.safeParse(HeaderRecord, first?.value);
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
      const lines = records(fd, stopAt, path);
      lines.next(); // the header
      if (version < 2) {
        // v1 files (no ids) come from old versions and are small: migrated as a whole.
        for (const e of migrateV1([...lines], first!, path)) {
          migrateV2(e);
          yield { entry: e as unknown as Entry, body: JSON.stringify(e) };
        }
        return;
      }
      for (const r of lines) {
        const e = checkTree(r, path);
        const changed = version < 3 && migrateV2(e);
        yield { entry: e as unknown as Entry, body: changed ? JSON.stringify(e) : r.text };
      }
    } finally {
      closeSync(fd);
    }
  }
  return { header, version, tornTail, entries };
}

const HeaderRecord = v.looseObject({
  type: v.literal("session"),
  id: v.string(),
  timestamp: v.string(),
  cwd: v.optional(v.string()),
  version: v.optional(v.number()),
  parentSession: v.optional(v.string()),
});
const MessageBody = v.looseObject({ role: v.string() });
const V1Record = v.looseObject({
  type: v.string(),
  timestamp: v.string(),
  message: v.optional(MessageBody),
});
type Loose = Record<string, unknown>;

interface RawRecord {
  line: number;
  value: unknown;
  /** The line as written (without its line break). */
  text: string;
}

const WINDOW = 1 << 20;

/**
 * The non-blank lines before byte `stopAt` of the file, parsed one at a time. The file is read
 * a window at a time and each window's complete lines are decoded together, as one string the
 * lines are cut from (decoding line by line cost a third of a 100k-entry import); the bytes of an
 * unfinished line wait for the next window. A line that is not JSON is an error naming it.
 */
function* records(fd: number, stopAt: number, source: string): Generator<RawRecord> {
  const buf = Buffer.allocUnsafe(WINDOW);
  let carry: Buffer | undefined;
  let lineNo = 0;
  let bom = true;
  function* lines(text: string): Generator<RawRecord> {
    // `text` holds the lines between two line breaks: n breaks inside it, n + 1 lines.
    for (let start = 0; start <= text.length; ) {
      let nl = text.indexOf("\n", start);
      if (nl === -1) nl = text.length;
      lineNo++;
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const line = text.slice(start, end);
      start = nl + 1;
      if (line.trim() === "") continue;
      let value: unknown;
      try {
        value = JSON.parse(line);
      } catch {
        throw new PionError(`${source}:${lineNo}: not a JSON line`, "invalid_jsonl");
      }
      yield { line: lineNo, value, text: line };
    }
  }
  const decode = (bytes: Buffer): string => {
    let from = 0;
    if (bom) {
      bom = false;
      if (bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) from = 3;
    }
    return bytes.toString("utf8", from);
  };
  for (let pos = 0; pos < stopAt; ) {
    const n = readSync(fd, buf, 0, Math.min(WINDOW, stopAt - pos), pos);
    if (n === 0) break;
    pos += n;
    const chunk = buf.subarray(0, n);
    const last = chunk.lastIndexOf(10);
    if (last === -1) {
      // The window is reused: keep a copy of the unfinished line.
      carry = carry ? Buffer.concat([carry, chunk]) : Buffer.from(chunk);
      continue;
    }
    let from = 0;
    if (carry) {
      // The unfinished line ends in this window: decoded on its own, the rest without a copy.
      const first = chunk.indexOf(10);
      yield* lines(decode(Buffer.concat([carry, chunk.subarray(0, first)])));
      from = first + 1;
    }
    if (from <= last) yield* lines(decode(chunk.subarray(from, last)));
    carry = last + 1 < n ? Buffer.from(chunk.subarray(last + 1)) : undefined;
  }
  if (carry) yield* lines(decode(carry));
}

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

/**
 * The fields every tree entry has (kind-specific fields are kept as written). Checked by hand,
 * not with a schema: it runs once per line of a file that may hold 100k of them.
 */
function checkTree(r: RawRecord, source: string): Loose {
  const e = r.value as Loose;
  const why =
    typeof e !== "object" || e === null || Array.isArray(e)
      ? "not an object"
      : typeof e.type !== "string"
        ? "type must be a string"
        : typeof e.id !== "string"
          ? "id must be a string"
          : e.parentId !== null && typeof e.parentId !== "string"
            ? "parentId must be a string or null"
            : typeof e.timestamp !== "string"
              ? "timestamp must be a string"
              : e.message !== undefined && (typeof e.message !== "object" || e.message === null || typeof (e.message as Loose).role !== "string")
                ? "message.role must be a string"
                : undefined;
  if (why) throw new PionError(`${source}:${r.line}: not a session entry: ${why}`, "invalid_jsonl");
  return e; // the parsed original, so key order and every field survive
}

/** v1 → v2: fresh ids chained in file order; a compaction's record index (the header is 0) becomes an entry id. */
function migrateV1(rest: readonly RawRecord[], header: RawRecord, source: string): Loose[] {
  const all = [header, ...rest];
  const ids = new Set<string>();
  const idAtLine = new Map<number, string>();
  const out: Loose[] = [];
  let parentId: string | null = null;
  for (const r of rest) {
    const parsed = v.safeParse(V1Record, r.value);
    if (!parsed.success) throw invalidEntry(source, r.line, parsed.issues);
    const id = newEntryId(ids);
    ids.add(id);
    idAtLine.set(r.line, id);
    const { type, ...fields } = r.value as Loose;
    out.push({ type, id, parentId, ...fields });
    parentId = id;
  }
  for (const e of out) {
    if (e.type !== "compaction" || typeof e.firstKeptEntryIndex !== "number") continue;
    const target = all[e.firstKeptEntryIndex];
    const targetId = target ? idAtLine.get(target.line) : undefined;
    if (targetId !== undefined) e.firstKeptEntryId = targetId;
    delete e.firstKeptEntryIndex;
  }
  return out;
}

/** v2 → v3: the `hookMessage` role is now `custom`. True when `e` changed. */
function migrateV2(e: Loose): boolean {
  const m = e.message;
  if (e.type === "message" && typeof m === "object" && m !== null && "role" in m && m.role === "hookMessage") {
    (m as Loose).role = "custom";
    return true;
  }
  return false;
}

type Issues = [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]];

function invalidEntry(source: string, line: number, issues: Issues): PionError {
  return new PionError(`${source}:${line}: not a session entry: ${v.summarize(issues)}`, "invalid_jsonl");
}
