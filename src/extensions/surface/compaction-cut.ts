/**
 * The reference's compaction arithmetic over pion's: token estimates, the threshold, where a
 * compaction cuts a range of entries (`findCutPoint`, `findTurnStartIndex`, with pion's cut
 * rules from session/cut-point.ts), the newest usable usage, and the summarizer's transcript.
 */
import type { Usage } from "../../providers/types.ts";
import type { AgentMessage } from "../../store/entries.ts";
import { COMPACTION_DEFAULTS, serializeForSummary, shouldCompact as overThreshold } from "../../session/compaction.ts";
import { budgetCut, startsTurn, toolPairSpans, turnStartAt } from "../../session/cut-point.ts";
import { estimateTokens } from "../../session/stats.ts";
import { sessionEntryToContextMessages } from "./compaction-context.ts";

type AnyEntry = Parameters<typeof sessionEntryToContextMessages>[0];
type Settings = { enabled: boolean; reserveTokens: number; keepRecentTokens: number };

export const DEFAULT_COMPACTION_SETTINGS: Settings = { ...COMPACTION_DEFAULTS };

/** The tokens a response's usage says the context held: its total, else the sum of its parts. */
export function calculateContextTokens(usage: Usage): number {
  return usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
}

/** The usage of the newest assistant message that completed and reported any. */
export function getLastAssistantUsage(entries: readonly AnyEntry[]): Usage | undefined {
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (e.type !== "message") continue;
    const m = e.message as { role: string; stopReason?: string; usage?: Usage };
    if (m.role === "assistant" && m.stopReason !== "aborted" && m.stopReason !== "error" && m.usage && calculateContextTokens(m.usage) > 0) return m.usage;
  }
  return undefined;
}

/** Whether compaction is on and the context has grown into the reserve below the window. */
export function shouldCompact(contextTokens: number, contextWindow: number, settings: Settings): boolean {
  return settings.enabled && overThreshold(contextTokens, contextWindow, settings.reserveTokens);
}

/**
 * One message per entry as the cut sees it. A compaction in the range counts with its summary,
 * which is never a cut point and opens no turn.
 */
function cutMessages(entries: readonly AnyEntry[]): (AgentMessage | undefined)[] {
  return entries.map((e) => sessionEntryToContextMessages(e).at(-1) as unknown as AgentMessage | undefined);
}

/** The entry at or before `entryIndex` (down to `startIndex`) whose message opens a turn; -1 when none does. */
export function findTurnStartIndex(entries: readonly AnyEntry[], entryIndex: number, startIndex: number): number {
  const messages = cutMessages(entries);
  return turnStartAt(messages, toolPairSpans(messages), entryIndex, startIndex);
}

/**
 * Where to cut `entries[startIndex, endIndex)` to keep about `keepRecentTokens` verbatim: the
 * first kept entry (moved back over entries that add nothing to the context, such as model
 * changes), and when it splits a turn, the entry that opened the turn. Without a reached budget
 * the cut is the range's first cut point; without any cut point, `startIndex`.
 */
export function findCutPoint(entries: readonly AnyEntry[], startIndex: number, endIndex: number, keepRecentTokens: number) {
  const messages = cutMessages(entries);
  const unsafe = toolPairSpans(messages);
  // an entry counts with all it puts in the context (a compaction its system message too)
  const tokensAt = (i: number) => sessionEntryToContextMessages(entries[i]!).reduce((n, m) => n + estimateTokens(m as unknown as AgentMessage), 0);
  const { cut: reached, cuts } = budgetCut(messages, unsafe, startIndex, endIndex, keepRecentTokens, tokensAt);
  if (cuts.length === 0) return { firstKeptEntryIndex: startIndex, turnStartIndex: -1, isSplitTurn: false };
  let cut = reached ?? cuts[0]!;
  while (cut > startIndex) {
    const before = entries[cut - 1]!;
    if (before.type === "compaction" || sessionEntryToContextMessages(before).length > 0) break;
    cut--;
  }
  const message = messages[cut];
  const opensTurn = message !== undefined && startsTurn(message);
  const turnStartIndex = opensTurn ? -1 : turnStartAt(messages, unsafe, cut, startIndex);
  return { firstKeptEntryIndex: cut, turnStartIndex, isSplitTurn: !opensTurn && turnStartIndex !== -1 };
}

/** A plain-text transcript for a summarizer (pion's format: labelled lines, long tool output cut). */
export function serializeConversation(messages: readonly AgentMessage[]): string {
  return serializeForSummary(messages);
}

export const cutExports = {
  DEFAULT_COMPACTION_SETTINGS,
  calculateContextTokens,
  getLastAssistantUsage,
  shouldCompact,
  estimateTokens,
  findTurnStartIndex,
  findCutPoint,
  serializeConversation,
};
