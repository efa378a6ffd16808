import { readSync } from "node:fs";
import { PionError } from "../util/errors.ts";

/*
 * The lines of a session file and the checks of one line, for the reader (jsonl.ts) and for the
 * thread that confirms an import's unparsed lines (import-check.ts). Nothing here may import
 * more than it needs: this module is bundled into that thread's code too.
 */

export type Loose = Record<string, unknown>;

export interface RawRecord {
  line: number;
  value: unknown;
  /** The line as written (without its line break). */
  text: string;
}

const WINDOW = 1 << 20;

/**
 * The non-blank lines before byte `stopAt` of the file, with their line numbers. The file is read
 * a window at a time and each window's complete lines are decoded together, as one string the
 * lines are cut from (decoding line by line cost a third of a 100k-entry import); the bytes of an
 * unfinished line wait for the next window.
 */
export function* fileLines(fd: number, stopAt: number): Generator<{ line: number; text: string }> {
  const buf = Buffer.allocUnsafe(WINDOW);
  let carry: Buffer | undefined;
  let lineNo = 0;
  let bom = true;
  function* lines(text: string): Generator<{ line: number; text: string }> {
    // `text` holds the lines between two line breaks: n breaks inside it, n + 1 lines.
    for (let start = 0; start <= text.length; ) {
      let nl = text.indexOf("\n", start);
      if (nl === -1) nl = text.length;
      lineNo++;
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      const line = text.slice(start, end);
      start = nl + 1;
      if (line.trim() !== "") yield { line: lineNo, text: line };
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

/** fileLines after the first (the session header): the entries' lines. */
export function* entryLines(fd: number, stopAt: number): Generator<{ line: number; text: string }> {
  const lines = fileLines(fd, stopAt);
  lines.next();
  yield* lines;
}

/** The non-blank lines before `stopAt`, parsed one at a time (see parsed). */
export function* records(fd: number, stopAt: number, source: string): Generator<RawRecord> {
  for (const { line, text } of fileLines(fd, stopAt)) yield parsed(line, text, source);
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
   * Where the message's JSON starts (it runs to the line's closing brace). Everything before it is
   * ASCII, so it counts the line's bytes as well as its UTF-16 units (the store cuts the message
   * from the bytes it holds at this offset).
   */
  at: number;
}

const HEAD = '{"type":"message","id":"';
const PARENT = ',"parentId":';
const TIME = ',"timestamp":"';
const MESSAGE = ',"message":';
const ROLE = '{"role":"';
/** What a JSON string holds as written, in ASCII: no escape, no control character, nothing above 0x7f. */
const PLAIN = /^[\u0020-\u005b\u005d-\u007f]*$/;

/**
 * A message line in the layout the reference and pion write, `{"type":"message","id":…,"parentId":…,
 * "timestamp":…,"message":{"role":…,…}}`, read from its first fields alone; undefined for any other
 * line. Those fields are then exactly the line's own (the values' text is their value, no field can
 * come twice), and the line is this entry when the rest, from `at` to the closing brace, is one JSON
 * value whose role is `role`: confirmMessage.
 */
export function quickMessage(text: string): QuickMessage | undefined {
  if (!text.startsWith(HEAD) || text.charCodeAt(text.length - 1) !== 0x7d) return undefined;
  let p = HEAD.length;
  const idEnd = text.indexOf('"', p);
  if (idEnd === -1) return undefined;
  const id = text.slice(p, idEnd);
  p = idEnd + 1;
  if (!text.startsWith(PARENT, p)) return undefined;
  p += PARENT.length;
  let parentId: string | null;
  if (text.startsWith("null", p)) {
    parentId = null;
    p += 4;
  } else if (text.charCodeAt(p) === 0x22) {
    const end = text.indexOf('"', p + 1);
    if (end === -1) return undefined;
    parentId = text.slice(p + 1, end);
    p = end + 1;
  } else return undefined;
  if (!text.startsWith(TIME, p)) return undefined;
  p += TIME.length;
  const timeEnd = text.indexOf('"', p);
  if (timeEnd === -1) return undefined;
  const timestamp = text.slice(p, timeEnd);
  p = timeEnd + 1;
  if (!text.startsWith(MESSAGE, p)) return undefined;
  const at = p + MESSAGE.length;
  if (!text.startsWith(ROLE, at)) return undefined;
  const roleStart = at + ROLE.length;
  const roleEnd = text.indexOf('"', roleStart);
  if (roleEnd === -1) return undefined;
  const role = text.slice(roleStart, roleEnd);
  if (!PLAIN.test(id) || (parentId !== null && !PLAIN.test(parentId)) || !PLAIN.test(timestamp) || !PLAIN.test(role)) return undefined;
  return { id, parentId, timestamp, role, at };
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
