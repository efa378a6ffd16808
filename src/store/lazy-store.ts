import type { JsonPiece } from "../util/json-pieces.ts";
import type { Entry, SessionHeader } from "./entries.ts";
import type { ChainPage, EntryPage, GrantedRule, IndexRow, ListSessionsOptions, SearchHit, SearchOptions, SessionCache, SessionList, SessionMeta, SessionStore, StoredEntry } from "./store.ts";

/**
 * A store opened on its first use. A new session writes nothing until its first entry, so a
 * process that only answers queries (`get_state`, `get_commands`, …) never opens the
 * database: start-up skips SQLite's own memory and the schema check. Closing a store that
 * was never opened does nothing.
 */
export class LazyStore implements SessionStore {
  private store: SessionStore | undefined;
  private closed = false;

  constructor(private readonly open: () => SessionStore) {}

  private get s(): SessionStore {
    if (this.closed) throw new Error("the session store is closed");
    return (this.store ??= this.open());
  }

  createSession(header: SessionHeader, file?: string): void {
    this.s.createSession(header, file);
  }
  importSession(header: SessionHeader, file: string | undefined, entries: Iterable<StoredEntry>, cache: () => SessionCache): void {
    this.s.importSession(header, file, entries, cache);
  }
  getSession(sessionId: string): SessionMeta | undefined {
    return this.s.getSession(sessionId);
  }
  append(sessionId: string, entry: Entry, granted?: readonly string[]): void {
    this.s.append(sessionId, entry, granted);
  }
  appendMany(sessionId: string, entries: readonly Entry[], granted?: readonly GrantedRule[]): void {
    this.s.appendMany(sessionId, entries, granted);
  }
  grantedRules(sessionId: string): GrantedRule[] {
    return this.s.grantedRules(sessionId);
  }
  entries(sessionId: string): Entry[] {
    return this.s.entries(sessionId);
  }
  chainPages(sessionId: string): Iterable<ChainPage> {
    return this.s.chainPages(sessionId);
  }
  bodyPages(sessionId: string): Iterable<JsonPiece> {
    return this.s.bodyPages(sessionId);
  }
  contextMessages(sessionId: string): Iterable<JsonPiece> {
    return this.s.contextMessages(sessionId);
  }
  entryIndex(sessionId: string): IndexRow[] {
    return this.s.entryIndex(sessionId);
  }
  bodyReader(sessionId: string): (ref: number) => string {
    return this.s.bodyReader(sessionId);
  }
  messageReader(sessionId: string): (ref: number) => string {
    return this.s.messageReader(sessionId);
  }
  entriesSince(sessionId: string, sinceId: string, limit?: number): EntryPage {
    return this.s.entriesSince(sessionId, sinceId, limit);
  }
  entriesPage(sessionId: string, limit: number): EntryPage {
    return this.s.entriesPage(sessionId, limit);
  }
  entryCount(sessionId: string): number {
    return this.s.entryCount(sessionId);
  }
  getEntry(sessionId: string, entryId: string): Entry | undefined {
    return this.s.getEntry(sessionId, entryId);
  }
  setLeaf(sessionId: string, leafId: string | null): void {
    this.s.setLeaf(sessionId, leafId);
  }
  listSessions(options?: ListSessionsOptions): SessionList {
    return this.s.listSessions(options);
  }
  searchSessions(options: SearchOptions): SearchHit[] {
    return this.s.searchSessions(options);
  }
  findSessionByFile(path: string): SessionMeta | undefined {
    return this.s.findSessionByFile(path);
  }
  acquireSession(sessionId: string): void {
    this.s.acquireSession(sessionId);
  }
  setSessionCache(sessionId: string, cache: SessionCache): void {
    this.s.setSessionCache(sessionId, cache);
  }
  deleteSession(sessionId: string): void {
    this.s.deleteSession(sessionId);
  }
  releaseSession(sessionId: string): void {
    // Nothing was claimed by a store that was never opened.
    this.store?.releaseSession(sessionId);
  }
  close(): void {
    this.closed = true;
    this.store?.close();
  }
}
