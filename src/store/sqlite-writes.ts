import type { Statement } from "bun:sqlite";
import type { Entry, SessionHeader } from "./entries.ts";
import { userText } from "./entries.ts";
import { messageIsJson } from "./message-check.ts";
import type { StoredEntry } from "./store.ts";

/** The statements that write a session and its entries, and their parameters, in one place. */
export type Param = string | number | null | Uint8Array;

export const WRITE_SQL = {
  insertSession: `INSERT INTO session (id, cwd, parent_session, file, created_at, updated_at, header)
     VALUES (?1, ?2, ?3, ?4, ?5, ?5, ?6)`,
  // A body given as bytes is the UTF-8 of its text: stored as that text, not as a blob.
  insertEntry: "INSERT INTO entry (session_id, id, parent_id, type, created_at, body, role, message_at) VALUES (?1, ?2, ?3, ?4, ?5, CAST(?6 AS TEXT), ?7, ?8)",
  // The same for a row read without a parse (StoredEntry.unconfirmed): its body is written only if
  // its message is one JSON value (message-check.ts), else it is null, which the table refuses.
  insertUnconfirmed: `INSERT INTO entry (session_id, id, parent_id, type, created_at, body, role, message_at) VALUES (?1, ?2, ?3, ?4, ?5,
     CASE WHEN ${messageIsJson("?6", "?8")} THEN CAST(?6 AS TEXT) END, ?7, ?8)`,
  afterAppend: `UPDATE session SET leaf_id = ?2, updated_at = max(updated_at, ?3),
       entry_count = entry_count + ?4, message_count = message_count + ?5,
       first_message = coalesce(first_message, ?6), name = CASE WHEN ?7 THEN ?8 ELSE name END
     WHERE id = ?1`,
  // A rule the permission gate granted, with the entry recording it (GrantedRule; never by an import).
  insertGrant: "INSERT INTO granted_rule (session_id, entry_id, rule) VALUES (?1, ?2, ?3)",
} as const;

/**
 * What `deleteSession` runs, in order, in one transaction (parameter: the session id): the one
 * place rows of `entry` and `granted_rule` are ever deleted. A search row shares its entry's seq.
 */
export const DELETE_SESSION_SQL = [
  "DELETE FROM entry_fts WHERE rowid IN (SELECT seq FROM entry WHERE session_id = ?1)",
  "DELETE FROM granted_rule WHERE session_id = ?1",
  "DELETE FROM entry WHERE session_id = ?1",
  "DELETE FROM lock WHERE session_id = ?1",
  "DELETE FROM session WHERE id = ?1",
] as const;

/** insertSession's parameters; `path` is the resolved JSONL path or null. */
export const sessionParams = (header: SessionHeader, path: string | null): Param[] => [
  header.id,
  header.cwd,
  header.parentSession ?? null,
  path,
  header.timestamp,
  JSON.stringify(header),
];

/**
 * Runs insertEntry (or insertUnconfirmed) for `row`. Its parameters are given one by one: spread
 * from an array, they cost 5-7 ms of a 10k-entry import.
 */
export function runInsertEntry(statement: Statement<unknown, Param[]>, sessionId: string, { entry, body, messageAt: at }: StoredEntry): void {
  const role = entry.type === "message" ? ((entry.message as { role?: unknown }).role as string) : null;
  const offset = role === null ? null : at !== undefined ? at : typeof body === "string" ? messageAt(entry, body) : null;
  statement.run(sessionId, entry.id, entry.parentId, entry.type, entry.timestamp, body, role, offset);
}

/** afterAppend's parameters for a batch of entries just inserted: leaf, time, counters, first message, name. */
export function afterAppendParams(sessionId: string, entries: readonly Entry[]): Param[] {
  let updatedAt = "";
  let messages = 0;
  let firstUser: string | null = null;
  let renamed = false;
  let name: string | null = null;
  for (const entry of entries) {
    if (entry.timestamp > updatedAt) updatedAt = entry.timestamp;
    if (entry.type === "message") messages++;
    firstUser ??= userText(entry) ?? null;
    if (entry.type === "session_info") {
      renamed = true;
      name = entry.name?.trim() || null;
    }
  }
  const leaf = entries[entries.length - 1]!.id;
  return [sessionId, leaf, updatedAt, entries.length, messages, firstUser, renamed ? 1 : 0, name];
}

/**
 * Where the message's JSON starts in `body`, a body that is JSON.stringify of `entry` (a parse of
 * another tool's line cannot tell that nothing follows the message: a field written twice keeps
 * its first place). The message runs to the closing brace when it is the last field and the body
 * starts `{"type":"message","id":`: the key is then the first `,"message":` in the body, since
 * before it come only the type, id, parent id and time, and in a JSON string a quote is escaped.
 */
function messageAt(entry: Entry, body: string): number | null {
  let n = 0;
  for (const key in entry) {
    if (key !== MESSAGE_KEYS[n++]) return null;
  }
  if (n !== MESSAGE_KEYS.length || !body.startsWith(MESSAGE_HEAD) || body.charCodeAt(body.length - 1) !== 0x7d) return null;
  const at = body.indexOf(MESSAGE_KEY, MESSAGE_HEAD.length);
  if (at === -1) return null;
  // The offset counts bytes as well only while what comes before it is ASCII (an id from another tool may hold anything).
  return ASCII.test(body.slice(0, at)) ? at + MESSAGE_KEY.length : null;
}
const ASCII = /^[\u0000-\u007f]*$/;
const MESSAGE_KEYS = ["type", "id", "parentId", "timestamp", "message"];
const MESSAGE_HEAD = '{"type":"message","id":';
const MESSAGE_KEY = ',"message":';
