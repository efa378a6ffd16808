/**
 * Refreshing the OAuth logins the reference agent stored in auth.json, for the providers whose
 * token endpoint is public: a refresh-token grant (Anthropic, OpenAI Codex, xAI, Kimi Code) or
 * GitHub Copilot's token exchange. Same endpoint, client id and body as the reference, and the
 * same `expires` arithmetic, so either agent can use what the other wrote. A provider's
 * endpoint can be pointed elsewhere (a test server, a proxy) with `PION_OAUTH_TOKEN_URL_<PROVIDER>`
 * (the auth.json id upper-cased, `-` as `_`).
 */
import { readFileSync } from "node:fs";
import { parseCredential, type OAuthCredential } from "./auth-file.ts";
import { withFileLock, writeFileAtomic } from "./file-lock.ts";

type Env = Record<string, string | undefined>;

interface RefreshSpec {
  url: string | ((env: Env) => string);
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

/** Keyed by auth.json id (the reference's provider id). */
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
  // The reference's own host override, read from the provider's environment as it does.
  "kimi-coding": {
    url: (env) => `${(env.KIMI_CODE_OAUTH_HOST || env.KIMI_OAUTH_HOST || "https://auth.kimi.com").replace(/\/+$/, "")}/api/oauth/token`,
    clientId: "17e5f671-d194-4dfb-9706-5516cb48c098",
    skewMs: 0,
  },
};

/** What Copilot's API wants to see with its tokens, as the reference sends it. */
export const COPILOT_HEADERS: Readonly<Record<string, string>> = {
  "User-Agent": "GitHubCopilotChat/0.35.0",
  "Editor-Version": "vscode/1.107.0",
  "Editor-Plugin-Version": "copilot-chat/0.35.0",
  "Copilot-Integration-Id": "vscode-chat",
};

/** A token is refreshed this long before it expires, so a request never starts with a dying one. */
export const EXPIRY_MARGIN_MS = 30_000;

export const isExpired = (c: OAuthCredential, now = Date.now()): boolean => now >= c.expires - EXPIRY_MARGIN_MS;

export const canRefresh = (provider: string): boolean => Object.hasOwn(SPECS, provider) || provider === "github-copilot";

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
  if (provider === "github-copilot") return exchangeCopilotToken(cred, env, signal);
  const spec = SPECS[provider];
  if (!spec) throw new Error(`pion cannot refresh ${provider} logins`);
  const url = env[tokenUrlVariable(provider)] || (typeof spec.url === "string" ? spec.url : spec.url(env));
  const fields = { grant_type: "refresh_token", client_id: spec.clientId, refresh_token: cred.refresh };
  const body = await fetchJson(
    url,
    {
      method: "POST",
      headers: { "Content-Type": spec.json ? "application/json" : "application/x-www-form-urlencoded", Accept: "application/json" },
      body: spec.json ? JSON.stringify(fields) : new URLSearchParams(fields),
    },
    signal,
  );
  const access = body.access_token;
  // A server that does not rotate the refresh token may leave it out.
  const refresh = body.refresh_token ?? cred.refresh;
  const lifetime = body.expires_in ?? spec.defaultLifetimeS;
  if (typeof access !== "string" || !access || typeof refresh !== "string" || typeof lifetime !== "number" || !(lifetime > 0)) {
    throw new Error(`token refresh at ${url} answered without access_token, refresh_token or expires_in`);
  }
  return { ...cred, access, refresh, expires: Date.now() + lifetime * 1000 - spec.skewMs, ...spec.extras?.(access), type: "oauth" };
}

/** The JSON object an endpoint answers; throws a one-line message for anything else. */
async function fetchJson(url: string, init: RequestInit, signal?: AbortSignal): Promise<Record<string, unknown>> {
  const timeout = AbortSignal.timeout(30_000);
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
  } catch (err) {
    throw new Error(`token refresh at ${url} failed: ${err instanceof Error ? err.message : String(err)}`);
  }
  const text = await res.text().catch(() => "");
  if (!res.ok) throw new Error(`token refresh at ${url} failed: HTTP ${res.status}${text ? ` ${text.slice(0, 200)}` : ""}`);
  try {
    const body: unknown = JSON.parse(text);
    if (typeof body === "object" && body !== null) return body as Record<string, unknown>;
  } catch {
    // reported below
  }
  throw new Error(`token refresh at ${url} answered something other than a JSON object`);
}

/**
 * GitHub Copilot: the stored `refresh` is the GitHub login, exchanged for a short-lived Copilot
 * token at the (enterprise) GitHub API. `enterpriseUrl` and the rest of the entry are kept.
 */
async function exchangeCopilotToken(cred: OAuthCredential, env: Env, signal?: AbortSignal): Promise<OAuthCredential> {
  const domain = typeof cred.enterpriseUrl === "string" && cred.enterpriseUrl ? hostOf(cred.enterpriseUrl) : "github.com";
  const url = env[tokenUrlVariable("github-copilot")] || `https://api.${domain}/copilot_internal/v2/token`;
  const body = await fetchJson(url, { headers: { Accept: "application/json", Authorization: `Bearer ${cred.refresh}`, ...COPILOT_HEADERS } }, signal);
  if (typeof body.token !== "string" || typeof body.expires_at !== "number") throw new Error(`token exchange at ${url} answered without token or expires_at`);
  return { ...cred, access: body.token, expires: body.expires_at * 1000 - FIVE_MIN, type: "oauth" };
}

const hostOf = (value: string): string => {
  try {
    return new URL(value.includes("://") ? value : `https://${value}`).hostname;
  } catch {
    return value.trim();
  }
};

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
