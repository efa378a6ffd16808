import type { AssistantMessage, Message, ToolCall, ToolResultMessage } from "./types.ts";

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

/** How much of unparseable arguments the error quotes back to the model. */
const QUOTED_ARGUMENTS = 200;

/**
 * Set a finished tool call's arguments from the streamed text. Text that is not a JSON
 * object (cut off by max_tokens or a disconnect, or malformed by the model) leaves
 * `arguments` empty and sets `argumentsError`, quoting the start of what arrived: the loop
 * answers such a call with an error result and never runs the tool on defaults.
 */
export function setToolArguments(call: ToolCall, raw: string): void {
  delete call.argumentsError;
  call.arguments = {};
  if (!raw.trim()) return;
  let why: string;
  try {
    const v: unknown = parseLenient(raw);
    if (v && typeof v === "object" && !Array.isArray(v)) {
      call.arguments = v as Record<string, unknown>;
      return;
    }
    why = `expected a JSON object, got ${Array.isArray(v) ? "an array" : v === null ? "null" : typeof v}`;
  } catch (err) {
    why = err instanceof Error ? err.message : String(err);
  }
  const start = raw.length > QUOTED_ARGUMENTS ? `${raw.slice(0, QUOTED_ARGUMENTS)}… (${raw.length} characters in all)` : raw;
  call.argumentsError = `the arguments are not valid JSON (${why}). They began: ${start}`;
}

/**
 * JSON.parse, then once more with string literals mended the way models break them (as the
 * reference does): a raw control character (a literal newline or tab) becomes its escape, and
 * a backslash before a character JSON cannot escape (`\d`, `C:\dir`) becomes a literal
 * backslash. Nothing outside strings is touched, so cut-off or malformed structure still fails.
 */
export function parseLenient(raw: string): unknown {
  try {
    return JSON.parse(raw);
  } catch (err) {
    const mended = mendStrings(raw);
    if (mended === raw) throw err;
    return JSON.parse(mended);
  }
}

const ESCAPES = new Set(['"', "\\", "/", "b", "f", "n", "r", "t", "u"]);
const CONTROL: Record<string, string> = { "\n": "\\n", "\r": "\\r", "\t": "\\t", "\b": "\\b", "\f": "\\f" };

/** The string-literal repair that parseLenient retries with; text outside strings is kept as it is. */
export function mendStrings(raw: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (!inString) {
      if (ch === '"') inString = true;
      out += ch;
    } else if (ch === '"') {
      inString = false;
      out += ch;
    } else if (ch === "\\") {
      const next = raw[i + 1];
      const valid = next !== undefined && ESCAPES.has(next) && (next !== "u" || /^[0-9a-fA-F]{4}$/.test(raw.slice(i + 2, i + 6)));
      if (valid) {
        out += ch + next;
        i++;
      } else out += "\\\\";
    } else if (ch < " ") {
      out += CONTROL[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, "0")}`;
    } else out += ch;
  }
  return out;
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
