import type { CustomMessage } from "../store/entries.ts";


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

