/**
 * What an editor shows about a session beside its conversation: the context meter and cost
 * (`usage_update`) and the title (`session_info_update`). Both are read from the session as
 * get_session_stats and the session list read them, never counted a second time here.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { AgentSession } from "../session/session.ts";
import { contextTokens, sessionStats } from "../session/stats.ts";
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

/** The session's whole cost in USD, as get_session_stats counts it (every entry: one read of the store). */
export function sessionCost(session: AgentSession): number {
  return sessionStats(session.entries(), [], undefined).cost;
}

/**
 * Context tokens used (from the branch, in memory) and the model's window, with `cost`, the
 * session's whole cost in USD. Undefined when the model's window is unknown or nothing tells the
 * context's size (right after a compaction).
 */
export function usageUpdate(session: AgentSession, cost: number): acp.SessionUpdate | undefined {
  const window = session.model?.contextWindow ?? 0;
  const used = window > 0 ? contextTokens(session.branchPath()) : null;
  if (used === null) return undefined;
  return { sessionUpdate: "usage_update", used, size: window, cost: { amount: cost, currency: "USD" } };
}

export function infoUpdate(title: string | undefined, updatedAt = new Date()): acp.SessionUpdate {
  return { sessionUpdate: "session_info_update", title: title ?? null, updatedAt: updatedAt.toISOString() };
}
