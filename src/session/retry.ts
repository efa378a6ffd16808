/** Retry policy for failed model calls: which errors are transient, and the backoff. */

export interface RetrySettings {
  enabled: boolean;
  maxRetries: number;
  baseDelayMs: number;
}

const TRANSIENT_TEXT =
  /overloaded|rate.?limit|too many requests|timed? ?out|timeout|ECONNRESET|ECONNREFUSED|EPIPE|socket|connection|network|terminated|fetch failed|stream ended|service unavailable|bad gateway|internal server error|temporarily/i;

/**
 * True for 429, 5xx and 529 overloaded, dropped connections, streams that ended early and
 * idle timeouts. Errors with another 4xx status (400, 401, 403, 404, ...) are not retried.
 */
export function isTransientError(message: string | undefined): boolean {
  if (!message) return false;
  const status = /^(\d{3})\b/.exec(message.trim())?.[1];
  if (status) {
    const code = Number(status);
    return code === 408 || code === 409 || code === 429 || code >= 500;
  }
  return TRANSIENT_TEXT.test(message);
}

export const retryDelay = (attempt: number, baseDelayMs: number): number => baseDelayMs * 2 ** (attempt - 1);

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
