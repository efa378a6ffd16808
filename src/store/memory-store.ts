import { PionError } from "../util/errors.ts";
import { type Entry, type SessionHeader, searchableText, userText } from "./entries.ts";
import type {
  EntryPage,
  ListSessionsOptions,
  SearchHit,
  SearchOptions,
  SessionList,
  RawEntry,
  SessionCache,
  SessionMeta,
  SessionStore,
  SessionSummary,
} from "./store.ts";

interface MemorySession {
  meta: SessionMeta;
  entries: Entry[];
  /** Entry id → index in `entries`, so cursors cost O(result). */
  index: Map<string, number>;
  firstMessage: string | undefined;
  messageCount: number;
  updatedAt: string;
}

/**
 * Keeps everything in memory (tests, or a host that wants no database at all). Same contract as
 * the SQLite store, except that locks are per instance and search is a plain substring match.
 */
export class MemoryStore implements SessionStore {
  private sessions = new Map<string, MemorySession>();

  createSession(header: SessionHeader, file?: string): void {
    if (this.sessions.has(header.id)) throw new PionError(`Session ${header.id} already exists`, "session_exists");
    this.sessions.set(header.id, {
      meta: { header, ...(file !== undefined ? { file } : {}), leafId: null },
      entries: [],
      index: new Map(),
      firstMessage: undefined,
      messageCount: 0,
      updatedAt: header.timestamp,
    });
  }

  importSession(header: SessionHeader, file: string | undefined, entries: Iterable<Entry>, cache: () => SessionCache): void {
    this.createSession(header, file);
    try {
      this.appendMany(header.id, [...entries]);
      this.setSessionCache(header.id, cache());
    } catch (err) {
      this.sessions.delete(header.id);
      throw err;
    }
  }

  getSession(sessionId: string): SessionMeta | undefined {
    return this.sessions.get(sessionId)?.meta;
  }

  rawEntries(sessionId: string): RawEntry[] {
    return this.entries(sessionId).map((e) => ({ id: e.id, parentId: e.parentId, type: e.type, timestamp: e.timestamp, body: JSON.stringify(e) }));
  }

  setSessionCache(sessionId: string, cache: SessionCache): void {
    this.must(sessionId).meta.cache = cache;
  }

  findSessionByFile(path: string): SessionMeta | undefined {
    for (const s of this.sessions.values()) if (s.meta.file === path) return s.meta;
    return undefined;
  }

  append(sessionId: string, entry: Entry): void {
    this.appendMany(sessionId, [entry]);
  }

  appendMany(sessionId: string, entries: readonly Entry[]): void {
    const s = this.must(sessionId);
    const ids = new Set<string>();
    for (const e of entries) {
      if (s.index.has(e.id) || ids.has(e.id)) {
        throw new PionError(`Entry id ${e.id} already exists in session ${sessionId}`, "duplicate_entry");
      }
      ids.add(e.id);
    }
    for (const e of entries) {
      s.index.set(e.id, s.entries.length);
      s.entries.push(e);
      s.meta.leafId = e.id;
      if (e.timestamp > s.updatedAt) s.updatedAt = e.timestamp;
      if (e.type === "message") s.messageCount++;
      s.firstMessage ??= userText(e);
      if (e.type === "session_info") {
        const name = e.name?.trim();
        if (name) s.meta.name = name;
        else delete s.meta.name;
      }
    }
  }

  entries(sessionId: string): Entry[] {
    return this.must(sessionId).entries.slice();
  }

  entriesSince(sessionId: string, sinceId: string, limit?: number): EntryPage {
    const s = this.must(sessionId);
    const at = s.index.get(sinceId);
    if (at === undefined) throw new PionError(`Entry ${sinceId} not found in session ${sessionId}`, "unknown_entry");
    return page(s.entries, at + 1, limit);
  }

  entriesPage(sessionId: string, limit: number): EntryPage {
    return page(this.must(sessionId).entries, 0, limit);
  }

  entryCount(sessionId: string): number {
    return this.must(sessionId).entries.length;
  }

  getEntry(sessionId: string, entryId: string): Entry | undefined {
    const s = this.sessions.get(sessionId);
    const at = s?.index.get(entryId);
    return s && at !== undefined ? s.entries[at] : undefined;
  }

  setLeaf(sessionId: string, leafId: string | null): void {
    const s = this.must(sessionId);
    if (leafId !== null && !s.index.has(leafId)) {
      throw new PionError(`Entry ${leafId} not found in session ${sessionId}`, "unknown_entry");
    }
    s.meta.leafId = leafId;
  }

  listSessions(options: ListSessionsOptions = {}): SessionList {
    const limit = options.limit === undefined ? 50 : Math.max(1, Math.floor(options.limit));
    const start = options.cursor === undefined ? 0 : Number.parseInt(options.cursor, 10);
    if (!Number.isInteger(start) || start < 0) throw new PionError("Invalid session list cursor", "invalid_cursor");
    const all = [...this.sessions.values()]
      .filter((s) => options.cwd === undefined || s.meta.header.cwd === options.cwd)
      .sort((a, b) => cmp(b.updatedAt, a.updatedAt) || cmp(b.meta.header.id, a.meta.header.id));
    const next = start + limit;
    return {
      sessions: all.slice(start, next).map(summary),
      ...(next < all.length ? { nextCursor: String(next) } : {}),
    };
  }

  searchSessions(options: SearchOptions): SearchHit[] {
    const needle = options.query.trim().toLowerCase();
    if (!needle) return [];
    const hits: SearchHit[] = [];
    const limit = options.limit === undefined ? 20 : Math.max(1, Math.floor(options.limit));
    for (const s of this.sessions.values()) {
      if (options.cwd !== undefined && s.meta.header.cwd !== options.cwd) continue;
      for (const e of s.entries) {
        const found = searchableText(e);
        const at = found ? found.text.toLowerCase().indexOf(needle) : -1;
        if (!found || at < 0) continue;
        hits.push({
          sessionId: s.meta.header.id,
          sessionFile: s.meta.file,
          entryId: e.id,
          role: found.role,
          snippet: found.text.slice(Math.max(0, at - 60), at + needle.length + 60),
          timestamp: e.timestamp,
        });
        if (hits.length >= limit) return hits;
      }
    }
    return hits;
  }

  acquireSession(sessionId: string): void {
    void sessionId; // one process, one instance: nothing to contend with
  }

  releaseSession(sessionId: string): void {
    void sessionId;
  }

  close(): void {}

  private must(sessionId: string): MemorySession {
    const s = this.sessions.get(sessionId);
    if (!s) throw new PionError(`Unknown session ${sessionId}`, "unknown_session");
    return s;
  }
}

function page(entries: readonly Entry[], from: number, limit: number | undefined): EntryPage {
  const to = limit === undefined ? entries.length : from + Math.max(0, Math.floor(limit));
  return { entries: entries.slice(from, to), hasMore: to < entries.length };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function summary(s: MemorySession): SessionSummary {
  const h = s.meta.header;
  return {
    sessionId: h.id,
    file: s.meta.file,
    cwd: h.cwd,
    name: s.meta.name,
    firstMessage: s.firstMessage,
    messageCount: s.messageCount,
    createdAt: h.timestamp,
    updatedAt: s.updatedAt,
    parentSession: h.parentSession,
  };
}
