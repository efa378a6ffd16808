import type { JsonPiece } from "../util/json-pieces.ts";
import type { Entry, SessionHeader } from "./entries.ts";

/**
 * What a session looked like when its last writer closed it: enough to answer get_state
 * without reading the entries. Valid only while the session's leaf is still `leafId`.
 */
export interface SessionCache {
  leafId: string | null;
  messageCount: number;
  model?: { provider: string; modelId: string };
  thinkingLevel?: string;
  /**
   * The context is the session's `message` entries in append order, system-role ones left out:
   * a linear session without compactions, summaries, custom messages or edits (see
   * `contextMessages`).
   */
  plainContext?: boolean;
  /** Every entry's parent is the entry appended before it: the tree is one chain in append order. */
  linear?: boolean;
}

export interface SessionMeta {
  header: SessionHeader;
  cache?: SessionCache;
  /** Path of the JSONL export, or undefined when nothing is written to disk. */
  file?: string;
  name?: string;
  leafId: string | null;
}

/**
 * A page of a linear session's rows for its tree (see `serializeChain`): each row's node opened,
 * `{"entry":<body>,"children":[`, as UTF-8 bytes; the rows' ids; the bodies of its label entries.
 */
export interface ChainPage {
  openings: Uint8Array;
  ids: string[];
  labels: string[];
}

/** An entry with its JSON as it is to be stored (for an imported file, its line as written). */
export interface StoredEntry {
  entry: Entry;
  /** The entry's JSON, as text or as its UTF-8 bytes. */
  body: string | Uint8Array;
  /**
   * Where the message's JSON starts in `body` when the message is the body's last field (it then
   * runs to the closing brace) and everything before it is ASCII (so the offset counts bytes too),
   * null when that is not known; for a body that is JSON.stringify of `entry`, left out: the
   * entry's own fields tell.
   */
  messageAt?: number | null;
  /**
   * Set on a row read without a parse: whether its message (from `messageAt` to the closing brace)
   * is one JSON value is not known yet. The store writes the row only if it is, else throws
   * UnconfirmedRow (and, the import being one transaction, writes nothing of it).
   */
  unconfirmed?: true;
}

/**
 * A row read without a parse whose message is not one JSON value (StoredEntry.unconfirmed; the
 * entry's id when the store found it, null when the import's check thread did).
 */
export class UnconfirmedRow extends Error {
  readonly entryId: string | null;
  constructor(entryId: string | null) {
    super(entryId === null ? "a message read without a parse is not one JSON value" : `the message of entry ${entryId} is not one JSON value`);
    this.entryId = entryId;
  }
}

/**
 * What the tree and context need of a stored entry, without reading its content: message
 * entries carry their role only; other kinds their JSON, except extension data (`custom`).
 */
export interface IndexRow {
  /** The row's place in this store, for `entryBody` and `messageJson`. */
  ref: number;
  id: string;
  parentId: string | null;
  type: string;
  timestamp: string;
  /** The message's role, for `message` entries. */
  role: string | null;
  /** The JSON body, for entries other than `message` and `custom`. */
  body: string | null;
}

/** An allow rule pion's permission gate granted in a session, and the permission entry recording it. */
export interface GrantedRule {
  entryId: string;
  rule: string;
}

/** A slice of a session's entries in append order. */
export interface EntryPage {
  entries: Entry[];
  /** True when entries after the last returned one exist. */
  hasMore: boolean;
}

export interface SessionSummary {
  sessionId: string;
  file: string | undefined;
  cwd: string;
  name: string | undefined;
  /** Text of the first user message, undefined when there is none yet. */
  firstMessage: string | undefined;
  /** Number of `message` entries, every role counted, as the reference does. */
  messageCount: number;
  /** ISO timestamps: the header's, and the newest entry's (or the header's). */
  createdAt: string;
  updatedAt: string;
  parentSession: string | undefined;
}

export interface ListSessionsOptions {
  cwd?: string;
  /** Default 50. */
  limit?: number;
  /** `nextCursor` of the previous page. */
  cursor?: string;
}

export interface SessionList {
  /** Newest first by `updatedAt`. */
  sessions: SessionSummary[];
  /** Opaque; absent on the last page. */
  nextCursor?: string;
}

export interface SearchOptions {
  /** Words to find (all of them); the last one also matches as a prefix. */
  query: string;
  cwd?: string;
  /** Default 20. */
  limit?: number;
}

export interface SearchHit {
  sessionId: string;
  sessionFile: string | undefined;
  entryId: string;
  /** "user", "assistant" or "bashExecution". */
  role: string;
  snippet: string;
  /** The entry's ISO timestamp. */
  timestamp: string;
}

/**
 * The session port. Every append is committed before it returns, so the caller may
 * announce the entry right after. Entries are never updated; only the session row (leaf
 * pointer, name, counters) changes. They are deleted only with their whole session, by
 * `deleteSession`.
 *
 * Failures are `PionError`s with codes: `unknown_session`, `unknown_entry`, `session_exists`,
 * `duplicate_entry`, `session_locked`, `invalid_cursor`.
 */
export interface SessionStore {
  createSession(header: SessionHeader, file?: string): void;
  /**
   * Creates a session with its entries and summary in one transaction (a failure or a crash
   * leaves nothing behind). `entries` is consumed while it is written, each row written before the
   * next is taken (a row's bytes may be a window its source reuses), so a large import never holds
   * every entry at once; `cache` is asked for once they are all written. The leaf is the last entry.
   */
  importSession(header: SessionHeader, file: string | undefined, entries: Iterable<StoredEntry>, cache: () => SessionCache): void;
  getSession(sessionId: string): SessionMeta | undefined;
  /**
   * Appends one entry and moves the leaf to it. `granted`: allow rules this pion's permission gate
   * granted, recorded by `entry` (see `grantedRules`), written in the same transaction.
   */
  append(sessionId: string, entry: Entry, granted?: readonly string[]): void;
  /**
   * Appends in one transaction (forks, a new session's first entries); the leaf moves to the last
   * one. `granted` (see `append`) each name one of `entries`.
   */
  appendMany(sessionId: string, entries: readonly Entry[], granted?: readonly GrantedRule[]): void;
  /**
   * The allow rules granted with appends to the session (see `append`), in the order granted. Only
   * these are the session's grants: a permission entry's `addedRules` is what it says, not a grant
   * (an imported file's entries say what they like, and `importSession` grants nothing).
   */
  grantedRules(sessionId: string): GrantedRule[];
  /** All entries in append order. */
  entries(sessionId: string): Entry[];
  /**
   * Every entry in append order as ChainPages, read as the caller iterates (a large session is
   * never held whole): the tree of a linear session. The session must exist when this is called.
   */
  chainPages(sessionId: string): Iterable<ChainPage>;
  /**
   * Every entry's JSON in append order, read as the caller iterates, as pieces of their
   * comma-separated list (each piece one body or several joined by commas): the items of the
   * get_entries answer. The session must exist when this is called.
   */
  bodyPages(sessionId: string): Iterable<JsonPiece>;
  /**
   * The message JSON of every `message` entry but system-role ones, in append order, read as the
   * caller iterates, as pieces of their comma-separated list (like `bodyPages`): the context of a
   * session whose cache says `plainContext`.
   */
  contextMessages(sessionId: string): Iterable<JsonPiece>;
  /** Every entry of the session as an IndexRow, in append order. */
  entryIndex(sessionId: string): IndexRow[];
  /**
   * Reads entries' JSON by `ref` (an IndexRow's) for one answer. Rows are read a window at a
   * time ahead of the asked one, so asking in about append order (a tree walked depth first,
   * a branch root to leaf) costs one query per window, not one per entry.
   */
  bodyReader(sessionId: string): (ref: number) => string;
  /** The same for the message of a `message` entry: its JSON, taken from the body without a parse where the layout allows. */
  messageReader(sessionId: string): (ref: number) => string;
  /** Entries strictly after `sinceId` in append order; `unknown_entry` when `sinceId` is not in the session. */
  entriesSince(sessionId: string, sinceId: string, limit?: number): EntryPage;
  /** The first `limit` entries; continue with `entriesSince(lastId)`. */
  entriesPage(sessionId: string, limit: number): EntryPage;
  entryCount(sessionId: string): number;
  getEntry(sessionId: string, entryId: string): Entry | undefined;
  /** `leafId` must be an entry of the session, or null before the first entry. */
  setLeaf(sessionId: string, leafId: string | null): void;
  listSessions(options?: ListSessionsOptions): SessionList;
  searchSessions(options: SearchOptions): SearchHit[];
  findSessionByFile(path: string): SessionMeta | undefined;
  /**
   * Claims the session for writing by this process. Fails with `session_locked`, naming the
   * pid, while another live process holds it; a lock left by a dead process is taken over.
   */
  acquireSession(sessionId: string): void;
  /** Record the session's summary for the next opener (see SessionCache). */
  setSessionCache(sessionId: string, cache: SessionCache): void;
  /**
   * Removes a stored session for good, in one transaction: its row, entries, search rows, granted
   * rules and lock; then its JSONL file (where the store writes one). Fails with `unknown_session`
   * when it is not stored, and `session_locked` (deleting nothing) while another live process
   * holds it; this instance's own lock on it goes with it, so its writer must be done with it first.
   */
  deleteSession(sessionId: string): void;
  releaseSession(sessionId: string): void;
  /** Releases this instance's locks and closes. */
  close(): void;
}
