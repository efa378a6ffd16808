import { isUtf8 } from "node:buffer";
import { readSync } from "node:fs";
import * as v from "valibot";
import { PionError } from "../util/errors.ts";
import { newEntryId } from "./entries.ts";

/* The lines of a session file and the checks of one line, for the reader (jsonl.ts). */

export type Loose = Record<string, unknown>;

export interface RawRecord {
  line: number;
  value: unknown;
  /** The line as written (without its line break). */
  text: string;
}

const WINDOW = 1 << 20;

/**
 * A line of the file as its bytes, `buf[start, end)` without its line break, and its line number.
 * The reader hands out one cursor and one window for every line: both hold until the next line is
 * taken, no longer (copy what must outlive that).
 */
export interface LineBytes {
  line: number;
  buf: Buffer;
  start: number;
  end: number;
}

/**
 * The non-blank lines before byte `stopAt` of the file (see LineBytes), read a window at a time
 * into one buffer, which grows only for a line longer than half of it. Nothing is decoded: most
 * of an import's lines go to the store as the bytes they are (jsonl.ts, importRows).
 */
export function* fileLineBytes(fd: number, stopAt: number, window = WINDOW): Generator<LineBytes> {
  let buf = Buffer.allocUnsafe(window);
  const cursor: LineBytes = { line: 0, buf, start: 0, end: 0 };
  let have = 0; // bytes of buf holding file content not yet cut into lines
  let pos = 0;
  let first = true;
  for (;;) {
    const n = pos < stopAt ? readSync(fd, buf, have, Math.min(buf.length - have, stopAt - pos), pos) : 0;
    pos += n;
    have += n;
    const done = n === 0;
    let from = 0;
    if (first) {
      first = false;
      if (have >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf) from = 3;
    }
    for (;;) {
      let nl = buf.indexOf(10, from);
      if (nl === -1 || nl >= have) {
        if (!done || from >= have) break;
        nl = have; // the last line has no line break
      }
      cursor.line++;
      const end = nl > from && buf[nl - 1] === 13 ? nl - 1 : nl;
      if (!blank(buf, from, end)) {
        cursor.buf = buf;
        cursor.start = from;
        cursor.end = end;
        yield cursor;
      }
      from = nl + 1;
    }
    if (done) return;
    // The unfinished line moves to the front, into a larger buffer when it fills half of this one.
    const rest = have - from;
    const next = rest * 2 > buf.length ? Buffer.allocUnsafe(buf.length * 2) : buf;
    buf.copy(next, 0, from, have);
    buf = next;
    have = rest;
  }
}

/** Whether the line holds white space only (as String#trim sees it: non-ASCII white space too). */
function blank(buf: Buffer, start: number, end: number): boolean {
  for (let i = start; i < end; i++) {
    const c = buf[i]!;
    if (c === 0x20 || (c >= 0x09 && c <= 0x0d)) continue;
    return c < 0x80 ? false : buf.toString("utf8", i, end).trim() === "";
  }
  return true;
}

/** A line's text. */
export const lineText = (l: LineBytes): string => l.buf.toString("utf8", l.start, l.end);

/** fileLineBytes after the first (the session header): the entries' lines. */
export function* entryLineBytes(fd: number, stopAt: number): Generator<LineBytes> {
  const lines = fileLineBytes(fd, stopAt);
  lines.next();
  yield* lines;
}

/** The non-blank lines before `stopAt`, parsed one at a time (see parsed), read `window` bytes at a time. */
export function* records(fd: number, stopAt: number, source: string, window = WINDOW): Generator<RawRecord> {
  for (const l of fileLineBytes(fd, stopAt, window)) yield parsed(l.line, lineText(l), source);
}

/** Line `line` of `source`, parsed; a line that is not JSON is an error naming it. */
export function parsed(line: number, text: string, source: string): RawRecord {
  try {
    return { line, value: JSON.parse(text), text };
  } catch {
    throw new PionError(`${source}:${line}: not a JSON line`, "invalid_jsonl");
  }
}

/**
 * The fields every tree entry has (kind-specific fields are kept as written). Checked by hand,
 * not with a schema: it runs once per line of a file that may hold 100k of them.
 */
export function checkTree(r: RawRecord, source: string): Loose {
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

/** Built on the first v1 file migrated. */
const makeV1Record = () =>
  v.looseObject({
    type: v.string(),
    timestamp: v.string(),
    message: v.optional(v.looseObject({ role: v.string() })),
  });
let v1Record: ReturnType<typeof makeV1Record> | undefined;

/** v1 → v2: fresh ids chained in file order; a compaction's record index (the header is 0) becomes an entry id. */
export function migrateV1(rest: readonly RawRecord[], header: RawRecord, source: string): Loose[] {
  const all = [header, ...rest];
  const ids = new Set<string>();
  const idAtLine = new Map<number, string>();
  const out: Loose[] = [];
  let parentId: string | null = null;
  for (const r of rest) {
    const parsed = v.safeParse((v1Record ??= makeV1Record()), r.value);
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

type Issues = [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]];

function invalidEntry(source: string, line: number, issues: Issues): PionError {
  return new PionError(`${source}:${line}: not a session entry: ${v.summarize(issues)}`, "invalid_jsonl");
}

/** v2 → v3: the `hookMessage` role is now `custom`. True when `e` changed. */
export function migrateV2(e: Loose): boolean {
  const m = e.message;
  if (e.type === "message" && typeof m === "object" && m !== null && "role" in m && m.role === "hookMessage") {
    (m as Loose).role = "custom";
    return true;
  }
  return false;
}

/** A message line's row as its first fields give it, read without a parse (quickMessage). */
export interface QuickMessage {
  id: string;
  parentId: string | null;
  timestamp: string;
  role: string;
  /**
   * Where the message's JSON starts in the line (it runs to the closing brace). Everything before
   * it is ASCII, so it counts the line's bytes as well as its text's UTF-16 units (the store cuts
   * the message from the bytes it holds at this offset).
   */
  at: number;
}

const ascii = (s: string): Buffer => Buffer.from(s, "latin1");
const HEAD = ascii('{"type":"message","id":"');
const PARENT = ascii(',"parentId":');
const NULL = ascii("null");
const TIME = ascii(',"timestamp":"');
const MESSAGE = ascii(',"message":');
const ROLE = ascii('{"role":"');

/** Whether `buf` holds `what` at `p`. */
function holds(buf: Uint8Array, p: number, end: number, what: Uint8Array): boolean {
  if (p + what.length > end) return false;
  for (let i = 0; i < what.length; i++) if (buf[p + i] !== what[i]) return false;
  return true;
}

/**
 * Where the JSON string whose text starts at `p` ends (its closing quote), when it holds what it
 * says as written, in ASCII: no escape, no control character, nothing above 0x7f; else -1.
 */
function plainEnd(buf: Uint8Array, p: number, end: number): number {
  for (; p < end; p++) {
    const c = buf[p]!;
    if (c === 0x22) return p;
    if (c < 0x20 || c === 0x5c || c > 0x7f) return -1;
  }
  return -1;
}

/**
 * A message line, `buf[start, end)`, in the layout the reference and pion write, `{"type":"message",
 * "id":…,"parentId":…,"timestamp":…,"message":{"role":…,…}}`, read from its first fields alone;
 * undefined for any other line. Those fields are then exactly the line's own (the values' text is
 * their value, no field can come twice), and the line is this entry when the rest, from `at` to
 * the closing brace, is one JSON value whose role is `role`: confirmMessage.
 */
export function quickMessage(buf: Buffer, start: number, end: number): QuickMessage | undefined {
  if (buf[end - 1] !== 0x7d || !holds(buf, start, end, HEAD)) return undefined;
  let p = start + HEAD.length;
  let q = plainEnd(buf, p, end);
  if (q === -1) return undefined;
  const id = buf.toString("latin1", p, q);
  p = q + 1;
  if (!holds(buf, p, end, PARENT)) return undefined;
  p += PARENT.length;
  let parentId: string | null = null;
  if (holds(buf, p, end, NULL)) p += NULL.length;
  else if (buf[p] === 0x22) {
    q = plainEnd(buf, p + 1, end);
    if (q === -1) return undefined;
    parentId = buf.toString("latin1", p + 1, q);
    p = q + 1;
  } else return undefined;
  if (!holds(buf, p, end, TIME)) return undefined;
  p += TIME.length;
  q = plainEnd(buf, p, end);
  if (q === -1) return undefined;
  const timestamp = buf.toString("latin1", p, q);
  p = q + 1;
  if (!holds(buf, p, end, MESSAGE)) return undefined;
  const at = p + MESSAGE.length;
  if (!holds(buf, at, end, ROLE)) return undefined;
  p = at + ROLE.length;
  q = plainEnd(buf, p, end);
  if (q === -1) return undefined;
  return { id, parentId, timestamp, role: buf.toString("latin1", p, q), at: at - start };
}

/**
 * Whether a message line quickMessage read can be kept as its bytes, `bytes`, with its row from its
 * first fields: its text is UTF-8 (the store keeps those bytes) and its message may not name its role
 * again. What is left to confirm is that the message is one JSON value (message-check.ts).
 */
export const keptAsBytes = (bytes: Buffer, q: QuickMessage): boolean => isUtf8(bytes) && !namesRoleAgain(bytes, q);

const ROLE_KEY = ascii('"role"');
const ESCAPE = ascii("\\u00");

/**
 * Whether the message of a line quickMessage read may hold a second `role` key (a parse keeps the
 * last one, the row has the first): the text `"role"` after the first, or an escape of a character
 * from 0x60 to 0x7f, which can spell it (`\u0072ole`; JSON.stringify escapes none of them).
 */
function namesRoleAgain(bytes: Buffer, q: QuickMessage): boolean {
  const after = q.at + ROLE.length + q.role.length;
  if (bytes.indexOf(ROLE_KEY, after) !== -1) return true;
  for (let i = bytes.indexOf(ESCAPE, after); i !== -1; i = bytes.indexOf(ESCAPE, i + ESCAPE.length)) {
    const digit = bytes[i + ESCAPE.length];
    if (digit === 0x36 || digit === 0x37) return true;
  }
  return false;
}

/**
 * The message of a line quickMessage read, parsed from its own text: undefined when that text is
 * not one JSON object with that role (then the line is not what its first fields say, or not JSON).
 */
export function confirmMessage(q: QuickMessage, text: string): Loose | undefined {
  let m: unknown;
  try {
    m = JSON.parse(text.slice(q.at, -1));
  } catch {
    return undefined;
  }
  return typeof m === "object" && m !== null && !Array.isArray(m) && (m as Loose).role === q.role ? (m as Loose) : undefined;
}
