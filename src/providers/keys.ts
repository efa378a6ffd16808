import { readAuthFiles, type AuthEntry, type OAuthCredential } from "../credentials/auth-file.ts";
import { isSecretName } from "../credentials/child-env.ts";
import { configValueEnvNames, resolveConfigValue, soleEnvName } from "../credentials/config-value.ts";
import type { Credential } from "../credentials/guard.ts";
import { canRefresh, COPILOT_HEADERS, isExpired, refreshStoredLogin } from "../credentials/oauth-refresh.ts";
import { AMBIENT_KEY, ambientHint, ambientProvider, ambientSource } from "./ambient.ts";
import type { Catalog } from "./catalog/load.ts";
import { authIds, BEARER_ENV, providerEnvNames } from "./env-names.ts";

type Env = Record<string, string | undefined>;

/** What a request to a provider carries: an API key, or headers that authenticate it instead. */
export interface RequestAuth {
  apiKey?: string;
  headers?: Record<string, string>;
}

export interface KeyResolver {
  /** The API key for a provider, or undefined when it has no usable auth (an expired login still counts). */
  apiKey(provider: string): string | undefined;
  /** Where the key came from: "--api-key", "auth.json", "models.json" or the environment variable's name. */
  keyOrigin(provider: string): string | undefined;
  /** The auth for one request: an expired OAuth login is refreshed first (throws when it cannot be). */
  requestAuth(provider: string, signal?: AbortSignal): Promise<RequestAuth>;
  /** Where a provider's key would be looked for, in order (for "no key" messages). */
  keySources(provider: string): string[];
  /** Every credential the configured providers read, for the credential guard. */
  credentials(): Credential[];
  /** Called with the tokens of each refreshed login, so the guard masks them too. */
  onNewCredentials(listener: (credentials: Credential[]) => void): void;
}

interface Hit {
  key?: string;
  origin?: string;
  /** Sent as `Authorization: Bearer` rather than as the API key. */
  bearer?: boolean;
  /** A stored OAuth login, and the id auth.json keeps it under. */
  login?: { credential: OAuthCredential; path: string; id: string };
}

/**
 * Where each provider's key comes from, as the reference's docs/models.md orders it:
 * `--api-key` (for `override.provider`, or every provider), auth.json (`authPaths`, the first
 * file that has the provider), the models.json `apiKey`, then the environment (the reference's
 * variable names, then the catalog's). An auth.json entry's `env` is the provider's environment
 * over the process's. Resolved once per provider and cached for the process.
 */
export function createKeyResolver(o: {
  env: Env;
  override?: { provider?: string; apiKey?: string };
  catalog: Catalog;
  /** The models.json `apiKey` of a provider, if it sets one. */
  fileKey: (provider: string) => string | undefined;
  providers: () => string[];
  /** auth.json files, first wins per provider. */
  authPaths?: readonly string[];
  /** Where a malformed auth.json is reported (stderr). */
  warn?: (line: string) => void;
}): KeyResolver {
  const { env, override, catalog } = o;
  const warn = o.warn ?? ((line: string) => void process.stderr.write(`${line}\n`));
  let stored: Map<string, AuthEntry> | undefined;
  const auth = () => (stored ??= readAuthFiles(o.authPaths ?? [], warn));
  /** The provider's auth.json entry, under its own id or the reference's. */
  const entryOf = (provider: string): (AuthEntry & { id: string }) | undefined => {
    if (auth().size === 0) return undefined;
    for (const id of authIds(provider)) {
      const entry = auth().get(id);
      if (entry) return { ...entry, id };
    }
    return undefined;
  };
  const envNames = (provider: string) => providerEnvNames(provider, catalog.has(provider) ? (catalog.env(provider) ?? []) : []);
  /** The environment a provider's values read: its auth.json `env` over the process's. */
  const providerEnv = (provider: string, entry = entryOf(provider)): Env => {
    const c = entry?.credential;
    return c?.type === "api_key" && c.env ? { ...env, ...c.env } : env;
  };

  const keyCache = new Map<string, Hit>();
  const resolveKey = (provider: string): Hit => {
    if (override?.apiKey && (!override.provider || override.provider === provider)) return { key: override.apiKey, origin: "--api-key" };
    let hit = keyCache.get(provider);
    if (hit) return hit;
    hit = findKey(provider);
    keyCache.set(provider, hit);
    return hit;
  };
  const findKey = (provider: string): Hit => {
    const entry = entryOf(provider);
    const penv = providerEnv(provider, entry);
    if (entry?.credential.type === "oauth") {
      return { key: entry.credential.access, origin: "auth.json", login: { credential: entry.credential, path: entry.path, id: entry.id } };
    }
    if (entry?.credential.type === "api_key" && entry.credential.key) {
      const key = resolveConfigValue(entry.credential.key, penv);
      if (key) return { key, origin: "auth.json" };
    }
    const spec = o.fileKey(provider);
    if (spec) return { key: resolveKeySpec(spec, penv), origin: "models.json" };
    const ambient = ambientProvider(provider);
    for (const name of keyEnvNames(provider, catalog)) {
      if (!penv[name]) continue;
      const origin = penv[name] !== env[name] ? "auth.json" : name;
      return { key: penv[name], origin, bearer: provider === "anthropic" && name === BEARER_ENV };
    }
    const source = ambient ? ambientSource(provider, penv) : undefined;
    return source ? { key: AMBIENT_KEY, origin: source } : {};
  };
  const apiKey = (provider: string) => resolveKey(provider).key;

  const listeners: ((c: Credential[]) => void)[] = [];
  const refreshing = new Map<string, Promise<Hit>>();
  const refresh = (provider: string, login: NonNullable<Hit["login"]>, signal?: AbortSignal): Promise<Hit> => {
    let pending = refreshing.get(provider);
    if (pending) return pending;
    pending = (async () => {
      if (!canRefresh(login.id)) throw new Error(loginExpired(login.id, login.path, "pion cannot refresh this provider's logins"));
      let fresh: OAuthCredential;
      try {
        fresh = await refreshStoredLogin(login.path, login.id, providerEnv(provider), signal);
      } catch (err) {
        throw new Error(loginExpired(login.id, login.path, err instanceof Error ? err.message : String(err)));
      }
      const hit: Hit = { key: fresh.access, origin: "auth.json", login: { ...login, credential: fresh } };
      keyCache.set(provider, hit);
      for (const l of listeners) l(loginCredentials(provider, fresh));
      return hit;
    })().finally(() => refreshing.delete(provider));
    refreshing.set(provider, pending);
    return pending;
  };

  const requestAuth = async (provider: string, signal?: AbortSignal): Promise<RequestAuth> => {
    let hit = resolveKey(provider);
    if (hit.login && isExpired(hit.login.credential)) hit = await refresh(provider, hit.login, signal);
    if (hit.key === undefined) return {};
    if (hit.login) return loginAuth(hit.login.id, hit.key);
    return hit.bearer ? { headers: { Authorization: `Bearer ${hit.key}` } } : { apiKey: hit.key };
  };

  const keySources = (provider: string): string[] => {
    const out = [...(o.authPaths ?? [])];
    if (o.fileKey(provider)) out.push("models.json apiKey");
    return ambientProvider(provider) ? [...out, ...ambientHint(provider)] : [...out, ...envNames(provider)];
  };

  // The guard needs every provider's key variables, not only the configured ones: the catalog
  // header has them, so no model data is read.
  const credentials = (): Credential[] => {
    const out: Credential[] = [];
    for (const pid of o.providers()) {
      const spec = o.fileKey(pid);
      for (const name of envNames(pid).filter(isSecretName)) out.push({ label: name, envNames: [name], value: env[name] });
      if (spec) out.push(specCredential(pid, spec, providerEnv(pid), () => apiKey(pid)));
    }
    for (const [pid, entry] of auth()) out.push(...storedCredentials(pid, entry, providerEnv(pid)));
    if (override?.apiKey) out.push({ label: "--api-key", envNames: [], value: override.apiKey });
    return out;
  };

  return {
    apiKey,
    keyOrigin: (provider) => resolveKey(provider).origin,
    requestAuth,
    keySources,
    credentials,
    onNewCredentials: (l) => void listeners.push(l),
  };
}

/** The variables a provider's key is read from, in order (an ambient provider's catalog variables, AWS_ACCESS_KEY_ID or GOOGLE_APPLICATION_CREDENTIALS, are not keys). */
export function keyEnvNames(provider: string, catalog: Catalog): string[] {
  const ambient = ambientProvider(provider);
  if (ambient) return ambient.replacesKeys ? [] : providerEnvNames(provider);
  return providerEnvNames(provider, catalog.has(provider) ? (catalog.env(provider) ?? []) : []);
}

/** How a login's access token goes out: as the key, or (Kimi Code) as a Bearer header; Copilot's with its editor headers. */
function loginAuth(id: string, access: string): RequestAuth {
  if (id === "kimi-coding") return { headers: { Authorization: `Bearer ${access}` } };
  if (id === "github-copilot") return { apiKey: access, headers: { ...COPILOT_HEADERS } };
  return { apiKey: access };
}

const loginExpired = (provider: string, path: string, why: string) =>
  `The ${provider} login stored in ${path} has expired and could not be refreshed (${why}). ` +
  `Log in again with the reference agent: run \`pi\`, then \`/login ${provider}\`.`;

const loginCredentials = (provider: string, c: OAuthCredential): Credential[] => [
  { label: `${provider} access token`, envNames: [], value: c.access },
  { label: `${provider} refresh token`, envNames: [], value: c.refresh },
];

/** What an auth.json entry holds: its key (resolved), the variables it reads, its `env` values, or a login's tokens. */
function storedCredentials(provider: string, entry: AuthEntry, penv: Env): Credential[] {
  const c = entry.credential;
  if (c.type === "oauth") return loginCredentials(provider, c);
  const out: Credential[] = Object.entries(c.env ?? {}).map(([name, value]) => ({ label: `${provider} auth.json ${name}`, envNames: [name], value }));
  if (c.key) {
    const label = `${provider} auth.json key`;
    out.push({ label, envNames: configValueEnvNames(c.key), value: resolveConfigValue(c.key, penv) });
  }
  return out;
}

/** What a models.json `apiKey` reads: `$VAR`, a bare variable name, `!command` (and the `$VAR`s it names), or a literal. */
function specCredential(provider: string, spec: string, env: Env, resolve: () => string | undefined): Credential {
  const sole = soleEnvName(spec);
  if (sole) return { label: sole, envNames: [sole], value: env[sole] };
  const names = configValueEnvNames(spec);
  if (names.length > 0 || spec.startsWith("!")) return { label: `${provider} apiKey`, envNames: names, value: resolve() };
  if (ENV_NAME.test(spec) && env[spec]) return { label: spec, envNames: [spec], value: env[spec] };
  return { label: `${provider} apiKey`, envNames: [], value: spec };
}

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * `apiKey` in models.json: a command's output, a `$NAME` / `${NAME}` template, a bare variable
 * name (accepted without the `$`, as earlier reference versions did), or a literal.
 */
export function resolveKeySpec(spec: string, env: Env): string | undefined {
  if (!spec.startsWith("!") && ENV_NAME.test(spec) && env[spec]) return env[spec];
  return resolveConfigValue(spec, env);
}
