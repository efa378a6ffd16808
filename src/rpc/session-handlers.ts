import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { syncJsonl } from "../store/jsonl-export.ts";
import type { CommandOf } from "../protocol/commands.ts";
import { RawJson } from "../protocol/responses.ts";
import { locateSession, userEntryText } from "../session/navigation.ts";
import type { AgentSession } from "../session/session.ts";
import { sessionStats } from "../session/stats.ts";
import type { SessionHeader } from "../store/entries.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import type { SessionStore } from "../store/store.ts";
import { PionError } from "../util/errors.ts";
import { commaJoined } from "../util/json-pieces.ts";

/** What extensions are told when a session starts after a change. */
export type SessionStart = { reason: string; previousSessionFile?: string };

/** What a session change does beside changing the session (compose-reload.ts), as the reference builds a new runtime. */
export interface SessionRenewal {
  /** After session_shutdown and the abort, before the change: the settings read again, a new session's model chosen. */
  prepare(): Promise<void>;
  /** After the change: the model the session goes on with settled, the resources and extensions loaded for it, session_start. */
  finish(start: SessionStart): Promise<void>;
}

export interface SessionHandlerContext {
  session: AgentSession;
  extensions?: ExtensionRunner;
  /** Without it the session changes under the same settings and extensions are only told session_start. */
  renewal?: SessionRenewal;
  store: SessionStore;
  cwd: string;
  fileFor: (h: SessionHeader) => string | undefined;
}

/** The session-tree commands: switching, branching, browsing entries and stats. */
export function sessionHandlers(ctx: SessionHandlerContext) {
  const s = () => ctx.session;

  const forkMessages = () => {
    const out: { entryId: string; text: string }[] = [];
    for (const e of s().branchPath()) {
      const text = userEntryText(e);
      if (text !== undefined) out.push({ entryId: e.id, text });
    }
    return { messages: out };
  };

  /**
   * Ask extensions first (session_before_*); a cancel changes nothing. Otherwise the old instances
   * see session_shutdown (with the file the session changes to), the run is aborted, the session
   * changes (renewed around it), and new instances see session_start.
   */
  const change = async (
    event: "session_before_switch" | "session_before_fork",
    payload: Record<string, unknown>,
    reason: string,
    targetSessionFile: () => string | undefined,
    apply: () => void,
  ): Promise<boolean> => {
    const ext = ctx.extensions;
    if (ext && (await ext.beforeSessionChange(event, payload))) return false;
    const previousSessionFile = s().file;
    const previousSessionId = s().sessionId;
    const target = targetSessionFile();
    if (ext) await ext.notify("session_shutdown", { reason, ...(target !== undefined ? { targetSessionFile: target } : {}) });
    await s().abort();
    await ctx.renewal?.prepare();
    await apply();
    // The session left behind ends here, as the reference disposes its session after session_shutdown.
    s().releaseResources(previousSessionId);
    const start: SessionStart = { reason, previousSessionFile };
    if (ctx.renewal) await ctx.renewal.finish(start);
    else if (ext) await ext.notify("session_start", start);
    return true;
  };

  const fork = async (c: CommandOf<"fork"> | CommandOf<"branch">) => {
    const path = s().branchPath();
    const at = path.findIndex((e) => e.id === c.entryId);
    const text = userEntryText(path[at]);
    if (at < 0 || text === undefined) throw new PionError("Invalid entry ID for forking", "invalid_argument");
    // The new session's id and time are chosen first, so session_shutdown can name its file.
    const next = s().planSession();
    const done = await change("session_before_fork", { entryId: c.entryId, position: "before" }, "fork", () => next.file, () => s().branchInto(path.slice(0, at), next.planned));
    return { text, cancelled: !done };
  };

  return {
    new_session: async (c: CommandOf<"new_session">) => {
      const next = s().planSession();
      const done = await change("session_before_switch", { reason: "new" }, "new", () => next.file, () => s().startNew(c.parentSession, next.planned));
      return { cancelled: !done };
    },
    switch_session: async (c: CommandOf<"switch_session">) => {
      const id = locateSession(ctx.store, c.sessionPath, ctx.cwd, ctx.fileFor);
      const file = () => ctx.store.getSession(id)?.file ?? c.sessionPath;
      const done = await change("session_before_switch", { reason: "resume", targetSessionFile: c.sessionPath }, "resume", file, () => {
        s().openStored(id);
        s().restoreSettings();
      });
      return { cancelled: !done };
    },
    fork,
    branch: fork,
    clone: async () => {
      if (!s().isStored) {
        throw new PionError("This session has not been saved yet. Send a message before cloning or forking it.", "invalid_state");
      }
      const next = s().planSession();
      const done = await change("session_before_fork", { entryId: s().leaf, position: "at" }, "fork", () => next.file, () => s().branchInto(s().branchPath(), next.planned));
      return { cancelled: !done };
    },
    get_fork_messages: forkMessages,
    get_branch_messages: forkMessages,
    get_entries: (c: CommandOf<"get_entries">) => {
      const leafId = s().leaf;
      if (!s().isStored) {
        const all = s().entries();
        if (c.since !== undefined) {
          const i = all.findIndex((e) => e.id === c.since);
          if (i < 0) throw new PionError(`Entry not found: ${c.since}`, "not_found");
          return page(all.slice(i + 1), c.limit, leafId);
        }
        return page(all, c.limit, leafId);
      }
      if (c.since !== undefined) {
        if (!ctx.store.getEntry(s().sessionId, c.since)) throw new PionError(`Entry not found: ${c.since}`, "not_found");
        const r = ctx.store.entriesSince(s().sessionId, c.since, c.limit);
        return c.limit === undefined ? { entries: r.entries, leafId } : { entries: r.entries, leafId, hasMore: r.hasMore };
      }
      if (c.limit !== undefined) {
        const r = ctx.store.entriesPage(s().sessionId, c.limit);
        return { entries: r.entries, leafId, hasMore: r.hasMore };
      }
      // Stored bodies are passed on as they are, read while the answer is written.
      return RawJson.wrap('{"entries":[', commaJoined(ctx.store.bodyPages(s().sessionId)), `],"leafId":${JSON.stringify(leafId)}}`);
    },
    get_tree: () => RawJson.wrap('{"tree":', s().treeJson(), `,"leafId":${JSON.stringify(s().leaf)}}`),
    get_messages: () => RawJson.wrap('{"messages":', s().messagesJson(), "}"),
    get_session_stats: () => {
      const stats = sessionStats(s().entries(), s().branchPath(), s().model);
      const out: Record<string, unknown> = {};
      if (s().file) out.sessionFile = s().file;
      out.sessionId = s().sessionId;
      return { ...out, ...stats };
    },
    export_html: async (c: CommandOf<"export_html">) => {
      const { defaultExportName, renderSessionHtml, writeHtmlExport } = await import("../export/html.ts");
      const session = s();
      if (session.messages().length === 0) throw new PionError("Nothing to export yet - start a conversation first", "invalid_state");
      const model = session.model;
      const html = renderSessionHtml({
        sessionId: session.sessionId,
        name: session.name,
        cwd: ctx.cwd,
        model: model ? { provider: model.provider, id: model.id } : undefined,
        entries: session.entries(),
        leafId: session.leaf,
        jsonl: sessionFileText(ctx.store, session),
        ...session.modelContext(),
      });
      const target = c.outputPath ? resolve(ctx.cwd, c.outputPath) : join(ctx.cwd, defaultExportName(session.sessionId, session.name));
      return { path: writeHtmlExport(html, target) };
    },
    list_sessions: (c: CommandOf<"list_sessions">) => {
      const r = ctx.store.listSessions({ cwd: c.cwd, limit: c.limit, cursor: c.cursor });
      const sessions = r.sessions.map((x) => ({
        sessionId: x.sessionId,
        sessionFile: x.file,
        cwd: x.cwd,
        name: x.name,
        firstMessage: x.firstMessage,
        messageCount: x.messageCount,
        createdAt: x.createdAt,
        updatedAt: x.updatedAt,
        parentSession: x.parentSession,
      }));
      return r.nextCursor ? { sessions, nextCursor: r.nextCursor } : { sessions };
    },
    search_sessions: (c: CommandOf<"search_sessions">) => ({
      results: ctx.store.searchSessions({ query: c.query, cwd: c.cwd, limit: c.limit }),
    }),
  };
}

function page<T>(entries: T[], limit: number | undefined, leafId: string | null) {
  if (limit === undefined) return { entries, leafId };
  return { entries: entries.slice(0, limit), leafId, hasMore: entries.length > limit };
}

/** The session's JSONL file, completed from the database first, for the page's download link. */
function sessionFileText(store: SessionStore, session: AgentSession): string | undefined {
  if (!session.file || !session.isStored) return undefined;
  syncJsonl(store, session.sessionId);
  return existsSync(session.file) ? readFileSync(session.file, "utf8") : undefined;
}
