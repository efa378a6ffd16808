import { Database, SQLiteError, type Statement } from "bun:sqlite";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { type Entry, type SessionHeader, searchableText } from "./entries.ts";
import { heldElsewhere, type ProcessOwner, processOwner, sessionLocked } from "./owner.ts";
import type { JsonPiece } from "../util/json-pieces.ts";
import { LARGE_WAL_BYTES, walBytes, writeThenCheckpointAside } from "./checkpoint.ts";
import { chainPage, joinBodies, joinMessages } from "./json-pages.ts";
import { migrate } from "./sqlite-schema.ts";
import { writeFromTemplate } from "./sqlite-template.ts";
import { afterAppendParams, DELETE_SESSION_SQL, runInsertEntry, type Param, sessionParams, WRITE_SQL } from "./sqlite-writes.ts";
import type {
  EntryPage,
  ListSessionsOptions,
  SearchHit,
  SearchOptions,
  SessionList,
  IndexRow,
  SessionCache,
  SessionMeta,
  SessionStore,
  SessionSummary,
  StoredEntry,
  ChainPage,
  GrantedRule,
} from "./store.ts";
import { UnconfirmedRow } from "./store.ts";

export interface SqliteStoreOptions {
  /** Who holds the locks this instance acquires; defaults to the current process. */
  owner?: ProcessOwner;
  /** How long a write waits for another process's transaction. Default 10 s. */
  busyTimeoutMs?: number;
}

interface SessionRow {
  id: string;
  cwd: string;
  name: string | null;
  parent_session: string | null;
  file: string | null;
  leaf_id: string | null;
  created_at: string;
  updated_at: string;
  header: string;
  first_message: string | null;
  message_count: number;
  entry_count: number;
  cache: string | null;
}
interface BodyOnly {
  body: string;
}
interface HitRow {
  session_id: string;
  file: string | null;
  entry_id: string;
  role: string;
  snippet: string;
  created_at: string;
}
interface LockRow {
  pid: number;
  start: string;
}
/** seq, body, message_at */
type WindowRow = [number, string, number | null];

const NO_LIMIT = -1;
const MMAP_SIZE = 0x7fff0000;
/** Rows read at a time by the answers that stream a whole session (about 0.5 MB of bodies). */
const PAGE = 512;
/**
 * Opens (creating and migrating as needed) the session database.
 *
 * Durability: WAL with synchronous=NORMAL. A commit is in the WAL (the OS page cache) when
 * `append` returns, so killing the process right after loses nothing: the next opener replays
 * the WAL. Only a power loss can drop the newest commits (never corrupt the file); FULL would
 * cover that at the price of an fsync per entry, which the durability rule (kill -9, not power
 * loss) does not ask for.
 */
export function openSqliteStore(dbPath: string, options: SqliteStoreOptions = {}): SessionStore {
  if (dbPath !== ":memory:") {
    mkdirSync(dirname(dbPath), { recursive: true, mode: 0o700 });
    writeFromTemplate(dbPath);
    // Create it 0600 before SQLite does (SQLite gives its -wal and -shm files the same mode).
    closeSync(openSync(dbPath, "a", 0o600));
  }
  const db = new Database(dbPath, { create: true, readwrite: true, strict: true });
  // The page size of a new database (an existing one keeps the size it was made with). Entries
  // are about 1 KB. In memory, where no commit writes a page to disk, 64 KB pages hold 60 of them
  // (a 100k-entry session: 125 MB instead of 150 with 4 KB pages). On disk every commit writes each
  // page it changed to the WAL, with two write calls per page: 16 KB pages make an import of 100k
  // entries 1,105 -> 831 ms (a quarter fewer calls' worth of time) for an append of 150 -> 290 us.
  db.run(`PRAGMA page_size = ${dbPath === ":memory:" ? 65536 : 16384}`);
  // busy_timeout first: switching to WAL and migrating already take locks another process may hold.
  db.run(`PRAGMA busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
  // Switching to WAL (and the first migration) may report SQLITE_BUSY at once, without the
  // busy handler, when another process is creating the same database: retry with backoff.
  withBusyRetry(() => {
    if ((db.query("PRAGMA journal_mode").get() as { journal_mode: string }).journal_mode !== "wal") {
      db.run("PRAGMA journal_mode = WAL");
    }
  });
  db.run("PRAGMA synchronous = NORMAL");
  // Pages of the database file are read from a mapping of it, not copied in by a read call
  // each (4 KB at a time: 2,500 calls for the 10 MB a 10k-entry session's answer reads); the
  // largest mapping SQLite allows. The WAL is still read with calls.
  if (dbPath !== ":memory:") db.run(`PRAGMA mmap_size = ${MMAP_SIZE}`);
  db.run("PRAGMA foreign_keys = ON");
  withBusyRetry(() => migrate(db));
  return new SqliteStore(db, dbPath === ":memory:" ? undefined : resolve(dbPath), options.owner ?? processOwner());
}

function withBusyRetry(fn: () => void, deadlineMs = 10_000): void {
  const until = Date.now() + deadlineMs;
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    try {
      return fn();
    } catch (err) {
      const busy = (err as { code?: string }).code?.startsWith("SQLITE_BUSY") || (err as { code?: string }).code === "SQLITE_LOCKED";
      if (!busy || Date.now() > until) throw err;
      Bun.sleepSync(wait);
    }
  }
}

class SqliteStore implements SessionStore {
  private readonly held = new Set<string>();
  private readonly q;
  private closed = false;

  constructor(
    private readonly db: Database,
    /** The database file; undefined in memory. */
    private readonly path: string | undefined,
    private readonly owner: ProcessOwner,
  ) {
    this.q = {
      insertSession: db.prepare<void, Param[]>(WRITE_SQL.insertSession),
      session: db.prepare<SessionRow, [string]>("SELECT * FROM session WHERE id = ?1"),
      sessionByFile: db.prepare<SessionRow, [string]>("SELECT * FROM session WHERE file = ?1"),
      afterAppend: db.prepare<void, Param[]>(WRITE_SQL.afterAppend),
      insertEntry: db.prepare<void, Param[]>(WRITE_SQL.insertEntry),
      insertUnconfirmed: db.prepare<void, Param[]>(WRITE_SQL.insertUnconfirmed),
      insertGrant: db.prepare<void, Param[]>(WRITE_SQL.insertGrant),
      grants: db.prepare<GrantedRule, [string]>("SELECT entry_id AS entryId, rule FROM granted_rule WHERE session_id = ?1 ORDER BY rowid"),
      insertFts: db.prepare<void, Param[]>("INSERT INTO entry_fts (rowid, text, role) VALUES (?1, ?2, ?3)"),
      ftsUpto: db.prepare<{ upto: number }, []>("SELECT upto FROM fts_state"),
      setFtsUpto: db.prepare<void, [number]>("UPDATE fts_state SET upto = ?1"),
      unindexed: db.prepare<{ seq: number; body: string }, [number]>(
        "SELECT seq, body FROM entry WHERE seq > ?1 AND type = 'message' AND role IN ('user', 'assistant', 'bashExecution') ORDER BY seq",
      ),
      lastSeq: db.prepare<{ seq: number | null }, []>("SELECT max(seq) AS seq FROM entry"),
      allBodies: db.prepare<BodyOnly, [string]>("SELECT body FROM entry WHERE session_id = ?1 ORDER BY seq"),
      chainPage: db.prepare<unknown, [string, number, number]>(
        "SELECT seq, id, CAST(body AS BLOB), CASE WHEN type = 'label' THEN body END FROM entry WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
      ),
      index: db.prepare<unknown, [string]>(
        `SELECT seq, id, parent_id, type, created_at, role, CASE WHEN type IN ('message', 'custom') THEN NULL ELSE body END
         FROM entry WHERE session_id = ?1 ORDER BY seq`,
      ),
      bodyPage: db.prepare<unknown, [string, number, number]>(
        "SELECT seq, CAST(body AS BLOB) FROM entry WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
      ),
      // The message's bytes cut from the body where it has a `message_at` (a byte offset too: see
      // the schema), else the body (json-pages.ts). Cut in SQL, the message is one value per row: no
      // JavaScript runs per row (at 10k entries 13 ms against 17 ms with the body's bytes cut here).
      contextMessages: db.prepare<unknown, [string, number, number]>(
        `SELECT seq, CASE WHEN message_at IS NOT NULL THEN substr(CAST(body AS BLOB), message_at + 1, octet_length(body) - message_at - 1) END,
           CASE WHEN message_at IS NULL THEN body END
         FROM entry WHERE session_id = ?1 AND seq > ?2 AND type = 'message' AND role IS NOT 'system'
         ORDER BY seq LIMIT ?3`,
      ),
      window: db.prepare<unknown, [string, number, number]>(
        "SELECT seq, body, message_at FROM entry WHERE session_id = ?1 AND seq >= ?2 ORDER BY seq LIMIT ?3",
      ),
      seqOf: db.prepare<{ seq: number }, [string, string]>("SELECT seq FROM entry WHERE session_id = ?1 AND id = ?2"),
      bodiesAfter: db.prepare<BodyOnly, [string, number, number]>(
        "SELECT body FROM entry WHERE session_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3",
      ),
      entry: db.prepare<BodyOnly, [string, string]>("SELECT body FROM entry WHERE session_id = ?1 AND id = ?2"),
      setLeaf: db.prepare<void, [string, string | null]>("UPDATE session SET leaf_id = ?2 WHERE id = ?1"),
      list: db.prepare<SessionRow, Param[]>(
        `SELECT * FROM session
         WHERE (?1 IS NULL OR cwd = ?1) AND (?2 IS NULL OR updated_at < ?2 OR (updated_at = ?2 AND id < ?3))
         ORDER BY updated_at DESC, id DESC LIMIT ?4`,
      ),
      search: db.prepare<HitRow, Param[]>(
        `SELECT e.session_id, s.file, e.id AS entry_id, f.role,
           snippet(entry_fts, 0, '**', '**', '…', 16) AS snippet, e.created_at
         FROM entry_fts f JOIN entry e ON e.seq = f.rowid JOIN session s ON s.id = e.session_id
         WHERE entry_fts MATCH ?1 AND (?2 IS NULL OR s.cwd = ?2)
         ORDER BY f.rank, e.seq DESC LIMIT ?3`,
      ),
      lock: db.prepare<LockRow, [string]>("SELECT pid, start FROM lock WHERE session_id = ?1"),
      putLock: db.prepare<void, Param[]>(
        "INSERT OR REPLACE INTO lock (session_id, pid, start, acquired_at) VALUES (?1, ?2, ?3, ?4)",
      ),
      dropLock: db.prepare<void, Param[]>("DELETE FROM lock WHERE session_id = ?1 AND pid = ?2 AND start = ?3"),
    };
  }

  createSession(header: SessionHeader, file?: string): void {
    const path = file === undefined ? null : resolve(file);
    try {
      this.db
        .transaction(() => {
          this.q.insertSession.run(...sessionParams(header, path));
        })
        .immediate();
    } catch (err) {
      if (err instanceof SQLiteError && err.code?.startsWith("SQLITE_CONSTRAINT")) {
        const clash = path !== null ? this.q.sessionByFile.get(path) : null;
        throw new PionError(
          clash && clash.id !== header.id
            ? `Session file ${path} already belongs to session ${clash.id}`
            : `Session ${header.id} already exists`,
          "session_exists",
        );
      }
      throw err;
    }
  }

  importSession(header: SessionHeader, file: string | undefined, entries: Iterable<StoredEntry>, cache: () => SessionCache): void {
    const BATCH = 1000;
    let batches = 0;
    const write = () =>
      this.db.transaction(() => {
        this.createSession(header, file);
        // Each row is written as it comes (its bytes may be reused for the next); the session row
        // is brought up to date a batch at a time.
        let batch: Entry[] = [];
        for (const row of entries) {
          this.insertEntry(header.id, row);
          batch.push(row.entry);
          if (batch.length < BATCH) continue;
          this.q.afterAppend.run(...afterAppendParams(header.id, batch));
          batch = [];
          // Each entry leaves its parsed object and JSON behind; a young-generation collection
          // every 10,000 entries keeps a 100k-entry import at about half the memory, at no cost in time.
          if (++batches % 10 === 0) Bun.gc(false);
        }
        if (batch.length > 0) this.q.afterAppend.run(...afterAppendParams(header.id, batch));
        this.setSessionCache(header.id, cache());
      }).immediate();
    // The entries' session row is written first, in the same transaction: the foreign key check
    // of every entry (a lookup per row, a tenth of an import in memory) can only pass, so it is off
    // for the import (the pragma takes effect outside a transaction only).
    this.db.run("PRAGMA foreign_keys = OFF");
    try {
      // The checkpoint of what the import wrote runs aside (see checkpoint.ts).
      if (this.path) writeThenCheckpointAside(this.db, this.path, write, () => this.closed);
      else write();
    } finally {
      this.db.run("PRAGMA foreign_keys = ON");
    }
    // What the import read and parsed is garbage now: collect it before the session is used. Left
    // to the collector's own schedule, the next answer paid for it (1k entries: get_messages read
    // and written in 6 ms after an import, 3-3.5 ms after a young-generation collection that
    // costs 1.2-1.7 ms here). From 50k entries a full one, or the next answers grow the process.
    Bun.gc(batches >= 50);
  }

  getSession(sessionId: string): SessionMeta | undefined {
    const row = this.q.session.get(sessionId);
    return row ? toMeta(row) : undefined;
  }

  // The answers that stream a whole session read it a page of rows at a time, as arrays (no object
  // per row) of bytes, made into one piece each (json-pages.ts): a large session is never all in
  // memory, and SQLite's own group_concat was two to three times slower than joining here.
  chainPages(sessionId: string): Iterable<ChainPage> {
    return this.paged(sessionId, this.q.chainPage, (rows: [number, string, Uint8Array, string | null][]) => chainPage(rows));
  }

  bodyPages(sessionId: string): Iterable<JsonPiece> {
    return this.paged(sessionId, this.q.bodyPage, (rows: [number, Uint8Array][]) => joinBodies(rows));
  }

  contextMessages(sessionId: string): Iterable<JsonPiece> {
    return this.paged(sessionId, this.q.contextMessages, (rows: [number, Uint8Array | null, string | null][]) =>
      joinMessages(rows, (body, seq) => messageOf(body, null, seq)),
    );
  }

  /** `query`'s rows (seq first; parameters session, after-seq, limit) PAGE at a time, each page made one piece. */
  private paged<R extends [number, ...unknown[]], T>(sessionId: string, query: Statement<unknown, [string, number, number]>, piece: (rows: R[]) => T): Iterable<T> {
    this.mustExist(sessionId);
    return {
      *[Symbol.iterator]() {
        for (let after = 0; ; ) {
          const rows = query.values(sessionId, after, PAGE) as unknown as R[];
          if (rows.length > 0) yield piece(rows);
          if (rows.length < PAGE) return;
          after = rows[rows.length - 1]![0];
        }
      },
    };
  }

  entryIndex(sessionId: string): IndexRow[] {
    this.mustExist(sessionId);
    type Row = [number, string, string | null, string, string, string | null, string | null];
    return (this.q.index.values(sessionId) as unknown as Row[]).map(([ref, id, parentId, type, timestamp, role, body]) => ({ ref, id, parentId, type, timestamp, role, body }));
  }

  bodyReader(sessionId: string): (ref: number) => string {
    const row = this.windowReader(sessionId);
    return (ref) => row(ref)[1];
  }

  messageReader(sessionId: string): (ref: number) => string {
    const row = this.windowReader(sessionId);
    return (ref) => {
      const [, body, at] = row(ref);
      return messageOf(body, at, ref);
    };
  }

  /** Rows by seq, read WINDOW at a time from the first one not at hand. */
  private windowReader(sessionId: string): (ref: number) => WindowRow {
    const WINDOW = 512;
    let rows = new Map<number, WindowRow>();
    return (ref) => {
      let row = rows.get(ref);
      if (row) return row;
      rows = new Map();
      for (const r of this.q.window.values(sessionId, ref, WINDOW) as unknown as WindowRow[]) rows.set(r[0], r);
      row = rows.get(ref);
      if (!row) throw new PionError(`No entry at row ${ref} in session ${sessionId}`, "unknown_entry");
      return row;
    };
  }

  setSessionCache(sessionId: string, cache: SessionCache): void {
    this.mustExist(sessionId);
    this.db.query("UPDATE session SET cache = ?2 WHERE id = ?1").run(sessionId, JSON.stringify(cache));
  }

  findSessionByFile(path: string): SessionMeta | undefined {
    const row = this.q.sessionByFile.get(resolve(path));
    return row ? toMeta(row) : undefined;
  }

  append(sessionId: string, entry: Entry, granted?: readonly string[]): void {
    this.appendMany(sessionId, [entry], granted?.map((rule) => ({ entryId: entry.id, rule })));
  }

  appendMany(sessionId: string, entries: readonly Entry[], granted: readonly GrantedRule[] = []): void {
    if (entries.length === 0) return;
    const rows = entries.map((entry) => ({ entry, body: JSON.stringify(entry) }));
    this.db.transaction(() => this.insertAll(sessionId, rows, granted)).immediate();
  }

  grantedRules(sessionId: string): GrantedRule[] {
    this.mustExist(sessionId);
    return this.q.grants.all(sessionId);
  }

  entries(sessionId: string): Entry[] {
    this.mustExist(sessionId);
    return this.q.allBodies.all(sessionId).map(parseBody);
  }

  entriesSince(sessionId: string, sinceId: string, limit?: number): EntryPage {
    this.mustExist(sessionId);
    const since = this.q.seqOf.get(sessionId, sinceId);
    if (!since) throw new PionError(`Entry ${sinceId} not found in session ${sessionId}`, "unknown_entry");
    return this.pageAfter(sessionId, since.seq, limit);
  }

  entriesPage(sessionId: string, limit: number): EntryPage {
    this.mustExist(sessionId);
    return this.pageAfter(sessionId, 0, limit);
  }

  entryCount(sessionId: string): number {
    return this.mustExist(sessionId).entry_count;
  }

  getEntry(sessionId: string, entryId: string): Entry | undefined {
    const row = this.q.entry.get(sessionId, entryId);
    return row ? parseBody(row) : undefined;
  }

  setLeaf(sessionId: string, leafId: string | null): void {
    this.mustExist(sessionId);
    if (leafId !== null && !this.q.seqOf.get(sessionId, leafId)) {
      throw new PionError(`Entry ${leafId} not found in session ${sessionId}`, "unknown_entry");
    }
    this.q.setLeaf.run(sessionId, leafId);
  }

  listSessions(options: ListSessionsOptions = {}): SessionList {
    const limit = positiveLimit(options.limit, 50);
    const after = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
    const rows = this.q.list.all(options.cwd ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1);
    const page = rows.slice(0, limit);
    const last = page[page.length - 1];
    return {
      sessions: page.map(toSummary),
      ...(rows.length > limit && last ? { nextCursor: encodeCursor(last.updated_at, last.id) } : {}),
    };
  }

  searchSessions(options: SearchOptions): SearchHit[] {
    const match = ftsQuery(options.query);
    if (!match) return [];
    this.indexForSearch();
    return this.q.search.all(match, options.cwd ?? null, positiveLimit(options.limit, 20)).map((r) => ({
      sessionId: r.session_id,
      sessionFile: r.file ?? undefined,
      entryId: r.entry_id,
      role: r.role,
      snippet: r.snippet,
      timestamp: r.created_at,
    }));
  }

  acquireSession(sessionId: string): void {
    this.db
      .transaction(() => {
        const lock = this.q.lock.get(sessionId);
        if (heldElsewhere(lock, this.owner)) throw sessionLocked(sessionId, lock.pid);
        this.q.putLock.run(sessionId, this.owner.pid, this.owner.start, new Date().toISOString());
      })
      .immediate();
    this.held.add(sessionId);
  }

  deleteSession(sessionId: string): void {
    this.db
      .transaction(() => {
        this.mustExist(sessionId);
        const lock = this.q.lock.get(sessionId);
        if (heldElsewhere(lock, this.owner)) throw sessionLocked(sessionId, lock.pid);
        for (const sql of DELETE_SESSION_SQL) this.db.run(sql, [sessionId]);
      })
      .immediate();
    this.held.delete(sessionId);
  }

  releaseSession(sessionId: string): void {
    this.q.dropLock.run(sessionId, this.owner.pid, this.owner.start);
    this.held.delete(sessionId);
  }

  close(): void {
    this.closed = true;
    for (const id of [...this.held]) this.releaseSession(id);
    // The last connection's close checkpoints the WAL (two syncs: 3 ms even for a few pages), which
    // spares the next opener a replay of it. Worth it for a large WAL (an import the checkpoint
    // thread had no time for: after a 10k-entry import and an exit, the next switch_session took
    // 54 ms instead of 3.3 ms); a small one is left as a crash would leave it, its replay costing less
    // than the syncs: SQLite does not checkpoint on a close while statements are left unfinalized.
    if (this.path && walBytes(this.path) < LARGE_WAL_BYTES) {
      this.db.close(false);
      return;
    }
    for (const st of Object.values(this.q)) st.finalize();
    try {
      this.db.close(true);
    } catch (err) {
      log("store", "a statement was left open; the database closes when it is done", { error: err instanceof Error ? err.message : String(err) });
      this.db.close(false);
    }
  }

  /**
   * Brings the full-text index up to date: appends and imports leave it behind (a 100k-entry
   * import would spend a third of its time there), so the first search after them indexes
   * what they wrote, once, for every process sharing the database.
   */
  private indexForSearch(): void {
    const upto = this.q.ftsUpto.get()?.upto ?? 0;
    if ((this.q.lastSeq.get()?.seq ?? 0) <= upto) return;
    this.db
      .transaction(() => {
        const from = this.q.ftsUpto.get()?.upto ?? 0; // another process may have indexed meanwhile
        const last = this.q.lastSeq.get()?.seq ?? 0;
        for (const row of this.q.unindexed.iterate(from)) {
          if (row.seq > last) break;
          const indexed = searchableText(parseBody(row));
          if (indexed) this.q.insertFts.run(row.seq, indexed.text, indexed.role);
        }
        this.q.setFtsUpto.run(last);
      })
      .immediate();
  }

  private insertAll(sessionId: string, entries: readonly StoredEntry[], granted: readonly GrantedRule[]): void {
    this.mustExist(sessionId);
    for (const row of entries) this.insertEntry(sessionId, row);
    this.q.afterAppend.run(...afterAppendParams(sessionId, entries.map((row) => row.entry)));
    // The foreign key holds each grant to an entry of the session.
    for (const g of granted) this.q.insertGrant.run(sessionId, g.entryId, g.rule);
  }

  private insertEntry(sessionId: string, row: StoredEntry): void {
    const { entry } = row;
    try {
      runInsertEntry(row.unconfirmed ? this.q.insertUnconfirmed : this.q.insertEntry, sessionId, row);
    } catch (err) {
      if (err instanceof SQLiteError && err.code === "SQLITE_CONSTRAINT_UNIQUE") {
        throw new PionError(`Entry id ${entry.id} already exists in session ${sessionId}`, "duplicate_entry");
      }
      if (row.unconfirmed && err instanceof SQLiteError && err.code === "SQLITE_CONSTRAINT_NOTNULL") throw new UnconfirmedRow(entry.id);
      throw err;
    }
  }

  private pageAfter(sessionId: string, seq: number, limit: number | undefined): EntryPage {
    const n = limit === undefined ? NO_LIMIT : Math.max(0, Math.floor(limit));
    const rows = this.q.bodiesAfter.all(sessionId, seq, n === NO_LIMIT ? NO_LIMIT : n + 1);
    const hasMore = n !== NO_LIMIT && rows.length > n;
    return { entries: (hasMore ? rows.slice(0, n) : rows).map(parseBody), hasMore };
  }

  private mustExist(sessionId: string): SessionRow {
    const row = this.q.session.get(sessionId);
    if (!row) throw new PionError(`Unknown session ${sessionId}`, "unknown_session");
    return row;
  }
}

/** The message's JSON: a slice of the body where `at` says where it starts, else through a parse. */
function messageOf(body: string, at: number | null, ref?: number): string {
  if (at !== null) return body.slice(at, -1);
  const message = (JSON.parse(body) as { message?: unknown }).message;
  if (message === undefined) throw new PionError(`The entry at row ${ref} is not a message`, "unknown_entry");
  return JSON.stringify(message);
}

// Bodies are JSON this store wrote from Entry values; they are not re-validated on the way out.
const parseBody = (row: BodyOnly): Entry => JSON.parse(row.body) as Entry;

function toMeta(row: SessionRow): SessionMeta {
  return {
    header: JSON.parse(row.header) as SessionHeader,
    ...(row.file !== null ? { file: row.file } : {}),
    ...(row.name !== null ? { name: row.name } : {}),
    leafId: row.leaf_id,
    ...(row.cache !== null ? { cache: JSON.parse(row.cache) as SessionCache } : {}),
  };
}

function toSummary(row: SessionRow): SessionSummary {
  return {
    sessionId: row.id,
    file: row.file ?? undefined,
    cwd: row.cwd,
    name: row.name ?? undefined,
    firstMessage: row.first_message ?? undefined,
    messageCount: row.message_count,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    parentSession: row.parent_session ?? undefined,
  };
}

function positiveLimit(limit: number | undefined, fallback: number): number {
  return limit === undefined ? fallback : Math.max(1, Math.floor(limit));
}

function encodeCursor(updatedAt: string, id: string): string {
  return Buffer.from(JSON.stringify([updatedAt, id])).toString("base64url");
}

function decodeCursor(cursor: string): [string, string] {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    value = undefined;
  }
  if (Array.isArray(value) && value.length === 2 && typeof value[0] === "string" && typeof value[1] === "string") {
    return [value[0], value[1]];
  }
  throw new PionError("Invalid session list cursor", "invalid_cursor");
}

/** Every word must occur; the last may be a prefix. Quoting keeps FTS5 syntax out of user input. */
function ftsQuery(query: string): string | undefined {
  const words = query.match(/[\p{L}\p{N}]+/gu);
  if (!words) return undefined;
  return words.map((w, i) => `"${w}"${i === words.length - 1 ? "*" : ""}`).join(" ");
}
