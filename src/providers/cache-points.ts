/**
 * Where a request's conversation cache breakpoints go, for the APIs that take explicit ones
 * (Anthropic's `cache_control`, and the same markers through OpenRouter). Two at most, beside the
 * system prompt's and the last tool's, so a request never carries more than Anthropic's four:
 *
 * - the end of the conversation, so the next request, which repeats this one and adds to it,
 *   reads all of it from the cache;
 * - the end of the previous request: everything before the last assistant message is what the
 *   request that produced that message sent, and the cache holds an entry ending there. A
 *   breakpoint finds an earlier entry only within 20 blocks before it, so a step that added more
 *   (many parallel tool calls and their results) would read nothing from the end breakpoint
 *   alone; this one reads the entry exactly. When the step is short both read the same entry and
 *   the second breakpoint costs nothing.
 *
 * `mark` puts a breakpoint on the last block of a message that can carry one (not thinking, not
 * empty text) and says whether it could; a message that cannot hands it to the message before.
 */
export function markConversation<M extends { role: string }>(messages: readonly M[], mark: (m: M) => boolean): void {
  const end = markFrom(messages, messages.length - 1, mark);
  let lastAssistant = -1;
  for (let i = messages.length - 1; i >= 0 && lastAssistant < 0; i--) if (messages[i]!.role === "assistant") lastAssistant = i;
  const previousEnd = lastAssistant - 1;
  if (previousEnd >= 0 && previousEnd < end) markFrom(messages, previousEnd, mark);
}

/** The index of the message that took the breakpoint, -1 when none could. */
function markFrom<M>(messages: readonly M[], from: number, mark: (m: M) => boolean): number {
  for (let i = from; i >= 0; i--) if (mark(messages[i]!)) return i;
  return -1;
}

export const EPHEMERAL = { type: "ephemeral" } as const;
