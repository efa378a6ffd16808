import { isSecretName } from "../credentials/child-env.ts";
import type { Credential } from "../credentials/guard.ts";
import type { Catalog } from "./catalog/load.ts";
import { configValueEnvNames, resolveConfigValue, soleEnvName } from "../credentials/config-value.ts";

type Env = Record<string, string | undefined>;

export interface KeyResolver {
  /** The API key for a provider, or undefined when it has no usable auth. */
  apiKey(provider: string): string | undefined;
  /** Where the key came from: "--api-key", "models.json" or the environment variable's name. */
  keyOrigin(provider: string): string | undefined;
  /** Every credential the configured providers read, for the credential guard. */
  credentials(): Credential[];
}

/**
 * Where each provider's key comes from: `--api-key` (for `override.provider`, or every
 * provider), the models.json `apiKey`, then the catalog's environment variables. Resolved once
 * per provider and cached for the process.
 */
export function createKeyResolver(o: {
  env: Env;
  override?: { provider?: string; apiKey?: string };
  catalog: Catalog;
  /** The models.json `apiKey` of a provider, if it sets one. */
  fileKey: (provider: string) => string | undefined;
  providers: () => string[];
}): KeyResolver {
  const { env, override, catalog } = o;
  const keyCache = new Map<string, { key?: string; origin?: string }>();
  const resolveKey = (provider: string): { key?: string; origin?: string } => {
    if (override?.apiKey && (!override.provider || override.provider === provider)) return { key: override.apiKey, origin: "--api-key" };
    let hit = keyCache.get(provider);
    if (hit) return hit;
    const spec = o.fileKey(provider);
    hit = {};
    if (spec) hit = { key: resolveKeySpec(spec, env), origin: "models.json" };
    else {
      for (const name of catalog.has(provider) ? (catalog.env(provider) ?? []) : []) {
        if (env[name]) {
          hit = { key: env[name], origin: name };
          break;
        }
      }
    }
    keyCache.set(provider, hit);
    return hit;
  };
  const apiKey = (provider: string) => resolveKey(provider).key;

  // The guard needs every provider's key variables, not only the configured ones: the catalog
  // header has them, so no model data is read.
  const credentials = (): Credential[] => {
    const out: Credential[] = [];
    for (const pid of o.providers()) {
      const spec = o.fileKey(pid);
      for (const name of (catalog.has(pid) ? (catalog.env(pid) ?? []) : []).filter(isSecretName)) {
        out.push({ label: name, envNames: [name], value: env[name] });
      }
      if (spec) out.push(specCredential(pid, spec, env, () => apiKey(pid)));
    }
    if (override?.apiKey) out.push({ label: "--api-key", envNames: [], value: override.apiKey });
    return out;
  };

  return { apiKey, keyOrigin: (provider) => resolveKey(provider).origin, credentials };
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
