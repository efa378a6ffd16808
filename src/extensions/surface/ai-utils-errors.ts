/**
 * pi-ai's classifiers of failed responses (context overflow, retryable errors), its retry loop
 * and its diagnostics records, for extensions. The pattern lists are the reference's, so an
 * extension classifies a message as the reference would; pion's session keeps its own lists
 * (session/compaction.ts `isContextOverflow`, session/retry.ts `isTransientError`), which overlap
 * these but are not the same. The backoff and the abortable sleep are pion's (session/retry.ts).
 */
import type { AssistantMessage } from "../../providers/types.ts";
import { cancellableSleep, retryDelay } from "../../session/retry.ts";

type Reply = Pick<AssistantMessage, "stopReason" | "errorMessage" | "provider" | "usage">;

const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt (?:is )?too long/i,
  /prompt exceeds max length/i,
  /request_too_large/i,
  /input is too long for requested model/i,
  /exceeds the context window/i,
  /exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))/i,
  /context window exceeded/i,
  /input token count.*exceeds the maximum/i,
  /maximum prompt length is \d+/i,
  /reduce the length of the messages/i,
  /maximum context length is \d+ tokens/i,
  /exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?/i,
  /input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)/i,
  /exceeds the limit of \d+/i,
  /exceeds the available context size/i,
  /greater than the context length/i,
  /context window exceeds limit/i,
  /exceeded model token limit/i,
  /too large for model with \d+ maximum context length/i,
  /prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?/i,
  /model_context_window_exceeded/i,
  /prompt too long; exceeded (?:max )?context length/i,
  /range of input length should be/i,
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  // A 413 status (as an SDK or a "<provider> API error (413):" prefix puts it), whatever the body says.
  /^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))/i,
];

/** Cerebras answers an oversized request with a bare 400 or 413. */
const CEREBRAS_OVERFLOW = /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i;

/** Throttling that mentions tokens ("Too many tokens, please wait") is not an overflow. */
const NOT_OVERFLOW: readonly RegExp[] = [/^(Throttling error|Service unavailable):/i, /rate limit/i, /too many requests/i];

export const getOverflowPatterns = (): RegExp[] => [...OVERFLOW_PATTERNS];

/**
 * Whether a response means the request did not fit: a provider's overflow error, a success whose
 * input (fresh plus cache-read) exceeds `contextWindow` (a provider that overflows silently), or a
 * length stop with no output after an input filling 99% of the window (one that truncates the input).
 */
export function isContextOverflow(message: Reply, contextWindow?: number): boolean {
  const text = message.errorMessage;
  if (message.stopReason === "error" && text && !NOT_OVERFLOW.some((p) => p.test(text))) {
    if (OVERFLOW_PATTERNS.some((p) => p.test(text))) return true;
    if (message.provider === "cerebras" && CEREBRAS_OVERFLOW.test(text)) return true;
  }
  if (!contextWindow) return false;
  const input = message.usage.input + message.usage.cacheRead;
  if (message.stopReason === "stop") return input > contextWindow;
  return message.stopReason === "length" && message.usage.output === 0 && input >= contextWindow * 0.99;
}

/** A length stop below the output limit the caller meant (`desiredMaxOutput`, before any clamping). */
export const isRecoverableLength = (message: Pick<AssistantMessage, "stopReason" | "usage">, desiredMaxOutput: number): boolean =>
  message.stopReason === "length" && desiredMaxOutput > 0 && message.usage.output < desiredMaxOutput;

const alternatives = (parts: string[]) => new RegExp(parts.join("|"), "i");

/** Spent quota or billing: the same request fails again, however long one waits. */
const EXHAUSTED = alternatives([
  "GoUsageLimitError",
  "FreeUsageLimitError",
  "Monthly usage limit reached",
  "available balance",
  "insufficient_quota",
  "out of budget",
  "quota exceeded",
  "billing",
  "subscription_sharing_usage_limit_exceeded",
  "subscription_sharing_workplace_individual_usage_limit_exceeded",
  '"code"\\s*:\\s*"?1308(?![0-9])',
]);

const TRANSIENT = alternatives([
  "overloaded",
  "server_busy",
  "servers are currently busy",
  "currently experiencing high demand",
  "model is at capacity",
  "rate.?limit",
  "too many requests",
  "(?<![a-z0-9])(?:429|500|502|503|504|520|524)(?![a-z0-9])",
  "service.?(?:is.?)?(?:temporarily.?)?unavailable",
  "server.?error",
  "internal.?error",
  "provider.?returned.?(?:an.?)?error",
  "exceeded request buffer limit while retrying upstream",
  "unable to forward upstream",
  "upstream.?request.?failed",
  "upstream_stream_read_error",
  "stream was interrupted",
  "http/?2 stream failed",
  "network.?error",
  "connection.?error",
  "connection.?refused",
  "connection.?lost",
  "connection.?closed",
  "other side closed",
  "fetch failed",
  "request to \\S+ failed, reason:",
  "getaddrinfo",
  "(?<![a-z0-9_])(?:ECONNRESET|ECONNABORTED|ECONNREFUSED|ETIMEDOUT|EPIPE)(?![a-z0-9_])",
  "connection reset by peer",
  "ENOTFOUND",
  "EAI_AGAIN",
  "upstream.?connect",
  "reset before headers",
  "socket hang up",
  "socket connection was closed",
  "timed? out",
  "timeout",
  "terminated",
  "websocket.?closed",
  "websocket.?error",
  "websocket.?connection.?limit.?reached",
  "ended without",
  "stream ended before message_stop",
  "stream ended before a terminal response event",
  "http2 request did not get a response",
  "stream disconnected before completion",
  "cut short after the reply had begun",
  "pending stream has been canceled",
  "retry delay",
  "you can retry your request",
  "try your request again",
  "please retry your request",
  "ResourceExhausted",
  "subscription_sharing_usage_unavailable",
  "subscription_sharing_user_unavailable",
]);

/** A failed response whose error reads as transient (overload, rate limit, 5xx, a dropped connection), not as spent quota. */
export function isRetryableAssistantError(message: Pick<AssistantMessage, "stopReason" | "errorMessage">): boolean {
  const text = message.stopReason === "error" ? message.errorMessage : undefined;
  return !!text && !EXHAUSTED.test(text) && TRANSIENT.test(text);
}

export interface RetryPolicy {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
  maxAgentDelayMs?: number;
}

const MAX_RETRY_DELAY_MS = 60_000;

/** pion's backoff (`baseDelayMs * 2^(attempt-1)`, attempt 0 counting as 1), capped at `maxAgentDelayMs` (default one minute). */
export function retryDelayMs(policy: Pick<RetryPolicy, "baseDelayMs" | "maxAgentDelayMs">, attempt: number): number {
  const delay = retryDelay(Math.max(1, attempt), policy.baseDelayMs);
  return Math.min(Number.isSafeInteger(delay) ? delay : Number.MAX_SAFE_INTEGER, policy.maxAgentDelayMs ?? MAX_RETRY_DELAY_MS);
}

export interface RetryCallbacks {
  onRetryScheduled?: (attempt: number, maxAttempts: number, delayMs: number, errorMessage: string) => void | Promise<void>;
  onRetryAttemptStart?: () => void | Promise<void>;
  onRetryFinished?: (success: boolean, attempt: number, finalError?: string) => void | Promise<void>;
}

/**
 * Call `produce` again after a retryable error, up to `policy.maxRetries` times with backoff; any
 * other outcome is returned as it is. Once a retry was scheduled, `onRetryFinished` reports how the
 * loop ended. An abort during the backoff returns the last failure as an aborted message.
 */
export async function retryAssistantCall(produce: () => Promise<AssistantMessage>, policy: RetryPolicy | undefined, signal: AbortSignal | undefined, callbacks: RetryCallbacks = {}): Promise<AssistantMessage> {
  const maxAttempts = policy?.enabled ? policy.maxRetries : 0;
  let attempt = 0;
  for (;;) {
    const reply = await produce();
    const retried = attempt > 0;
    if (reply.stopReason !== "error") {
      if (retried) await callbacks.onRetryFinished?.(reply.stopReason !== "aborted", attempt);
      return reply;
    }
    if (attempt >= maxAttempts || !isRetryableAssistantError(reply)) {
      if (retried) await callbacks.onRetryFinished?.(false, attempt, reply.errorMessage);
      return reply;
    }
    attempt++;
    const errorMessage = reply.errorMessage || "Unknown error";
    const delayMs = retryDelayMs(policy!, attempt);
    await callbacks.onRetryScheduled?.(attempt, maxAttempts, delayMs, errorMessage);
    if (!(await cancellableSleep(delayMs, signal ?? new AbortController().signal))) {
      await callbacks.onRetryFinished?.(false, attempt, errorMessage);
      const { errorMessage: _dropped, ...rest } = reply;
      return { ...rest, stopReason: "aborted" };
    }
    await callbacks.onRetryAttemptStart?.();
  }
}

export interface DiagnosticErrorInfo {
  name?: string;
  message: string;
  stack?: string;
  code?: string | number;
}

export interface AssistantMessageDiagnostic {
  type: string;
  timestamp: number;
  error?: DiagnosticErrorInfo;
  details?: Record<string, unknown>;
}

export const formatThrownValue = (value: unknown): string => (value instanceof Error ? value.message || value.name : String(value));

export function extractDiagnosticError(error: unknown): DiagnosticErrorInfo {
  if (!(error instanceof Error)) return { name: "ThrownValue", message: formatThrownValue(error) };
  const code = (error as { code?: unknown }).code;
  return {
    name: error.name || undefined,
    message: error.message || error.name,
    stack: error.stack,
    code: typeof code === "string" || typeof code === "number" ? code : undefined,
  };
}

export const createAssistantMessageDiagnostic = (type: string, error: unknown, details?: Record<string, unknown>): AssistantMessageDiagnostic => ({
  type,
  timestamp: Date.now(),
  error: extractDiagnosticError(error),
  details,
});

/** Adds `diagnostic` to a new copy of the message's list (an earlier snapshot of the list is not changed). */
export function appendAssistantMessageDiagnostic<T extends { diagnostics?: AssistantMessageDiagnostic[] }>(message: T, diagnostic: AssistantMessageDiagnostic): void {
  message.diagnostics = [...(message.diagnostics ?? []), diagnostic];
}
