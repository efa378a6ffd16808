import { writeOut, writeErr } from "../util/stdio.ts";
import { join, resolve } from "node:path";
import { locateSession, userEntryText } from "../session/navigation.ts";
import type { Entry, SessionHeader } from "../store/entries.ts";
import { sessionFilePath } from "../store/paths.ts";
import { openSessionFolder } from "./open-store.ts";
import { byPrefix } from "./startup-session.ts";
import type { SessionStore } from "../store/store.ts";

export interface SessionsCliOptions {
  home: string;
  cwd: string;
  sessionDir?: string;
  json: boolean;
  limit?: number;
  filterCwd?: string;
  env?: Record<string, string | undefined>;
}

/**
 * `pion sessions list|search|show`: browse the session database from a shell. Writes to
 * stdout; returns the exit code (2 for usage errors).
 */
export function runSessionsCli(sub: string | undefined, args: string[], o: SessionsCliOptions): number {
  const base = o.sessionDir ? resolve(o.cwd, o.sessionDir) : join(o.home, "sessions");
  const fileFor = (h: SessionHeader) => sessionFilePath(base, h.cwd, h.timestamp, h.id);
  const store = openSessionFolder({ base, named: o.sessionDir !== undefined, env: o.env ?? process.env, fileFor });
  try {
    switch (sub) {
      case "list":
        return list(store, o);
      case "search":
        if (!args[0]) return usage("pion sessions search <query>");
        return search(store, args.join(" "), o);
      case "show":
        if (!args[0]) return usage("pion sessions show <session id or file>");
        return show(store, args[0], o, fileFor);
      default:
        return usage("pion sessions list|search <query>|show <id> [--json] [--cwd <dir>] [--limit N] [--session-dir <dir>]");
    }
  } finally {
    store.close();
  }
}

function usage(text: string): number {
  writeErr(`usage: ${text}\n`);
  return 2;
}

const out = (text: string) => writeOut(text.endsWith("\n") ? text : `${text}\n`);

function list(store: SessionStore, o: SessionsCliOptions): number {
  const r = store.listSessions({ cwd: o.filterCwd, limit: o.limit });
  if (o.json) {
    out(JSON.stringify(r));
    return 0;
  }
  if (r.sessions.length === 0) out("no sessions");
  for (const s of r.sessions) {
    const title = s.name ?? (s.firstMessage ?? "(no messages)").replace(/\s+/g, " ").slice(0, 60);
    out(`${s.updatedAt}  ${s.sessionId}  ${String(s.messageCount).padStart(4)} msgs  ${title}\n    ${s.cwd}`);
  }
  return 0;
}

function search(store: SessionStore, query: string, o: SessionsCliOptions): number {
  const hits = store.searchSessions({ query, cwd: o.filterCwd, limit: o.limit });
  if (o.json) {
    out(JSON.stringify({ results: hits }));
    return 0;
  }
  if (hits.length === 0) out("no matches");
  for (const h of hits) out(`${h.timestamp}  ${h.sessionId}  ${h.entryId}  ${h.role}: ${h.snippet.replace(/\s+/g, " ")}`);
  return 0;
}

function show(store: SessionStore, target: string, o: SessionsCliOptions, fileFor: (h: SessionHeader) => string): number {
  const id = locateSession(store, byPrefix(store, target, o.cwd), o.cwd, fileFor);
  const meta = store.getSession(id)!;
  const entries = store.entries(id);
  if (o.json) {
    out(JSON.stringify({ session: { ...meta.header, file: meta.file, name: meta.name, leafId: meta.leafId }, entries }));
    return 0;
  }
  out(`session ${id}${meta.name ? ` (${meta.name})` : ""}\ncwd ${meta.header.cwd}\nfile ${meta.file ?? "-"}\n`);
  for (const e of entries) out(describe(e));
  return 0;
}

function describe(e: Entry): string {
  if (e.type === "permission") {
    const what = e.subject === undefined ? e.toolName : `${e.toolName} ${JSON.stringify(e.subject)}`;
    const added = e.addedRules ? `, always: ${e.addedRules.join(" ")}` : "";
    return `[${e.id}] permission: ${e.decision} ${what} by ${e.by}${e.rule ? ` (${e.rule})` : ""}${added} at ${e.timestamp}`;
  }
  if (e.type !== "message") return `[${e.id}] ${e.type}`;
  const m = e.message;
  const user = userEntryText(e);
  if (user !== undefined) return `[${e.id}] user: ${user}`;
  if (m.role === "assistant") {
    const parts = m.content.map((c) => (c.type === "text" ? c.text : c.type === "toolCall" ? `<${c.name} ${JSON.stringify(c.arguments)}>` : ""));
    return `[${e.id}] assistant: ${parts.filter(Boolean).join(" ")}${m.errorMessage ? ` (error: ${m.errorMessage})` : ""}`;
  }
  if (m.role === "toolResult") return `[${e.id}] ${m.toolName} result${m.isError ? " (error)" : ""}`;
  if (m.role === "bashExecution") return `[${e.id}] $ ${m.command}`;
  return `[${e.id}] ${m.role}`;
}
