/**
 * Refreshing the OAuth logins the reference agent stored in auth.json, for the providers whose
 * token endpoint takes a plain refresh-token POST: the same endpoint, client id and body as the
 * reference, and the same `expires` arithmetic, so either agent can use what the other wrote.
 * A provider's endpoint can be pointed elsewhere (a test server, a proxy) with
 * `PION_OAUTH_TOKEN_URL_<PROVIDER>` (the id upper-cased, `-` as `_`).
 */
import { readFileSync } from "node:fs";
import { parseCredential, type OAuthCredential } from "./auth-file.ts";
import { withFileLock, writeFileAtomic } from "./file-lock.ts";

type Env = Record<string, string | undefined>;

interface RefreshSpec {
  url: string;
  clientId: string;
  /** The body as JSON (Anthropic) or as a form (the others). */
  json?: boolean;
  /** Taken off the lifetime the server reports, so a token is not used in its last minutes. */
  skewMs: number;
  /** The lifetime when the server does not say. */
  defaultLifetimeS?: number;
  /** Fields beside the tokens that the reference stores for this provider. */
  extras?: (access: string) => Record<string, unknown>;
}

const FIVE_MIN = 5 * 60 * 1000;

const SPECS: Record<string, RefreshSpec> = {
  anthropic: { url: "https://platform.claude.com/v1/oauth/token", clientId: "9d1c250a-e61b-44d9-88ed-5944d1962f5e", json: true, skewMs: FIVE_MIN },
  "openai-codex": {
    url: "https://auth.openai.com/oauth/token",
    clientId: "app_EMoamEEZ73f0CkXaXp7hrann",
    skewMs: 0,
    extras: (access) => {
      const accountId = chatgptAccountId(access);
      if (!accountId) throw new Error("the refreshed token names no ChatGPT account");
      return { accountId };
    },
  },
  xai: { url: "https://auth.x.ai/oauth2/token", clientId: "b1a00492-073a-47ea-816f-4c329264a828", skewMs: FIVE_MIN, defaultLifetimeS: 3600 },
};

/** A token is refreshed this long before it expires, so a request never starts with a dying one. */
export const EXPIRY_MARGIN_MS = 30_000;

export const isExpired = (c: OAuthCredential, now = Date.now()): boolean => now >= c.expires - EXPIRY_MARGIN_MS;

export const canRefresh = (provider: string): boolean => Object.hasOwn(SPECS, provider);

export const tokenUrlVariable = (provider: string): string => `PION_OAUTH_TOKEN_URL_${provider.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;

/** The ChatGPT account id in an OpenAI access token (a JWT), if it names one. */
export function chatgptAccountId(access: string): string | undefined {
  try {
    const payload = JSON.parse(Buffer.from(access.split(".")[1] ?? "", "base64url").toString("utf8")) as Record<string, unknown>;
    const auth = payload["https://api.openai.com/auth"] as Record<string, unknown> | undefined;
    const id = auth?.chatgpt_account_id;
    return typeof id === "string" && id ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The credential after a refresh: new tokens and expiry, the stored extras kept, the
 * provider's own extras recomputed. Throws a one-line message on any failure.
 */
export async function refreshOAuth(provider: string, cred: OAuthCredential, env: Env, signal?: AbortSignal): Promise<OAuthCredential> {
  const spec = SPECS[provider];
  if (!spec) throw new Error(`pion cannot refresh ${provider} logins`);
  const url = env[tokenUrlVariable(provider)] || spec.url;
  const fields = { grant_type: "refresh_token", client_id: spec.clientId, refresh_token: cred.refresh };
  const timeout = AbortSignal.timeout(30_000);
  let res: Response;
  try {
    res = await fetch(url, {
      method: "POST",
      headers: spec.json
        ? { "Content-Type": "application/json", Accept: "application/json" }
        : { "Content-Type": "application/x-www-form-urlencoded", Accept: "application/json" },
      body: spec.json ? JSON.stringify(fields) : new URLSearchParams(fields),
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    throw new Error(`token refresh at ${url} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text().catch(() => "");
  if (!res.ok) throw new Error(`token refresh at ${url} failed: HTTP ${res.status}${text ? ` ${text.slice(0, 200)}` : ""}`);
  let body: Record<string, unknown>;
  try {
    body = JSON.parse(text) as Record<string, unknown>;
  } catch {
    throw new Error(`token refresh at ${url} answered something other than JSON`);
  }
  const access = body.access_token;
  // A server that does not rotate the refresh token may leave it out.
  const refresh = body.refresh_token ?? cred.refresh;
  const lifetime = body.expires_in ?? spec.defaultLifetimeS;
  if (typeof access !== "string" || !access || typeof refresh !== "string" || typeof lifetime !== "number" || !(lifetime > 0)) {
    throw new Error(`token refresh at ${url} answered without access_token, refresh_token or expires_in`);
  }
  return { ...cred, access, refresh, expires: Date.now() + lifetime * 1000 - spec.skewMs, ...spec.extras?.(access), type: "oauth" };
}

/**
 * Refresh `provider`'s login in the auth.json at `path`, holding the file's lock as the
 * reference does. The file is read again under the lock first: when another process (a
 * reference agent) refreshed meanwhile, its tokens are used and nothing is sent. Every other
 * entry of the file is written back as it was.
 */
export async function refreshStoredLogin(path: string, provider: string, env: Env, signal?: AbortSignal): Promise<OAuthCredential> {
  return withFileLock(path, async () => {
    const raw = JSON.parse(readFileSync(path, "utf8").replace(/^\uFEFF/, "")) as Record<string, unknown>;
    const current = parseCredential(raw[provider]);
    if (typeof current === "string" || current.type !== "oauth") throw new Error(`the login was removed from ${path}`);
    if (!isExpired(current)) return current;
    const fresh = await refreshOAuth(provider, current, env, signal);
    writeFileAtomic(path, JSON.stringify({ ...raw, [provider]: fresh }, null, 2));
    return fresh;
  });
}
