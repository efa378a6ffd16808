import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { readJsonl } from "../store/jsonl.ts";
import { pathTo, type Entry, type SessionHeader } from "../store/entries.ts";
import { type IndexRow, type SessionCache, type SessionStore, type StoredEntry, UnconfirmedRow } from "../store/store.ts";
import { log } from "../util/log.ts";
import { buildContext, linearity, SHAPING_ENTRIES } from "./context.ts";
import { PionError } from "../util/errors.ts";

/** Text of a user message entry, or undefined for anything else. */
export function userEntryText(e: Entry | undefined): string | undefined {
  if (!e || e.type !== "message" || e.message.role !== "user") return undefined;
  const c = e.message.content;
  return typeof c === "string" ? c : c.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
}

/**
 * Find or bring in the session named by `target` (a JSONL path or a session id) and return
 * its id. A file already known to the store is reopened; any other file (one of pion's from
 * another directory, or one the reference agent wrote, v1-v3) is imported: a v3 file is then
 * continued in place, an older one gets a new v3 file from `fileFor`.
 */
export function locateSession(
  store: SessionStore,
  target: string,
  cwd: string,
  fileFor: (h: SessionHeader) => string | undefined,
): string {
  const path = resolve(cwd, target);
  if (existsSync(path)) {
    const real = realpathSync(path);
    const known = store.findSessionByFile(real) ?? store.findSessionByFile(path);
    if (known) return known.header.id;
    const source = readJsonl(real);
    const id = source.header.id;
    if (store.getSession(id)) return id;
    const file = source.version === 3 && !source.tornTail ? real : fileFor(source.header);
    // Entries stream from the file into the store; what the summary needs is taken as they pass.
    // A linear session (the usual file) is summed up from that alone; any other from the store's
    // index once its rows are in (still inside the import's transaction).
    const importFrom = (rows: Iterable<StoredEntry>, agreed: () => boolean) => {
      const summary = new StreamSummary();
      function* recorded(): Generator<StoredEntry> {
        for (const row of rows) {
          summary.add(row.entry);
          yield row;
        }
      }
      store.importSession(source.header, file, recorded(), () => {
        // Inside the import's transaction: rows that are not what their lines say are never committed.
        if (!agreed()) throw new UnconfirmedRow(null);
        return summary.cache() ?? summaryOf(indexEntries(store.entryIndex(id)), summary.leafId);
      });
    };
    try {
      const quick = source.importRows();
      importFrom(quick.rows, quick.agreed);
    } catch (err) {
      // A line read without a parse is not what its first fields say: parsed, every one. (The check
      // thread has said which line; the store names the entry.)
      if (!(err instanceof UnconfirmedRow)) throw err;
      if (err.entryId !== null) log("store", "a line read without a parse is not what its first fields say; the file is parsed", { path: real, entry: err.entryId });
      importFrom(source.entries(), () => true);
    }
    return id;
  }
  if (!target.includes("/") && store.getSession(target)) return target;
  throw new PionError(`Session not found: ${target}`, "not_found");
}

/**
 * The session's entries as the index has them, by id: messages with their role only, `custom`
 * entries without their data, every other kind whole. Enough to build the tree and count the
 * context. `onMessage` sees each message stand-in with its row (to fetch its JSON later).
 */
export function indexEntries(rows: readonly IndexRow[], onMessage?: (message: object, row: IndexRow) => void): Map<string, Entry> {
  const byId = new Map<string, Entry>();
  for (const row of rows) {
    const base = { id: row.id, parentId: row.parentId, timestamp: row.timestamp };
    let e: Entry;
    if (row.type === "message") {
      const message = { role: row.role };
      onMessage?.(message, row);
      e = { type: "message", ...base, message } as Entry;
    } else e = (row.body !== null ? JSON.parse(row.body) : { type: row.type, ...base }) as Entry;
    byId.set(row.id, e);
  }
  return byId;
}

/** The summary of a session from its entries (see indexEntries) and leaf: the model and thinking level its branch recorded last. */
export function summaryOf(byId: ReadonlyMap<string, Entry>, leafId: string | null): SessionCache {
  const branch = pathTo(byId, leafId);
  const cache: SessionCache = { leafId, messageCount: buildContext(branch).length };
  Object.assign(cache, linearity(branch, byId.values()));
  for (const e of branch) {
    if (e.type === "model_change") cache.model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "thinking_level_change") cache.thinkingLevel = e.thinkingLevel;
  }
  return cache;
}

/**
 * What a file's entries tell as they stream by. While every entry is the child of the one before
 * it (the first a root), the session is linear and its branch is every entry; while none shapes
 * the context (SHAPING_ENTRIES), its context is its messages but system-role ones.
 */
class StreamSummary {
  leafId: string | null = null;
  private linear = true;
  private plain = true;
  private messages = 0;
  private model: SessionCache["model"];
  private thinkingLevel: string | undefined;

  add(e: Entry): void {
    if (e.parentId !== this.leafId) this.linear = false;
    this.leafId = e.id;
    if (SHAPING_ENTRIES.has(e.type)) this.plain = false;
    else if (e.type === "message" && (e.message as { role: string }).role !== "system") this.messages++;
    else if (e.type === "model_change") this.model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "thinking_level_change") this.thinkingLevel = e.thinkingLevel;
  }

  /** The summary of a linear, plain session; undefined for any other (see summaryOf). */
  cache(): SessionCache | undefined {
    if (!this.linear || !this.plain) return undefined;
    const cache: SessionCache = { leafId: this.leafId, messageCount: this.messages, linear: true, plainContext: true };
    if (this.model) cache.model = this.model;
    if (this.thinkingLevel !== undefined) cache.thinkingLevel = this.thinkingLevel;
    return cache;
  }
}
