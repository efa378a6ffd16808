import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { readJsonl } from "../store/jsonl.ts";
import { pathTo, type Entry, type SessionHeader } from "../store/entries.ts";
import type { SessionCache, SessionStore, StoredEntry } from "../store/store.ts";
import { buildContext, linearity } from "./context.ts";
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
    // Entries stream from the file into the store; only a light copy of each stays, for the
    // summary that lets the session open without reading them back.
    const light = new Map<string, Entry>();
    let leafId: string | null = null;
    function* recorded(): Generator<StoredEntry> {
      for (const row of source.entries()) {
        light.set(row.entry.id, lightEntry(row.entry));
        leafId = row.entry.id;
        yield row;
      }
    }
    store.importSession(source.header, file, recorded(), () => {
      const branch = pathTo(light, leafId);
      const cache: SessionCache = { leafId, messageCount: buildContext(branch).length };
      Object.assign(cache, linearity(branch, light.values()));
      for (const e of branch) {
        if (e.type === "model_change") cache.model = { provider: e.provider, modelId: e.modelId };
        else if (e.type === "thinking_level_change") cache.thinkingLevel = e.thinkingLevel;
      }
      return cache;
    });
    return id;
  }
  if (!target.includes("/") && store.getSession(target)) return target;
  throw new PionError(`Session not found: ${target}`, "not_found");
}

/**
 * What the session summary needs of an entry: for messages and extension data, the kind and
 * the tree links without the content (buildContext then counts the same messages).
 */
function lightEntry(e: Entry): Entry {
  if (e.type === "message") return { ...e, message: { role: e.message.role } } as Entry;
  if (e.type === "custom_message" || e.type === "custom") return { type: e.type, id: e.id, parentId: e.parentId, timestamp: e.timestamp } as Entry;
  return e;
}
