/**
 * The fetch of an HTTP server's transport: a network error or a transient status (408, 429,
 * 5xx) is retried twice, after 0.5 s and 1 s, except for `tools/call` requests, which the
 * server may have carried out already.
 */
const TRANSIENT = (status: number) => status === 408 || status === 429 || status >= 500;
const DELAYS_MS = [500, 1000];

function isToolCall(body: unknown): boolean {
  if (typeof body !== "string") return false;
  try {
    const msg = JSON.parse(body) as { method?: unknown } | { method?: unknown }[];
    return (Array.isArray(msg) ? msg : [msg]).some((m) => m?.method === "tools/call");
  } catch {
    return false;
  }
}

export function retryingFetch(base: typeof fetch = fetch, delays: readonly number[] = DELAYS_MS) {
  return async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const once = isToolCall(init?.body);
    for (let attempt = 0; ; attempt++) {
      const last = once || attempt >= delays.length || init?.signal?.aborted;
      try {
        const res = await base(input, init);
        if (last || !TRANSIENT(res.status)) return res;
        await res.body?.cancel();
      } catch (err) {
        if (last) throw err;
      }
      await Bun.sleep(delays[attempt]!);
    }
  };
}
