import { buildTree, collectLabels, pathTo, serializeChain, serializeTree, type AgentMessage, type Entry, type SessionHeader } from "../store/entries.ts";
import type { GrantedRule, SessionCache, SessionStore } from "../store/store.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { shortId, uuid } from "../util/id.ts";
import { buildContext } from "./context.ts";
import { indexEntries, summaryOf } from "./navigation.ts";
import { commaJoined, type JsonPiece } from "../util/json-pieces.ts";

/** An entry before the tree gives it an id, parent and time. */
export type EntryInput = Entry extends infer E ? (E extends Entry ? Omit<E, "id" | "parentId" | "timestamp"> : never) : never;

/** A session about to be started: its id and time, which name its file before it exists. */
export type PlannedSession = { id: string; timestamp: string };

/**
 * The current session's entry tree: header, entries by id, the leaf, and its link to the
 * store. Appends are committed before they return (persist before announce). A new
 * session reaches the store only with its first entry that is not a model or
 * thinking-level change, so a process that only answers get_state leaves nothing behind
 * (the reference agent behaves the same way).
 */
export class SessionTree {
  header!: SessionHeader;
  file: string | undefined;
  name: string | undefined;
  private byId = new Map<string, Entry>();
  private leafId: string | null = null;
  private stored = false;
  /** Start entries held back until the session has something worth keeping. */
  private pending: Entry[] = [];
  private contextCache: { leaf: string | null; byId: Map<string, Entry>; messages: AgentMessage[] } | undefined;
  /**
   * False after opening a stored session whose summary (SessionCache) is still valid: its
   * entries are read on first use, so open + get_state does not read a 100k-entry session.
   */
  private loaded = true;
  private cache: SessionCache | undefined;

  constructor(
    private store: SessionStore,
    private cwd: string,
    private fileFor: (h: SessionHeader) => string | undefined,
    /** The model and thinking level to record in the summary when the session is left. */
    private settings: () => Pick<SessionCache, "model" | "thinkingLevel">,
  ) {}

  get sessionId(): string {
    return this.header.id;
  }

  get leaf(): string | null {
    return this.leafId;
  }

  get isStored(): boolean {
    return this.stored;
  }

  /** The id and time of a session started now, and the file it will have: a caller may name the file before the change. */
  plan(): { planned: PlannedSession; file: string | undefined } {
    const planned = { id: uuid(), timestamp: new Date().toISOString() };
    return { planned, file: this.fileFor(this.headerOf(planned)) };
  }

  private headerOf(at: string | PlannedSession): SessionHeader {
    const { id, timestamp } = typeof at === "string" ? { id: at, timestamp: new Date().toISOString() } : at;
    return { type: "session", version: 3, id, timestamp, cwd: this.cwd };
  }

  /** `id` (`--session-id`) is the caller's to check: it must not be in the store yet. */
  startNew(parentSession?: string, id: string | PlannedSession = uuid()): void {
    this.release();
    this.header = this.headerOf(id);
    if (parentSession) this.header.parentSession = parentSession;
    this.reset(this.fileFor(this.header), [], null, false);
  }

  /** Continue a session already in the store: its entries, leaf and name. */
  openStored(sessionId: string): void {
    if (!this.store.getSession(sessionId)) throw new PionError(`Session not found: ${sessionId}`, "not_found");
    this.store.acquireSession(sessionId);
    // Read after the claim: opening may bring in entries another writer added to the file (file-catch-up.ts).
    const meta = this.store.getSession(sessionId)!;
    this.release();
    this.header = meta.header;
    if (meta.cache && meta.cache.leafId === meta.leafId) {
      this.reset(meta.file, [], meta.leafId, true);
      this.loaded = false;
      this.cache = meta.cache;
      this.name = meta.name;
      return;
    }
    this.reset(meta.file, this.store.entries(sessionId), meta.leafId, true);
  }

  /** Read the entries of a session opened lazily. */
  private load(): void {
    if (this.loaded) return;
    const name = this.name;
    this.reset(this.file, this.store.entries(this.sessionId), this.leafId, true);
    this.name = name ?? this.name;
  }

  /** Context message count of the active branch (from the summary while nothing is read). */
  messageCount(): number {
    return !this.loaded && this.cache ? this.cache.messageCount : this.messages().length;
  }

  /** Model and thinking level recorded for the leaf, when the entries are not read yet. */
  cachedSettings(): Pick<SessionCache, "model" | "thinkingLevel"> | undefined {
    return !this.loaded && this.cache ? { model: this.cache.model, thinkingLevel: this.cache.thinkingLevel } : undefined;
  }

  /**
   * Continue in a new session holding `entries` (same ids), whose header names this
   * session as its parent. Used by fork and clone (and `--fork`, which may choose the `id`).
   */
  branchInto(entries: Entry[], id: string | PlannedSession = uuid()): void {
    const parent = this.file ?? this.header.id;
    // What this pion granted in the source goes along with the entries recording it (a source
    // imported from a file has no grants to give).
    const copied = new Set(entries.map((e) => e.id));
    const granted = this.stored ? this.store.grantedRules(this.sessionId).filter((g) => copied.has(g.entryId)) : [];
    this.release();
    this.header = { ...this.headerOf(id), parentSession: parent };
    const file = this.fileFor(this.header);
    this.store.createSession(this.header, file);
    this.store.acquireSession(this.header.id);
    if (entries.length > 0) this.store.appendMany(this.header.id, entries, granted);
    this.reset(file, entries, entries.at(-1)?.id ?? null, true);
  }

  private reset(file: string | undefined, entries: Entry[], leaf: string | null, stored: boolean): void {
    this.loaded = true;
    this.cache = undefined;
    this.file = file;
    this.byId = new Map(entries.map((e) => [e.id, e]));
    this.leafId = leaf;
    this.stored = stored;
    this.pending = [];
    this.name = undefined;
    for (const e of entries) if (e.type === "session_info") this.name = e.name;
  }

  /** Leave the current session: record its summary for the next opener, give up the writer lock. */
  release(): void {
    if (!this.stored || !this.header) return;
    // Never throws: a full disk or a failed database leaves a stale summary (the next opener reads
    // the entries instead) and a lock that dies with this process.
    try {
      if (this.loaded) {
        // What the branch recorded (a session change may have set the next session's model on the
        // session already); the session's own settings only where the branch recorded none.
        this.store.setSessionCache(this.header.id, { ...this.settings(), ...summaryOf(this.byId, this.leafId) });
      }
    } catch (err) {
      log("session", "the session's summary could not be saved; the next opener reads its entries", { error: errorMessage(err) });
    }
    try {
      this.store.releaseSession(this.header.id);
    } catch (err) {
      log("session", "the session's lock could not be released; it lapses when this process exits", { error: errorMessage(err) });
    }
  }

  /** All entries in append order (not only the active branch). */
  entries(): Entry[] {
    return this.stored ? this.store.entries(this.sessionId) : [...this.pending];
  }

  /** The allow rules granted with this session's appends, in grant order (SessionStore.grantedRules). */
  grantedRules(): GrantedRule[] {
    return this.stored ? this.store.grantedRules(this.sessionId) : [];
  }

  has(id: string): boolean {
    this.load();
    return this.byId.has(id);
  }

  get(id: string): Entry | undefined {
    this.load();
    return this.byId.get(id);
  }

  /** `granted`: allow rules the permission gate granted, recorded by this entry (SessionStore.append). */
  append(partial: EntryInput, granted?: readonly string[]): Entry {
    this.load();
    // The reference's field order: the common fields first, so a message's JSON is the body's tail.
    const { type, ...rest } = partial;
    const entry = { type, id: shortId(this.byId), parentId: this.leafId, timestamp: new Date().toISOString(), ...rest } as Entry;
    const store = this.store;
    if (this.stored) store.append(this.sessionId, entry, granted);
    else if (entry.type === "model_change" || entry.type === "thinking_level_change") this.pending.push(entry);
    else {
      store.createSession(this.header, this.file);
      store.acquireSession(this.sessionId);
      store.appendMany(this.sessionId, [...this.pending, entry], granted?.map((rule) => ({ entryId: entry.id, rule })));
      this.pending = [];
      this.stored = true;
    }
    this.byId.set(entry.id, entry);
    this.leafId = entry.id;
    return entry;
  }

  /** Move the leaf (branching); the new position is persisted with the session. */
  setLeaf(leafId: string | null): void {
    this.load();
    if (this.stored) this.store.setLeaf(this.sessionId, leafId);
    this.leafId = leafId;
  }

  branchPath(): Entry[] {
    this.load();
    return pathTo(this.byId, this.leafId);
  }

  /**
   * The active branch's context as JSON text pieces (the `get_messages` answer). A stored
   * session whose entries are not read yet is answered from the store without reading them:
   * the context is built over the index (messages by role only), and each message's JSON is
   * taken from its row as the answer is written. Everything that can fail happens before this
   * returns.
   */
  messagesJson(): Iterable<JsonPiece> {
    if (this.loaded || !this.stored) return jsonArray(this.messages(), (m) => JSON.stringify(m));
    // A linear session without context-shaping entries: its message rows are the context.
    if (this.cache?.plainContext) return bracketed(commaJoined(this.store.contextMessages(this.sessionId)));
    const refs = new Map<object, number>();
    const byId = indexEntries(this.store.entryIndex(this.sessionId), (message, row) => refs.set(message, row.ref));
    const messages = buildContext(pathTo(byId, this.leafId));
    const messageJson = this.store.messageReader(this.sessionId);
    return jsonArray(messages, (m) => {
      const ref = refs.get(m);
      return ref === undefined ? JSON.stringify(m) : messageJson(ref);
    });
  }

  /**
   * The session's tree as JSON text pieces (the `get_tree` answer). Stored entries are read as
   * the answer is written: a linear session's rows in order, any other over the index (no
   * bodies), each body read when its node is reached.
   */
  treeJson(): Iterable<JsonPiece> {
    if (!this.stored) {
      const entries = this.entries();
      return serializeTree(buildTree(entries, collectLabels(entries)));
    }
    if (!this.loaded && this.cache?.linear) return serializeChain(this.store.chainPages(this.sessionId));
    const rows = this.store.entryIndex(this.sessionId);
    const labels = collectLabels(rows.filter((r) => r.type === "label" && r.body !== null).map((r) => JSON.parse(r.body!) as Entry));
    const body = this.store.bodyReader(this.sessionId);
    return serializeTree(buildTree(rows, labels), (r) => r.body ?? body(r.ref));
  }

  /** The context of the active branch; cached until the leaf moves (entries never change). */
  messages(): AgentMessage[] {
    this.load();
    if (this.contextCache?.leaf !== this.leafId || this.contextCache.byId !== this.byId) {
      this.contextCache = { leaf: this.leafId, byId: this.byId, messages: buildContext(this.branchPath()) };
    }
    return this.contextCache.messages;
  }
}

/** `[a,b,…]` in pieces, each item's JSON made when it is reached. */
function jsonArray<T>(items: readonly T[], json: (item: T) => string): Iterable<JsonPiece> {
  return bracketed(commaJoined(lazyMap(items, json)));
}

function* lazyMap<T>(items: readonly T[], json: (item: T) => string): Generator<string> {
  for (const item of items) yield json(item);
}

function* bracketed(parts: Iterable<JsonPiece>): Generator<JsonPiece> {
  yield "[";
  yield* parts;
  yield "]";
}
