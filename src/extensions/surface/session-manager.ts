/**
 * The reference's `SessionManager` class: `SessionManager.open(path)` reads a session JSONL file
 * (the reference's v3 format, which pion writes beside its database) read-only: its writing
 * methods throw, as an extension changes pion's session through `pi` and `ctx`, and pion's
 * database is the session's record. `SessionManager.inMemory(cwd, options, entries)` holds
 * entries in memory and can be appended to (an in-process session of an extension records its
 * messages there), started afresh (`newSession`) or cut down to one branch (`createBranchedSession`),
 * as AgentSessionRuntime (agent-runtime.ts) does for a new session and a fork. Both answer the same reads as `ctx.sessionManager` (context-members.ts).
 */
import { readFileSync } from "node:fs";
import { shortId } from "../../util/id.ts";
import { sessionManagerView } from "../context-members.ts";
import type { ExtensionSessionPort, SessionControl } from "../types.ts";

type Entry = { id: string; parentId: string | null; type: string; [key: string]: unknown };

type Header = Record<string, unknown> | null;

function view(cwd: string, at: { header: Header; leaf: string | null }, entries: Entry[], file: string | undefined, byId: Map<string, Entry>) {
  const control: Partial<SessionControl> = {
    header: () => at.header,
    file: () => file,
    sessionId: () => String(at.header?.id ?? ""),
    leafId: () => at.leaf,
    entries: () => entries,
    entry: (id) => byId.get(id),
    branch: (fromId) => {
      const out: Entry[] = [];
      for (let e = byId.get(fromId ?? at.leaf ?? ""); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push(e);
      return out.reverse();
    },
    name: () => entries.filter((e) => e.type === "session_info").at(-1)?.name as string | undefined,
  };
  return sessionManagerView({ cwd, control: () => control as SessionControl } as ExtensionSessionPort);
}

const readOnly = (name: string) => () => {
  throw new Error(`SessionManager.${name}: pion's SessionManager is read-only (change the session through pi and ctx)`);
};

const WRITES = ["appendMessage", "appendThinkingLevelChange", "appendModelChange", "appendCustomEntry", "appendCustomMessageEntry", "appendSessionInfo", "appendLabelChange", "branch", "resetLeaf", "newSession", "createBranchedSession", "setSessionFile"];

const newHeader = (cwd: string, parentSession?: string): Record<string, unknown> => ({
  type: "session",
  version: 3,
  id: crypto.randomUUID(),
  timestamp: new Date().toISOString(),
  cwd,
  ...(parentSession === undefined ? {} : { parentSession }),
});

/** The current label of each entry: the newest label entry for it, an empty one removing it. */
function labelsOf(entries: readonly Entry[]): Map<string, { label: string; timestamp: unknown }> {
  const out = new Map<string, { label: string; timestamp: unknown }>();
  for (const e of entries) {
    if (e.type !== "label" || typeof e.targetId !== "string") continue;
    if (e.label) out.set(e.targetId, { label: String(e.label), timestamp: e.timestamp });
    else out.delete(e.targetId);
  }
  return out;
}

/**
 * The path from the root to `leafId` without its label entries (each kept entry re-parented onto
 * the one before it, a compaction's first kept entry moved off a dropped label), then a label
 * entry for each kept entry that has a label now.
 */
function branchCopy(entries: readonly Entry[], byId: Map<string, Entry>, leafId: string): Entry[] {
  const path: Entry[] = [];
  for (let e = byId.get(leafId); e; e = e.parentId ? byId.get(e.parentId) : undefined) path.unshift(e);
  if (path.length === 0) throw new Error(`Entry ${leafId} not found`);
  const kept: Entry[] = [];
  const movedTo = new Map<string, string>();
  let pendingLabels: string[] = [];
  for (const e of path) {
    if (e.type === "label") {
      pendingLabels.push(e.id);
      continue;
    }
    for (const id of pendingLabels) movedTo.set(id, e.id);
    pendingLabels = [];
    const parentId = kept.at(-1)?.id ?? null;
    const firstKept = e.firstKeptEntryId as string | undefined;
    kept.push(e.type === "compaction" && firstKept ? { ...e, parentId, firstKeptEntryId: movedTo.get(firstKept) ?? firstKept } : { ...e, parentId });
  }
  const ids = new Map(kept.map((e) => [e.id, e]));
  for (const [targetId, { label, timestamp }] of labelsOf(entries)) {
    if (!ids.has(targetId)) continue;
    const entry: Entry = { type: "label", id: shortId(ids), parentId: kept.at(-1)?.id ?? null, timestamp, targetId, label };
    ids.set(entry.id, entry);
    kept.push(entry);
  }
  return kept;
}

/** The writes of an in-memory SessionManager: each appends an entry under the leaf and moves the leaf to it. */
function writes(cwd: string, entries: Entry[], byId: Map<string, Entry>, at: { header: Header; leaf: string | null }): Record<string, (...args: never[]) => unknown> {
  const replace = (next: Entry[], header: Record<string, unknown>) => {
    entries.splice(0, entries.length, ...next);
    byId.clear();
    for (const e of next) byId.set(e.id, e);
    at.header = header;
    at.leaf = next.at(-1)?.id ?? null;
  };
  const append = (type: string, fields: Record<string, unknown>): string => {
    const entry: Entry = { type, id: shortId(byId), parentId: at.leaf, timestamp: new Date().toISOString(), ...fields };
    entries.push(entry);
    byId.set(entry.id, entry);
    at.leaf = entry.id;
    return entry.id;
  };
  return {
    appendMessage: (message: unknown) => append("message", { message }),
    appendThinkingLevelChange: (thinkingLevel: string) => append("thinking_level_change", { thinkingLevel }),
    appendModelChange: (provider: string, modelId: string) => append("model_change", { provider, modelId }),
    appendCustomEntry: (customType: string, data?: unknown) => append("custom", { customType, ...(data === undefined ? {} : { data }) }),
    appendCustomMessageEntry: (customType: string, content: unknown, display: boolean, details?: unknown) =>
      append("custom_message", { customType, content, display, ...(details === undefined ? {} : { details }) }),
    appendSessionInfo: (name: string) => append("session_info", { name }),
    appendLabelChange: (targetId: string, label: string | undefined) => append("label", { targetId, label }),
    branch: (id: string) => {
      if (!byId.has(id)) throw new Error(`Entry ${id} not found`);
      at.leaf = id;
    },
    resetLeaf: () => {
      at.leaf = null;
    },
    /** Start over: a new session id and header, no entries. No file is written (undefined). */
    newSession: (options?: { id?: string; parentSession?: string }) => {
      replace([], { ...newHeader(cwd, options?.parentSession), ...(options?.id ? { id: options.id } : {}) });
      return undefined;
    },
    /** Keep only the branch ending at `leafId`, under a new session id. No file is written (undefined). */
    createBranchedSession: (leafId: string) => {
      replace(branchCopy(entries, byId, leafId), newHeader(cwd));
      return undefined;
    },
  };
}

export class SessionManager {
  constructor(cwd: string, header: Header, entries: Entry[], file?: string, writable = false) {
    const byId = new Map(entries.map((e) => [e.id, e]));
    const at = { header, leaf: entries.at(-1)?.id ?? null };
    const sessionCwd = String(header?.cwd ?? cwd);
    const v = view(sessionCwd, at, entries, file, byId);
    Object.assign(this, v, {
      isPersisted: () => file !== undefined,
      getEntryCount: () => entries.length,
      getChildren: (parentId: string) => entries.filter((e) => e.parentId === parentId),
      usesDefaultSessionDir: () => false,
    });
    const own = writable ? writes(sessionCwd, entries, byId, at) : {};
    for (const name of WRITES) (this as Record<string, unknown>)[name] = own[name] ?? readOnly(name);
  }

  static open(path: string, _sessionDir?: string, cwdOverride?: string): SessionManager {
    const lines = readFileSync(path, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as Entry);
    const header = lines[0]?.type === "session" ? (lines.shift() as Record<string, unknown>) : null;
    return new SessionManager(cwdOverride ?? String(header?.cwd ?? process.cwd()), cwdOverride && header ? { ...header, cwd: cwdOverride } : header, lines, path);
  }

  static inMemory(cwd: string = process.cwd(), _options?: unknown, entries: Entry[] = []): SessionManager {
    const header = entries[0]?.type === "session" ? (entries[0] as Record<string, unknown>) : newHeader(cwd);
    return new SessionManager(cwd, header, entries.filter((e) => e.type !== "session"), undefined, true);
  }
}
