import { closeSync, existsSync, ftruncateSync, fstatSync, openSync, readSync, rmSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { PionError } from "../util/errors.ts";
import type { JsonPiece } from "../util/json-pieces.ts";
import { log } from "../util/log.ts";
import type { Entry, SessionHeader } from "./entries.ts";
import { entryLine, headerLine } from "./jsonl.ts";
import { ensurePrivateDir } from "./paths.ts";
import { asStorageError } from "./storage-error.ts";
import type {
  EntryPage,
  ListSessionsOptions,
  SearchHit,
  SearchOptions,
  SessionList,
  ChainPage,
  GrantedRule,
  IndexRow,
  SessionCache,
  SessionMeta,
  SessionStore,
  StoredEntry,
} from "./store.ts";

/** Appends lines to one session's JSONL file, created 0600 (folders 0700). */
export class JsonlAppender {
  constructor(private fd: number) {}

  /** `flags`: "a" appends, "w" writes the file anew, "wx" creates it and fails if it exists. */
  static open(path: string, flags: "a" | "w" | "wx" = "a"): JsonlAppender {
    ensurePrivateDir(dirname(path));
    return new JsonlAppender(openSync(path, flags, 0o600));
  }

  write(text: string): void {
    const bytes = Buffer.from(text, "utf8");
    for (let off = 0; off < bytes.length; ) off += writeSync(this.fd, bytes, off, bytes.length - off);
  }

  /** One write per thousand entries, so a bulk export is not a syscall per line. */
  append(entries: readonly Entry[]): void {
    const CHUNK = 1000;
    for (let i = 0; i < entries.length; i += CHUNK) this.write(entries.slice(i, i + CHUNK).map(entryLine).join(""));
  }

  close(): void {
    if (this.fd >= 0) closeSync(this.fd);
    this.fd = -1;
  }
}

export interface JsonlSyncResult {
  path: string;
  /** Entry lines written from the database. */
  appended: number;
  /** Bytes of a torn last line that were cut off. */
  truncatedBytes: number;
}

/**
 * Completes the session's JSONL file from the database, which is authoritative: writes the
 * header if the file is missing or empty, cuts a torn last line (a crash mid-write), and appends
 * the entries after the file's last one. A file that disagrees with the database (another
 * session's header, an entry id the database lacks, more entries) is an error, never rewritten.
 * Returns undefined for a session without a file.
 */
export function syncJsonl(store: SessionStore, sessionId: string): JsonlSyncResult | undefined {
  const meta = store.getSession(sessionId);
  if (!meta) throw new PionError(`Unknown session ${sessionId}`, "unknown_session");
  if (meta.file === undefined) return undefined;
  const path = meta.file;
  if (upToDate(store, sessionId, path)) return { path, appended: 0, truncatedBytes: 0 };
  ensurePrivateDir(dirname(path));
  const fd = openSync(path, "a+", 0o600);
  try {
    const data = readAll(fd);
    let end = data.lastIndexOf(0x0a) + 1;
    let truncatedBytes = 0;
    if (end < data.length) {
      if (isJsonObject(data.subarray(end))) {
        writeSync(fd, "\n"); // complete but unterminated: keep it
        end = data.length;
      } else {
        truncatedBytes = data.length - end;
        ftruncateSync(fd, end);
      }
    }
    const lines = completeLines(data.subarray(0, end));
    const out = new JsonlAppender(fd);
    if (lines.length === 0) {
      out.write(headerLine(meta.header));
      return { path, appended: appendAll(out, store, sessionId), truncatedBytes };
    }
    const header = parseLine(lines[0]!, path, 1);
    if (header.type !== "session" || header.id !== sessionId) {
      throw diverged(path, `its header names session ${String(header.id)}, not ${sessionId}`);
    }
    const written = lines.length - 1;
    if (written === 0) return { path, appended: appendAll(out, store, sessionId), truncatedBytes };
    const lastId = parseLine(lines[lines.length - 1]!, path, lines.length).id;
    if (typeof lastId !== "string" || !store.getEntry(sessionId, lastId)) {
      throw diverged(path, `its last entry ${String(lastId)} is not in the database`);
    }
    const missing = store.entriesSince(sessionId, lastId).entries;
    const total = store.entryCount(sessionId);
    if (written + missing.length !== total) {
      throw diverged(path, `it holds ${written} entries where the database has ${total - missing.length} before them`);
    }
    out.append(missing);
    return { path, appended: missing.length, truncatedBytes };
  } finally {
    closeSync(fd);
  }
}

/** Appends every entry of the session, read from the database a page at a time (bounded memory). */
function appendAll(out: JsonlAppender, store: SessionStore, sessionId: string): number {
  const PAGE = 1000;
  let n = 0;
  for (let page = store.entriesPage(sessionId, PAGE); ; page = store.entriesSince(sessionId, page.entries.at(-1)!.id, PAGE)) {
    out.append(page.entries);
    n += page.entries.length;
    if (!page.hasMore || page.entries.length === 0) return n;
  }
}

/**
 * `store` plus the JSONL export: after each commit the new entries are appended to the
 * session's file (the first write in a process completes a file left behind by a crash).
 * A failed file write is logged, not thrown: the entry is committed, and the file is
 * completed on the next append or open.
 */
export function withJsonlExport(store: SessionStore): SessionStore {
  return new JsonlExportStore(store);
}

class JsonlExportStore implements SessionStore {
  private readonly appenders = new Map<string, JsonlAppender>();

  constructor(private readonly inner: SessionStore) {}

  createSession(header: SessionHeader, file?: string): void {
    this.inner.createSession(header, file);
    // An existing file is one being imported: its lines are checked on the first append.
    if (file !== undefined && (!existsSync(file) || statSync(file).size === 0)) {
      const out = JsonlAppender.open(file);
      try {
        out.write(headerLine(header));
      } finally {
        out.close();
      }
    }
  }

  /** A file being imported in place is already complete; a new one is written from the database. */
  importSession(header: SessionHeader, file: string | undefined, entries: Iterable<StoredEntry>, cache: () => SessionCache): void {
    this.inner.importSession(header, file, entries, cache);
    if (file !== undefined && (!existsSync(file) || statSync(file).size === 0)) this.exported(header.id, []);
  }

  // Grants stay in the database: the file has the entries only, so an import of it grants nothing.
  append(sessionId: string, entry: Entry, granted?: readonly string[]): void {
    this.inner.append(sessionId, entry, granted);
    this.exported(sessionId, [entry]);
  }

  appendMany(sessionId: string, entries: readonly Entry[], granted?: readonly GrantedRule[]): void {
    this.inner.appendMany(sessionId, entries, granted);
    this.exported(sessionId, entries);
  }

  grantedRules = (sessionId: string): GrantedRule[] => this.inner.grantedRules(sessionId);

  getSession = (sessionId: string): SessionMeta | undefined => this.inner.getSession(sessionId);
  setSessionCache = (sessionId: string, cache: SessionCache): void => this.inner.setSessionCache(sessionId, cache);
  entries = (sessionId: string): Entry[] => this.inner.entries(sessionId);
  chainPages = (sessionId: string): Iterable<ChainPage> => this.inner.chainPages(sessionId);
  bodyPages = (sessionId: string): Iterable<JsonPiece> => this.inner.bodyPages(sessionId);
  contextMessages = (sessionId: string): Iterable<JsonPiece> => this.inner.contextMessages(sessionId);
  entryIndex = (sessionId: string): IndexRow[] => this.inner.entryIndex(sessionId);
  bodyReader = (sessionId: string): ((ref: number) => string) => this.inner.bodyReader(sessionId);
  messageReader = (sessionId: string): ((ref: number) => string) => this.inner.messageReader(sessionId);
  entriesSince = (sessionId: string, sinceId: string, limit?: number): EntryPage =>
    this.inner.entriesSince(sessionId, sinceId, limit);
  entriesPage = (sessionId: string, limit: number): EntryPage => this.inner.entriesPage(sessionId, limit);
  entryCount = (sessionId: string): number => this.inner.entryCount(sessionId);
  getEntry = (sessionId: string, entryId: string): Entry | undefined => this.inner.getEntry(sessionId, entryId);
  setLeaf = (sessionId: string, leafId: string | null): void => this.inner.setLeaf(sessionId, leafId);
  listSessions = (options?: ListSessionsOptions): SessionList => this.inner.listSessions(options);
  searchSessions = (options: SearchOptions): SearchHit[] => this.inner.searchSessions(options);
  findSessionByFile = (path: string): SessionMeta | undefined => this.inner.findSessionByFile(path);
  /** Opening a session for writing also completes a JSONL file a crash left behind. */
  acquireSession(sessionId: string): void {
    this.inner.acquireSession(sessionId);
    try {
      syncJsonl(this.inner, sessionId);
    } catch (err) {
      log("store", "JSONL export could not be completed on open; it is retried on the next append", {
        sessionId,
        error: err instanceof Error ? err.message : String(err),
      });
    }
  }

  /** The database's rows go first; then the file, which without them is no session. */
  deleteSession(sessionId: string): void {
    const file = this.inner.getSession(sessionId)?.file;
    this.inner.deleteSession(sessionId);
    this.appenders.get(sessionId)?.close();
    this.appenders.delete(sessionId);
    if (file !== undefined) rmSync(file, { force: true });
  }

  releaseSession(sessionId: string): void {
    this.appenders.get(sessionId)?.close();
    this.appenders.delete(sessionId);
    this.inner.releaseSession(sessionId);
  }

  close(): void {
    for (const a of this.appenders.values()) a.close();
    this.appenders.clear();
    this.inner.close();
  }

  private exported(sessionId: string, entries: readonly Entry[]): void {
    const file = this.inner.getSession(sessionId)?.file;
    if (file === undefined) return;
    try {
      const open = this.appenders.get(sessionId);
      if (open) return open.append(entries);
      syncJsonl(this.inner, sessionId); // the committed entries are in the database already
      this.appenders.set(sessionId, JsonlAppender.open(file));
    } catch (err) {
      this.appenders.get(sessionId)?.close();
      this.appenders.delete(sessionId);
      const named = asStorageError(err, file); // a full disk named with its mount point and free space
      log("store", "JSONL export behind the database; it is completed on the next append or open", {
        sessionId,
        file,
        error: named instanceof Error ? named.message : String(named),
      });
    }
  }
}

/**
 * Fast path for opening a big session: the file's last line is the newest entry of the
 * database, so nothing is missing (the file is append-only). Reads only the file's tail.
 */
function upToDate(store: SessionStore, sessionId: string, path: string): boolean {
  if (!existsSync(path)) return false;
  const size = statSync(path).size;
  if (size === 0) return false;
  const fd = openSync(path, "r");
  try {
    const len = Math.min(size, 1 << 16);
    const buf = Buffer.allocUnsafe(len);
    const n = readSync(fd, buf, 0, len, size - len);
    const tail = buf.subarray(0, n);
    if (tail[tail.length - 1] !== 0x0a) return false;
    const start = tail.lastIndexOf(0x0a, tail.length - 2) + 1;
    if (start === 0 && len < size) return false;
    const last = JSON.parse(tail.subarray(start, tail.length - 1).toString("utf8")) as { id?: unknown; type?: unknown };
    if (typeof last.id !== "string" || last.type === "session" || !store.getEntry(sessionId, last.id)) return false;
    return store.entriesSince(sessionId, last.id, 1).entries.length === 0;
  } catch {
    return false; // anything unusual: the full check decides
  } finally {
    closeSync(fd);
  }
}

function readAll(fd: number): Buffer {
  const size = fstatSync(fd).size;
  const buf = Buffer.allocUnsafe(size);
  for (let off = 0; off < size; ) {
    const n = readSync(fd, buf, off, size - off, off);
    if (n === 0) return buf.subarray(0, off);
    off += n;
  }
  return buf;
}

/** Non-blank lines of `data`; the last may lack its line break. */
function completeLines(data: Buffer): Buffer[] {
  const lines: Buffer[] = [];
  for (let start = 0; start < data.length; ) {
    const found = data.indexOf(0x0a, start);
    const nl = found === -1 ? data.length : found;
    const line = data.subarray(start, nl);
    if (!isBlank(line)) lines.push(line);
    start = nl + 1;
  }
  return lines;
}

function isBlank(line: Buffer): boolean {
  for (const byte of line) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

function isJsonObject(bytes: Buffer): boolean {
  try {
    const value: unknown = JSON.parse(bytes.toString("utf8"));
    return typeof value === "object" && value !== null;
  } catch {
    return false;
  }
}

function parseLine(line: Buffer, path: string, lineNo: number): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line.toString("utf8"));
  } catch {
    throw diverged(path, `line ${lineNo} is not JSON`);
  }
  if (typeof value !== "object" || value === null) throw diverged(path, `line ${lineNo} is not a JSON object`);
  return value as Record<string, unknown>;
}

const diverged = (path: string, why: string): PionError =>
  new PionError(`Session file ${path} does not match the database: ${why}`, "jsonl_diverged");
