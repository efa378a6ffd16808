/**
 * What an editor shows about a session beside its conversation: the context meter and cost
 * (`usage_update`) and the title (`session_info_update`). Both are read from the session as
 * get_session_stats and the session list read them, never counted a second time here.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentSession } from "../session/session.ts";
import { sessionStats } from "../session/stats.ts";
import { contentText, userText } from "../store/entries.ts";

/** How long a title made from the first prompt may be (the session list cuts it the same way). */
const TITLE_CHARS = 80;

/** A session's title: its name, else the start of its first prompt; undefined before either. */
export function sessionTitle(name: string | undefined, firstMessage: string | undefined): string | undefined {
  return name ?? firstMessage?.slice(0, TITLE_CHARS);
}

/** The title of a session as it stands (its name, or its branch's first prompt). */
export function currentTitle(session: AgentSession): string | undefined {
  if (session.name) return session.name;
  for (const e of session.branchPath()) {
    const text = userText(e);
    if (text) return sessionTitle(undefined, text);
  }
  return undefined;
}

/** The title a user message gives a session that has none yet. */
export function titleFromPrompt(content: unknown): string | undefined {
  return sessionTitle(undefined, contentText(content) || undefined);
}

/**
 * Context tokens used and the model's window, with the session's whole cost in USD. Undefined
 * when the model's window is unknown or nothing tells the context's size (right after a compaction).
 */
export function usageUpdate(session: AgentSession): acp.SessionUpdate | undefined {
  const stats = sessionStats(session.entries(), session.branchPath(), session.model);
  const used = stats.contextUsage?.tokens;
  if (!stats.contextUsage || used === null || used === undefined) return undefined;
  return {
    sessionUpdate: "usage_update",
    used,
    size: stats.contextUsage.contextWindow,
    cost: { amount: stats.cost, currency: "USD" },
  };
}

export function infoUpdate(title: string | undefined, updatedAt = new Date()): acp.SessionUpdate {
  return { sessionUpdate: "session_info_update", title: title ?? null, updatedAt: updatedAt.toISOString() };
}
