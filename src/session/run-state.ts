import type { Usage } from "../providers/types.ts";
import type { CustomMessage } from "../store/entries.ts";

/** Add one model call's usage (tokens and cost) to a running total. */
export function addUsage(total: Usage, u: Usage): void {
  total.input += u.input;
  total.output += u.output;
  total.cacheRead += u.cacheRead;
  total.cacheWrite += u.cacheWrite;
  total.totalTokens += u.totalTokens;
  total.cost.input += u.cost.input;
  total.cost.output += u.cost.output;
  total.cost.cacheRead += u.cost.cacheRead;
  total.cost.cacheWrite += u.cost.cacheWrite;
  total.cost.total += u.cost.total;
}

export function customMessage(m: { customType: string; content: string | unknown[]; display?: boolean; details?: unknown }): CustomMessage {
  const message: CustomMessage = {
    role: "custom",
    customType: m.customType,
    content: m.content as string,
    display: m.display ?? true,
    timestamp: Date.now(),
  };
  if (m.details !== undefined) message.details = m.details;
  return message;
}

export function freshRetry() {
  return {
    attempt: 0,
    pending: false,
    exhausted: false,
    lastError: "",
    failedEntryId: undefined as string | undefined,
    cancel: undefined as AbortController | undefined,
  };
}

