/**
 * pi-ai's classifiers of failed responses, its retry loop and its diagnostics records, for
 * extensions. The classifiers are the ones pion's session decides with (providers/overflow.ts,
 * providers/retryable.ts), so an extension and the session read a failure the same way.
 */
import { cancellableSleep, isRetryableAssistantError, retryDelayMs, type RetryPolicy } from "../../providers/retryable.ts";
import type { AssistantMessage } from "../../providers/types.ts";

export { getOverflowPatterns, isContextOverflow, isRecoverableLength } from "../../providers/overflow.ts";
export { isRetryableAssistantError, retryDelayMs, type RetryPolicy };

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
