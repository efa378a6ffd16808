/**
 * The reference's `SessionManager` class, read-only: `SessionManager.open(path)` reads a session
 * JSONL file (the reference's v3 format, which pion writes beside its database),
 * `SessionManager.inMemory(cwd, options, entries)` holds given entries; both answer the same reads
 * as `ctx.sessionManager` (context-members.ts). Writing methods throw: an extension changes the
 * session through `pi` and `ctx`, and pion's database is the session's record.
 */
import { readFileSync } from "node:fs";
import { sessionManagerView } from "../context-members.ts";
import type { ExtensionSessionPort, SessionControl } from "../types.ts";

type Entry = { id: string; parentId: string | null; type: string; [key: string]: unknown };

function view(cwd: string, header: Record<string, unknown> | null, entries: Entry[], file: string | undefined) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  const leaf = entries.at(-1)?.id ?? null;
  const control: Partial<SessionControl> = {
    header: () => header,
    file: () => file,
    sessionId: () => String(header?.id ?? ""),
    leafId: () => leaf,
    entries: () => entries,
    entry: (id) => byId.get(id),
    branch: (fromId) => {
      const out: Entry[] = [];
      for (let e = byId.get(fromId ?? leaf ?? ""); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push(e);
      return out.reverse();
    },
    name: () => entries.filter((e) => e.type === "session_info").at(-1)?.name as string | undefined,
  };
  return sessionManagerView({ cwd, control: () => control as SessionControl } as ExtensionSessionPort);
}

const readOnly = (name: string) => () => {
  throw new Error(`SessionManager.${name}: pion's SessionManager is read-only (change the session through pi and ctx)`);
};

export class SessionManager {
  constructor(cwd: string, header: Record<string, unknown> | null, entries: Entry[], file?: string) {
    const v = view(String(header?.cwd ?? cwd), header, entries, file);
    Object.assign(this, v, {
      isPersisted: () => file !== undefined,
      getEntryCount: () => entries.length,
      getChildren: (parentId: string) => entries.filter((e) => e.parentId === parentId),
      usesDefaultSessionDir: () => false,
    });
    for (const name of ["appendMessage", "appendThinkingLevelChange", "appendModelChange", "appendCustomEntry", "appendSessionInfo", "appendLabelChange", "branch", "resetLeaf", "newSession", "setSessionFile"]) {
      (this as Record<string, unknown>)[name] = readOnly(name);
    }
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
    return new SessionManager(cwd, header, entries.filter((e) => e.type !== "session"));
  }
}
