/**
 * The reference's `SessionManager` class: `SessionManager.open(path)` reads a session JSONL file
 * (the reference's v3 format, which pion writes beside its database) read-only: its writing
 * methods throw, as an extension changes pion's session through `pi` and `ctx`, and pion's
 * database is the session's record. `SessionManager.inMemory(cwd, options, entries)` holds
 * entries in memory and can be appended to (an in-process session of an extension records its
 * messages there). Both answer the same reads as `ctx.sessionManager` (context-members.ts).
 */
import { readFileSync } from "node:fs";
import { shortId } from "../../util/id.ts";
import { sessionManagerView } from "../context-members.ts";
import type { ExtensionSessionPort, SessionControl } from "../types.ts";

type Entry = { id: string; parentId: string | null; type: string; [key: string]: unknown };

function view(cwd: string, header: Record<string, unknown> | null, entries: Entry[], file: string | undefined, byId: Map<string, Entry>, at: { leaf: string | null }) {
  const control: Partial<SessionControl> = {
    header: () => header,
    file: () => file,
    sessionId: () => String(header?.id ?? ""),
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

const WRITES = ["appendMessage", "appendThinkingLevelChange", "appendModelChange", "appendCustomEntry", "appendCustomMessageEntry", "appendSessionInfo", "appendLabelChange", "branch", "resetLeaf", "newSession", "setSessionFile"];

/** The writes of an in-memory SessionManager: each appends an entry under the leaf and moves the leaf to it. */
function writes(entries: Entry[], byId: Map<string, Entry>, at: { leaf: string | null }): Record<string, (...args: never[]) => unknown> {
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
  };
}

export class SessionManager {
  constructor(cwd: string, header: Record<string, unknown> | null, entries: Entry[], file?: string, writable = false) {
    const byId = new Map(entries.map((e) => [e.id, e]));
    const at = { leaf: entries.at(-1)?.id ?? null };
    const v = view(String(header?.cwd ?? cwd), header, entries, file, byId, at);
    Object.assign(this, v, {
      isPersisted: () => file !== undefined,
      getEntryCount: () => entries.length,
      getChildren: (parentId: string) => entries.filter((e) => e.parentId === parentId),
      usesDefaultSessionDir: () => false,
    });
    const own = writable ? writes(entries, byId, at) : {};
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
    const header = entries[0]?.type === "session" ? (entries[0] as Record<string, unknown>) : { type: "session", version: 3, id: crypto.randomUUID(), timestamp: new Date().toISOString(), cwd };
    return new SessionManager(cwd, header, entries.filter((e) => e.type !== "session"), undefined, true);
  }
}
