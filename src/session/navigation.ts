import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import { importJsonl } from "../store/jsonl.ts";
import { pathTo, type Entry, type SessionHeader } from "../store/entries.ts";
import type { SessionCache, SessionStore } from "../store/store.ts";
import { buildContext } from "./context.ts";
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
    const imported = importJsonl(real);
    if (store.getSession(imported.header.id)) return imported.header.id;
    const file = imported.version === 3 && !imported.tornTail ? real : fileFor(imported.header);
    const id = imported.header.id;
    store.createSession(imported.header, file);
    if (imported.entries.length > 0) store.appendMany(id, imported.entries);
    if (imported.leafId) store.setLeaf(id, imported.leafId);
    // The entries are parsed already: leave the summary that lets the session open without reading them again.
    const branch = pathTo(new Map(imported.entries.map((e) => [e.id, e])), imported.leafId);
    const cache: SessionCache = { leafId: imported.leafId, messageCount: buildContext(branch).length };
    for (const e of branch) {
      if (e.type === "model_change") cache.model = { provider: e.provider, modelId: e.modelId };
      else if (e.type === "thinking_level_change") cache.thinkingLevel = e.thinkingLevel;
    }
    store.setSessionCache(id, cache);
    return id;
  }
  if (!target.includes("/") && store.getSession(target)) return target;
  throw new PionError(`Session not found: ${target}`, "not_found");
}
