/**
 * A `fetch` for a model request's HTTP call with the reference's provider hooks around it: the
 * request headers changed in place (`before_provider_headers`; a null value deletes one), the JSON
 * payload replaced by what `payload` returns (`before_provider_request`, pi-ai's `onPayload`;
 * undefined keeps it), and the response's status and headers reported before its body is read
 * (`after_provider_response`, pi-ai's `onResponse`). The session's hooks and an in-process
 * session's or a direct pi-ai call's options all go through this one.
 */
export interface ProviderHooks {
  headers?: (headers: Record<string, string | null>) => Promise<void>;
  /** Asked only when `wantsPayload` says so (default: always), so a body is parsed only for a handler. */
  payload?: (payload: unknown) => Promise<unknown>;
  wantsPayload?: () => boolean;
  response?: (response: { status: number; headers: Record<string, string> }) => Promise<void>;
}

export function hookedFetch(hooks: ProviderHooks): typeof fetch {
  return (async (input: string | URL | Request, init: RequestInit = {}) => {
    const headers: Record<string, string | null> = Object.fromEntries(new Headers(init.headers).entries());
    if (hooks.headers) await hooks.headers(headers);
    let body = init.body;
    if (typeof body === "string" && hooks.payload && (hooks.wantsPayload?.() ?? true)) {
      const replaced = await hooks.payload(JSON.parse(body));
      if (replaced !== undefined) body = JSON.stringify(replaced);
    }
    const kept = Object.fromEntries(Object.entries(headers).filter((e): e is [string, string] => e[1] !== null));
    const res = await fetch(input, { ...init, headers: kept, body });
    if (hooks.response) await hooks.response({ status: res.status, headers: Object.fromEntries(res.headers.entries()) });
    return res;
  }) as typeof fetch;
}
