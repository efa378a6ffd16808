import { readFileSync } from "node:fs";
import * as v from "valibot";
import { PionError } from "../util/errors.ts";
import { type Entry, newEntryId, type SessionHeader } from "./entries.ts";

/*
 * The reference agent's session file: a header line, then one entry per line.
 * v1: no ids (a linear list); compactions point at `firstKeptEntryIndex` (a line index).
 * v2: `id`/`parentId` tree. v3: message role `hookMessage` renamed `custom`.
 * Entry kinds and message roles pion does not model (`usage`, `context_edit`, system-role
 * messages, ...) are kept as parsed, so they round-trip through the store and the export.
 */

export const JSONL_VERSION = 3;

export interface ImportedSession {
  /** Normalized to the v3 header; fields older versions kept in it are dropped. */
  header: SessionHeader;
  /** Migrated to v3, in file order. */
  entries: Entry[];
  /** The last entry's id, as the reference resumes; null when there is none. */
  leafId: string | null;
  /** The version the file was written in. */
  version: number;
  /** A last line that was not complete JSON (a crash mid-write) and was skipped. */
  tornTail: boolean;
}

export const headerLine = (header: SessionHeader): string => `${JSON.stringify(header)}\n`;
export const entryLine = (entry: Entry): string => `${JSON.stringify(entry)}\n`;

/**
 * A session file being read: the header is checked at once; `entries()` parses, validates
 * and migrates the entries one line at a time, so a large file is never held as objects
 * all at once (the import writes them to the store as they come).
 */
export interface JsonlSource {
  header: SessionHeader;
  /** The version the file was written in. */
  version: number;
  /** A last line that was not complete JSON (a crash mid-write); it is skipped. */
  tornTail: boolean;
  /** Migrated to v3, in file order; throws naming the line of an invalid one. */
  entries(): Generator<Entry>;
}

/** Reads and migrates a session file written by the reference agent or by pion. */
export function importJsonl(path: string): ImportedSession {
  return collect(readJsonl(path));
}

/** `source` names the file in errors. */
export function parseJsonl(text: string, source = "session file"): ImportedSession {
  return collect(scanJsonl(text, source));
}

function collect(src: JsonlSource): ImportedSession {
  const entries = [...src.entries()];
  return { header: src.header, entries, leafId: entries.at(-1)?.id ?? null, version: src.version, tornTail: src.tornTail };
}

/** Opens a session file for a streaming read (see JsonlSource). */
export function readJsonl(path: string): JsonlSource {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    const missing = err instanceof Error && "code" in err && err.code === "ENOENT";
    throw new PionError(
      missing ? `Session file not found: ${path}` : `Cannot read session file ${path}: ${String(err)}`,
      missing ? "session_not_found" : "invalid_jsonl",
    );
  }
  return scanJsonl(text, path);
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
const TreeRecord = v.looseObject({
  type: v.string(),
  id: v.string(),
  parentId: v.nullable(v.string()),
  timestamp: v.string(),
  message: v.optional(MessageBody),
});
type Loose = Record<string, unknown>;

/** `source` names the file in errors. */
export function scanJsonl(text: string, source = "session file"): JsonlSource {
  const lines = new LineReader(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, source);
  const first = lines.next();
  const parsedHeader = v.safeParse(HeaderRecord, first?.value);
  if (!first || !parsedHeader.success) {
    throw new PionError(`${source} is not a session file: its first line is not a session header`, "invalid_jsonl");
  }
  const h = parsedHeader.output;
  const version = h.version ?? 1;
  if (version > JSONL_VERSION) {
    throw new PionError(`${source} is session format v${version}; this pion reads up to v${JSONL_VERSION}`, "invalid_jsonl");
  }
  const header: SessionHeader = {
    type: "session",
    version: JSONL_VERSION,
    id: h.id,
    timestamp: h.timestamp,
    cwd: h.cwd ?? "",
    ...(h.parentSession !== undefined ? { parentSession: h.parentSession } : {}),
  };
  function* entries(): Generator<Entry> {
    // Validated to carry the fields every entry has; kind-specific fields are kept as written.
    if (version < 2) {
      // v1 files (no ids) come from old versions and are small: migrated as a whole.
      for (const e of migrateV1(lines.rest(), first!, source)) {
        migrateV2(e);
        yield e as unknown as Entry;
      }
      return;
    }
    for (const r of lines) {
      const e = checkTree(r, source);
      if (version < 3) migrateV2(e);
      yield e as unknown as Entry;
    }
  }
  return { header, version, tornTail: lines.tornTail, entries };
}

interface RawRecord {
  line: number;
  value: unknown;
}

/**
 * The non-blank lines of a JSONL text parsed one at a time. A last line that is not JSON is a
 * write cut short by a crash (everything before it is intact): it is skipped and reported as
 * `tornTail`, known before the first line is read. Any other line that is not JSON is an error.
 */
class LineReader implements Iterable<RawRecord> {
  private pos = 0;
  private lineNo = 0;
  /** Where the last non-blank line starts. */
  private readonly lastStart: number;
  readonly tornTail: boolean;

  constructor(
    private readonly text: string,
    private readonly source: string,
  ) {
    let end = text.length;
    while (end > 0 && isSpace(text.charCodeAt(end - 1))) end--;
    this.lastStart = text.lastIndexOf("\n", end - 1) + 1;
    this.tornTail = end > 0 && !parses(text.slice(this.lastStart, end));
  }

  next(): RawRecord | undefined {
    const text = this.text;
    while (this.pos < text.length) {
      const start = this.pos;
      const nl = text.indexOf("\n", start);
      const end = nl === -1 ? text.length : nl;
      this.pos = end + 1;
      this.lineNo++;
      if (start === this.lastStart && this.tornTail) {
        this.pos = text.length;
        return undefined;
      }
      const line = text.slice(start, end > start && text.charCodeAt(end - 1) === 13 ? end - 1 : end);
      if (line.trim() === "") continue;
      try {
        return { line: this.lineNo, value: JSON.parse(line) };
      } catch {
        throw new PionError(`${this.source}:${this.lineNo}: not a JSON line`, "invalid_jsonl");
      }
    }
    return undefined;
  }

  /** Every record left, at once. */
  rest(): RawRecord[] {
    const out: RawRecord[] = [];
    for (let r = this.next(); r; r = this.next()) out.push(r);
    return out;
  }

  *[Symbol.iterator](): Iterator<RawRecord> {
    for (let r = this.next(); r; r = this.next()) yield r;
  }
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

function checkTree(r: RawRecord, source: string): Loose {
  const parsed = v.safeParse(TreeRecord, r.value);
  if (!parsed.success) throw invalidEntry(source, r.line, parsed.issues);
  return r.value as Loose; // the parsed original, so key order and every field survive
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

/** v2 → v3: the `hookMessage` role is now `custom`. */
function migrateV2(e: Loose): void {
  const m = e.message;
  if (e.type === "message" && typeof m === "object" && m !== null && "role" in m && m.role === "hookMessage") {
    (m as Loose).role = "custom";
  }
}

type Issues = [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]];

function invalidEntry(source: string, line: number, issues: Issues): PionError {
  return new PionError(`${source}:${line}: not a session entry: ${v.summarize(issues)}`, "invalid_jsonl");
}
