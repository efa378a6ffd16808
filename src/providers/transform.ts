import type { AssistantMessage, Message, ToolResultMessage } from "./types.ts";

/**
 * Make a history safe to send: failed or aborted assistant messages are dropped with the
 * results of their tool calls (providers reject half-finished turns), and a tool call
 * left without a result gets an error result so every call is answered.
 */
export function sanitizeHistory(messages: readonly Message[]): Message[] {
  const out: Message[] = [];
  const dropped = new Set<string>();
  let open: AssistantMessage | undefined;
  let answered = new Set<string>();

  const closeOpen = () => {
    if (!open) return;
    for (const c of open.content) {
      if (c.type === "toolCall" && !answered.has(c.id)) out.push(missingResult(c.id, c.name));
    }
    open = undefined;
  };

  for (const m of messages) {
    if (m.role === "assistant") {
      closeOpen();
      if (m.stopReason === "error" || m.stopReason === "aborted") {
        for (const c of m.content) if (c.type === "toolCall") dropped.add(c.id);
        continue;
      }
      out.push(m);
      if (m.content.some((c) => c.type === "toolCall")) {
        open = m;
        answered = new Set();
      }
    } else if (m.role === "toolResult") {
      if (dropped.has(m.toolCallId) || !open) continue;
      answered.add(m.toolCallId);
      out.push(m);
    } else {
      closeOpen();
      out.push(m);
    }
  }
  closeOpen();
  return out;
}

const missingResult = (id: string, name: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: name,
  content: [{ type: "text", text: "No result provided" }],
  isError: true,
  timestamp: Date.now(),
});

/** Parse streamed tool-call arguments; invalid JSON yields an empty object (validation then names the fields). */
export function parseToolArguments(raw: string): Record<string, unknown> {
  if (!raw.trim()) return {};
  try {
    const v = JSON.parse(raw);
    return v && typeof v === "object" && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}

/**
 * Watchdog for a stalled HTTP stream: once armed by the first `touch` (when the request is
 * sent, so loading an SDK does not count), aborts `controller` when `touch` is not called for `ms`.
 */
export function idleWatchdog(controller: AbortController, ms: number | undefined): { touch(): void; stop(): void; fired(): boolean } {
  let fired = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const arm = () => {
    if (!ms || ms <= 0) return;
    clearTimeout(timer);
    timer = setTimeout(() => {
      fired = true;
      controller.abort(new Error(`Request timed out: no data for ${ms} ms`));
    }, ms);
  };
  return { touch: arm, stop: () => clearTimeout(timer), fired: () => fired };
}

/** Link an outer signal into a fresh controller so a watchdog can abort independently. */
export function linkedController(signal: AbortSignal): AbortController {
  const c = new AbortController();
  if (signal.aborted) c.abort(signal.reason);
  else signal.addEventListener("abort", () => c.abort(signal.reason), { once: true });
  return c;
}
