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

/** Reads and migrates a session file written by the reference agent or by pion. */
export function importJsonl(path: string): ImportedSession {
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
  return parseJsonl(text, path);
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
export function parseJsonl(text: string, source = "session file"): ImportedSession {
  const { records, tornTail } = splitRecords(text, source);
  const first = records[0];
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

  const rest = records.slice(1);
  const entries = version < 2 ? migrateV1(rest, records, source) : rest.map((r) => checkTree(r, source));
  if (version < 3) migrateV2(entries);
  // Validated above to carry the fields every entry has; kind-specific fields are kept as written.
  const typed = entries as unknown[] as Entry[];
  return { header, entries: typed, leafId: typed.at(-1)?.id ?? null, version, tornTail };
}

interface RawRecord {
  line: number;
  value: unknown;
}

function splitRecords(text: string, source: string): { records: RawRecord[]; tornTail: boolean } {
  const lines = text.replace(/^\uFEFF/, "").split("\n");
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === "") last--;
  const records: RawRecord[] = [];
  let tornTail = false;
  for (let i = 0; i <= last; i++) {
    const line = lines[i]!.endsWith("\r") ? lines[i]!.slice(0, -1) : lines[i]!;
    if (line.trim() === "") continue;
    try {
      records.push({ line: i + 1, value: JSON.parse(line) });
    } catch {
      if (i !== last) throw new PionError(`${source}:${i + 1}: not a JSON line`, "invalid_jsonl");
      tornTail = true; // a write cut short by a crash; everything before it is intact
    }
  }
  return { records, tornTail };
}

function checkTree(r: RawRecord, source: string): Loose {
  const parsed = v.safeParse(TreeRecord, r.value);
  if (!parsed.success) throw invalidEntry(source, r.line, parsed.issues);
  return r.value as Loose; // the parsed original, so key order and every field survive
}

/** v1 → v2: fresh ids chained in file order; a compaction's line index becomes an entry id. */
function migrateV1(rest: readonly RawRecord[], all: readonly RawRecord[], source: string): Loose[] {
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
function migrateV2(entries: Loose[]): void {
  for (const e of entries) {
    const m = e.message;
    if (e.type === "message" && typeof m === "object" && m !== null && "role" in m && m.role === "hookMessage") {
      (m as Loose).role = "custom";
    }
  }
}

type Issues = [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]];

function invalidEntry(source: string, line: number, issues: Issues): PionError {
  return new PionError(`${source}:${line}: not a session entry: ${v.summarize(issues)}`, "invalid_jsonl");
}
