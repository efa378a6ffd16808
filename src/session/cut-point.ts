import type { AgentMessage, CompactionEntry, Entry } from "../store/entries.ts";
import { estimateTokens } from "./token-estimate.ts";

/** Where a compaction cuts the branch (indexes into the path, root first). */
export interface CutPoint {
  /** Index in the path of the first entry kept verbatim; its id becomes `firstKeptEntryId`. */
  firstKeptIndex: number;
  /** Index of the first entry to summarize: 0, or the previous compaction's kept boundary. */
  summarizeFrom: number;
  /**
   * True when the cut lands on an assistant message inside a turn. The part of that turn
   * before the cut (from `turnStartIndex`) is summarized on its own, as a split-turn summary.
   */
  splitTurn: boolean;
  /** The message that opened the turn the cut splits; -1 when the turn is not split. */
  turnStartIndex: number;
}

export interface CutOptions {
  /**
   * When the budget is never reached, or reaching it leaves nothing to summarize, cut at the
   * newest possible point instead of giving up (overflow recovery: the provider said the
   * context does not fit, whatever the estimate says).
   */
  fallbackToNewest?: boolean;
}

/**
 * Where to cut the branch so that about `keepRecentTokens` of the newest context stays
 * verbatim. Walking back from the newest message, the cut lands on the nearest cut point at
 * or after the message where the budget was reached: a user, assistant, bash execution,
 * custom or branch-summary message, never a tool result and never between a tool call and
 * its result. A cut on an assistant message splits its turn. Undefined when there is
 * nothing to summarize.
 */
export function findCutPoint(path: readonly Entry[], keepRecentTokens: number, opts: CutOptions = {}): CutPoint | undefined {
  const summarizeFrom = summaryStart(path);
  const messages = effectiveMessages(path);
  const unsafe = toolPairSpans(messages);
  let { cut, cuts } = budgetCut(messages, unsafe, summarizeFrom, path.length, keepRecentTokens);
  if (cuts.length === 0) return undefined;
  // a system-role message (imported sessions) is not conversation: there is nothing to summarize in it
  const hasBefore = (at: number) => messages.slice(summarizeFrom, at).some((m) => m !== undefined && (m as { role: string }).role !== "system");
  if (opts.fallbackToNewest && (cut === undefined || !hasBefore(cut))) cut = cuts.at(-1);
  if (cut === undefined || !hasBefore(cut)) return undefined;
  const turnStartIndex = startsTurn(messages[cut]!) ? -1 : turnStartAt(messages, unsafe, cut - 1, summarizeFrom);
  return { firstKeptIndex: cut, summarizeFrom, splitTurn: turnStartIndex >= 0, turnStartIndex };
}

/**
 * The cut points in `messages[from, to)` (`cuts`) and the one where, walking back from `to`,
 * about `keepRecentTokens` are reached (`cut`): the nearest cut point at or after the message that
 * reached the budget. Undefined when the budget is never reached. `tokensAt(i)` is what index `i`
 * adds to the context (by default its message's estimate; an entry may hold more than one).
 */
export function budgetCut(
  messages: readonly (AgentMessage | undefined)[],
  unsafe: readonly boolean[],
  from: number,
  to: number,
  keepRecentTokens: number,
  tokensAt: (i: number) => number = (i) => (messages[i] ? estimateTokens(messages[i]) : 0),
): { cut: number | undefined; cuts: number[] } {
  const cuts: number[] = [];
  for (let i = from; i < to; i++) {
    const m = messages[i];
    if (m && !unsafe[i] && isCutPoint(m)) cuts.push(i);
  }
  if (cuts.length === 0) return { cut: undefined, cuts };
  let tokens = 0;
  for (let i = to - 1; i >= from; i--) {
    const t = tokensAt(i);
    if (t === 0) continue;
    tokens += t;
    // When the newest tool results alone exceed the budget, keep the call that produced them.
    if (tokens >= keepRecentTokens) return { cut: cuts.find((c) => c >= i) ?? cuts.at(-1)!, cuts };
  }
  return { cut: undefined, cuts };
}

/** The newest message at or before `at` (down to `from`) that opens a turn; -1 when there is none. */
export function turnStartAt(messages: readonly (AgentMessage | undefined)[], unsafe: readonly boolean[], at: number, from: number): number {
  for (let j = at; j >= from; j--) {
    const m = messages[j];
    if (m && !unsafe[j] && startsTurn(m)) return j;
  }
  return -1;
}

/** The newest compaction on the path, with its index. */
export function latestCompaction(path: readonly Entry[]): { entry: CompactionEntry; index: number } | undefined {
  for (let i = path.length - 1; i >= 0; i--) {
    const e = path[i]!;
    if (e.type === "compaction") return { entry: e, index: i };
  }
  return undefined;
}

/** Entries before the previous compaction's kept boundary are already in its summary. */
function summaryStart(path: readonly Entry[]): number {
  const previous = latestCompaction(path);
  if (!previous) return 0;
  const kept = path.findIndex((e) => e.id === previous.entry.firstKeptEntryId);
  return kept >= 0 && kept < previous.index ? kept : previous.index + 1;
}

/** What each entry contributes to the context (context edits applied), by path index. */
export function effectiveMessages(path: readonly Entry[]): (AgentMessage | undefined)[] {
  const edits = new Map<string, object | null>();
  for (const e of path) if (e.type === "context_edit") edits.set(e.targetId, e.replacement);
  return path.map((e) => {
    const m = entryMessage(e);
    const edit = edits.get(e.id);
    return m && edit !== undefined ? editedMessage(m, edit) : m;
  });
}

/**
 * A message with a context edit applied: gone for a null replacement, else its content replaced
 * by the replacement's (the reference writes `{ content }` only; a plain string becomes one text
 * block where the role takes blocks). Messages without editable content stay as they are.
 */
export function editedMessage(m: AgentMessage, replacement: object | null): AgentMessage | undefined {
  if (replacement === null) return undefined;
  if (m.role !== "user" && m.role !== "assistant" && m.role !== "toolResult" && m.role !== "custom") return m;
  const content = (replacement as { content?: unknown }).content;
  const blocks = (m.role === "assistant" || m.role === "toolResult") && typeof content === "string";
  return { ...m, content: blocks ? [{ type: "text", text: content }] : content } as AgentMessage;
}

/** What one entry contributes to the context before edits: a message, custom message or branch summary. */
export function entryMessage(e: Entry): AgentMessage | undefined {
  const timestamp = Date.parse(e.timestamp) || 0;
  if (e.type === "message") return e.message;
  if (e.type === "custom_message") {
    return { role: "custom", customType: e.customType, content: e.content, display: e.display, details: e.details, timestamp };
  }
  if (e.type === "branch_summary") return { role: "branchSummary", summary: e.summary, fromId: e.fromId, timestamp };
  return undefined;
}

/** `unsafe[i]` is true when a tool call before `i` has its result at or after `i`. */
export function toolPairSpans(messages: readonly (AgentMessage | undefined)[]): boolean[] {
  const callAt = new Map<string, number>();
  const depth = new Array<number>(messages.length + 1).fill(0);
  messages.forEach((m, i) => {
    if (m?.role === "assistant") {
      for (const block of m.content) if (block.type === "toolCall") callAt.set(block.id, i);
    } else if (m?.role === "toolResult") {
      const k = callAt.get(m.toolCallId);
      if (k !== undefined && k < i) {
        depth[k + 1]!++;
        depth[i + 1]!--;
      }
    }
  });
  const unsafe: boolean[] = [];
  let open = 0;
  for (let i = 0; i < messages.length; i++) {
    open += depth[i]!;
    unsafe.push(open > 0);
  }
  return unsafe;
}

function isCutPoint(m: AgentMessage): boolean {
  return m.role === "assistant" || startsTurn(m);
}

export function startsTurn(m: AgentMessage): boolean {
  return m.role === "user" || m.role === "bashExecution" || m.role === "custom" || m.role === "branchSummary";
}
