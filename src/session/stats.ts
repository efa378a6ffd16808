import type { Model } from "../providers/types.ts";
import { getCurrentSystemMessage } from "./system-messages.ts";
import type { AgentMessage, Entry } from "../store/entries.ts";
import { contextEntries } from "./context.ts";
import { editedMessage, entryMessage } from "./cut-point.ts";
import { estimateTokens } from "./token-estimate.ts";

export { estimateTokens };

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
    if (e.type === "compaction" || e.type === "branch_summary") {
      // the summary's model call counts in the session's totals (a branch summary records it on the entry)
      const usage = e.type === "branch_summary" ? e.usage : (e.details as { usage?: Parameters<typeof addUsage>[1] } | undefined)?.usage;
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

/** One part of the context with the index of the entry it comes from; system-role messages included. */
interface ContextPart {
  at: number;
  messages: AgentMessage[];
}

/**
 * The context as the reference projects a branch for its estimate: the newest compaction's
 * system message (when it kept one) and summary, then every context entry's message with its
 * newest edit applied, system-role messages of imported sessions included.
 */
function contextParts(branch: readonly Entry[]): ContextPart[] {
  const index = new Map(branch.map((e, i) => [e, i]));
  const entries = contextEntries(branch);
  const edits = new Map<string, object | null>();
  for (const e of entries) if (e.type === "context_edit") edits.set(e.targetId, e.replacement);
  return entries.map((e, i) => {
    const at = index.get(e)!;
    if (e.type === "compaction") {
      if (i > 0) return { at, messages: [] };
      const system = (e as { systemMessage?: AgentMessage }).systemMessage;
      const summary: AgentMessage = { role: "compactionSummary", summary: e.summary, tokensBefore: e.tokensBefore, timestamp: 0 };
      return { at, messages: system ? [system, summary] : [summary] };
    }
    if (e.type === "branch_summary" && !e.summary) return { at, messages: [] };
    const m = entryMessage(e);
    const edit = edits.get(e.id);
    const shown = m && edit !== undefined ? editedMessage(m, edit) : m;
    return { at, messages: shown ? [shown] : [] };
  });
}

/** The tokens a completed response says its context held; 0 when it reported none. */
function usageTokens(m: AgentMessage): number {
  if (m.role !== "assistant" || m.stopReason === "error" || m.stopReason === "aborted" || !m.usage) return 0;
  const u = m.usage;
  return u.totalTokens || u.input + u.output + u.cacheRead + u.cacheWrite;
}

const isSystem = (m: AgentMessage) => (m as { role: string }).role === "system";

/**
 * Tokens in the context now, as the reference reckons them (see `estimateContext`), or null after
 * a compaction until a response in the context reports usage again: until then the newest usage
 * measured the context before it was compacted.
 */
export function contextTokens(branch: readonly Entry[]): number | null {
  const r = reckon(branch);
  return r.stale ? null : r.tokens;
}

/**
 * Tokens in the context: the newest usage a response in the context reported plus an estimate of
 * what came after it. When a compaction or a context edit came after that response, or no
 * response reported usage, the whole context is estimated (its system messages replayed into one).
 */
export function estimateContext(branch: readonly Entry[]): number {
  return reckon(branch).tokens;
}

function reckon(branch: readonly Entry[]): { tokens: number; stale: boolean } {
  const parts = contextParts(branch);
  const messages = parts.flatMap((p) => p.messages);
  let changedAt = -1;
  let compactedAt = -1;
  for (let i = branch.length - 1; i >= 0 && compactedAt < 0; i--) {
    const type = branch[i]!.type;
    if (type === "compaction") compactedAt = i;
    if (changedAt < 0 && (type === "compaction" || type === "context_edit")) changedAt = i;
  }
  // the newest response with usage, by its entry's index and its message's place in `messages`
  let usedAt = -1;
  let usage = 0;
  let at = messages.length;
  for (let p = parts.length - 1; p >= 0 && usage === 0; p--) {
    const part = parts[p]!;
    for (let k = part.messages.length - 1; k >= 0 && usage === 0; k--) {
      at--;
      usage = usageTokens(part.messages[k]!);
      if (usage > 0) usedAt = part.at;
    }
  }
  const stale = compactedAt >= 0 && usedAt <= compactedAt;
  if (usage > 0 && usedAt > changedAt) {
    let tokens = usage;
    for (const m of messages.slice(at + 1)) tokens += estimateTokens(m);
    return { tokens, stale };
  }
  const system = getCurrentSystemMessage(messages as never);
  let tokens = system ? estimateTokens(system) : 0;
  for (const m of messages) if (!isSystem(m)) tokens += estimateTokens(m);
  return { tokens, stale };
}
