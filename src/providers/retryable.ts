/**
 * Which failed responses are worth sending again, and how long to wait first. The session
 * retries on these (after ruling out a context overflow, which compaction handles); extensions
 * get the same answer through pi-ai's `isRetryableAssistantError` and `retryDelayMs`. Spent
 * quota and billing errors are never retried: the same request fails again however long one waits.
 */
import type { AssistantMessage } from "./types.ts";

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

/** The longest wait before a retry unless the policy says otherwise: one minute. */
export const MAX_RETRY_DELAY_MS = 60_000;

/** The wait before retry `attempt` (1 for the first): `baseDelayMs * 2^(attempt-1)`, capped at `maxAgentDelayMs` (default one minute). */
export function retryDelayMs(policy: Pick<RetryPolicy, "baseDelayMs" | "maxAgentDelayMs">, attempt: number): number {
  const delay = policy.baseDelayMs * 2 ** (Math.max(1, attempt) - 1);
  return Math.min(Number.isSafeInteger(delay) ? delay : Number.MAX_SAFE_INTEGER, policy.maxAgentDelayMs ?? MAX_RETRY_DELAY_MS);
}

/** Sleep that ends early (resolving false) when `signal` aborts. */
export function cancellableSleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      signal.removeEventListener("abort", onAbort);
      resolve(ok);
    };
    const onAbort = () => done(false);
    const timer = setTimeout(() => done(true), ms);
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
