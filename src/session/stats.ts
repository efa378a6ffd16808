import type { Model } from "../providers/types.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";

export interface SessionStats {
  userMessages: number;
  assistantMessages: number;
  toolCalls: number;
  toolResults: number;
  totalMessages: number;
  tokens: { input: number; output: number; cacheRead: number; cacheWrite: number; total: number };
  cost: number;
  contextUsage?: { tokens: number | null; contextWindow: number; percent: number | null };
}

/** Counts over every message the session ever recorded (retried attempts and other branches included). */
export function sessionStats(entries: readonly Entry[], branch: readonly Entry[], model: Model | undefined): SessionStats {
  const s: SessionStats = {
    userMessages: 0,
    assistantMessages: 0,
    toolCalls: 0,
    toolResults: 0,
    totalMessages: 0,
    tokens: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
    cost: 0,
  };
  for (const e of entries) {
    if (e.type === "compaction") {
      // the summary's model call counts in the session's totals
      const usage = (e.details as { usage?: Parameters<typeof addUsage>[1] } | undefined)?.usage;
      if (usage) addUsage(s, usage);
      continue;
    }
    if (e.type !== "message") continue;
    const m = e.message;
    s.totalMessages++;
    if (m.role === "user") s.userMessages++;
    else if (m.role === "assistant") {
      s.assistantMessages++;
      s.toolCalls += m.content.filter((c) => c.type === "toolCall").length;
      addUsage(s, m.usage);
    } else if (m.role === "toolResult") {
      s.toolResults++;
      const usage = (m as { usage?: typeof s.tokens & { totalTokens: number; cost: { total: number } } }).usage;
      if (usage) addUsage(s, usage);
    }
  }
  if (model && model.contextWindow > 0) {
    const tokens = contextTokens(branch);
    s.contextUsage = {
      tokens,
      contextWindow: model.contextWindow,
      percent: tokens === null ? null : Math.round((tokens / model.contextWindow) * 1000) / 10,
    };
  }
  return s;
}

function addUsage(s: SessionStats, u: { input: number; output: number; cacheRead: number; cacheWrite: number; cost: { total: number } }): void {
  s.tokens.input += u.input;
  s.tokens.output += u.output;
  s.tokens.cacheRead += u.cacheRead;
  s.tokens.cacheWrite += u.cacheWrite;
  s.tokens.total += u.input + u.output + u.cacheRead + u.cacheWrite;
  s.cost += u.cost.total;
}

/**
 * Tokens in the context now: the newest successful response's reported usage plus an
 * estimate (4 characters a token) of what came after it. Null right after a compaction,
 * until a response reports usage again.
 */
export function contextTokens(branch: readonly Entry[]): number | null {
  let after = 0;
  for (let i = branch.length - 1; i >= 0; i--) {
    const e = branch[i]!;
    if (e.type === "compaction") return null;
    if (e.type !== "message") continue;
    const m = e.message;
    if (m.role === "assistant" && m.stopReason !== "error" && m.stopReason !== "aborted" && m.usage.totalTokens > 0) {
      return m.usage.input + m.usage.output + m.usage.cacheRead + m.usage.cacheWrite + after;
    }
    after += estimateTokens(m);
  }
  return after > 0 ? after : 0;
}

export function estimateTokens(m: AgentMessage): number {
  return Math.ceil(JSON.stringify("content" in m ? m.content : m).length / 4);
}
