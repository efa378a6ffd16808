import { join } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../util/issues.ts";
import { readJsonFile } from "../util/json-file.ts";
import { isSecretName } from "../credentials/child-env.ts";
import type { Credential } from "../credentials/guard.ts";
import { BUILTIN_PROVIDERS, type ProviderDef } from "./catalog.ts";
import type { Api, Model, ThinkingLevel } from "./types.ts";

const ApiSchema = v.picklist(["anthropic-messages", "openai-completions", "openai-responses"]);
const CostSchema = v.object({
  input: v.optional(v.number(), 0),
  output: v.optional(v.number(), 0),
  cacheRead: v.optional(v.number(), 0),
  cacheWrite: v.optional(v.number(), 0),
});
const ModelDefSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  name: v.optional(v.string()),
  api: v.optional(ApiSchema),
  baseUrl: v.optional(v.string()),
  reasoning: v.optional(v.boolean()),
  input: v.optional(v.array(v.picklist(["text", "image"]))),
  contextWindow: v.optional(v.number()),
  maxTokens: v.optional(v.number()),
  cost: v.optional(CostSchema),
  headers: v.optional(v.record(v.string(), v.string())),
  thinkingLevels: v.optional(v.array(v.picklist(["off", "minimal", "low", "medium", "high", "xhigh", "max"]))),
});
const ProviderSchema = v.object({
  baseUrl: v.optional(v.string()),
  api: v.optional(ApiSchema),
  apiKey: v.optional(v.string()),
  headers: v.optional(v.record(v.string(), v.string())),
  models: v.optional(v.array(ModelDefSchema)),
  modelOverrides: v.optional(v.record(v.string(), v.partial(ModelDefSchema))),
});
const ModelsFileSchema = v.object({ providers: v.optional(v.record(v.string(), ProviderSchema), {}) });

type ModelDef = v.InferOutput<typeof ModelDefSchema>;

export interface ModelRegistry {
  all: Model[];
  /** The API key for a provider, or undefined when it has no usable auth. */
  apiKey(provider: string): string | undefined;
  find(provider: string, id: string): Model | undefined;
  /** Models whose provider has usable auth. */
  available(): Model[];
  /**
   * Every credential the configured providers read, for the credential guard: the catalog's
   * env names, models.json `$VAR` / bare-name keys, the variables a `!command` key reads,
   * literal and command-resolved values, and --api-key. Resolves `!command` keys (cached).
   */
  credentials(): Credential[];
}

interface ProviderEntry {
  def: ProviderDef;
  apiKeySpec?: string;
}

/**
 * The built-in catalog merged with `$PION_HOME/models.json` (the reference's schema).
 * `overrideKey` (from --api-key) applies to `keyProvider`.
 */
export function loadModels(
  home: string,
  env: Record<string, string | undefined>,
  override?: { provider?: string; apiKey?: string },
): ModelRegistry {
  const providers = new Map<string, ProviderEntry>();
  for (const def of BUILTIN_PROVIDERS) providers.set(def.id, { def: { ...def, models: [...def.models] } });

  const file = join(home, "models.json");
  const raw = readJsonFile(file);
  if (raw !== undefined) {
    const parsed = v.safeParse(ModelsFileSchema, raw);
    if (!parsed.success) throw new Error(`Invalid models in ${file}: ${describeIssues(parsed.issues)}`);
    for (const [pid, p] of Object.entries(parsed.output.providers)) {
      const prev = providers.get(pid);
      const base: ProviderDef = prev?.def ?? { id: pid, api: p.api ?? "openai-completions", baseUrl: p.baseUrl ?? "", models: [] };
      const def: ProviderDef = {
        ...base,
        api: p.api ?? base.api,
        baseUrl: p.baseUrl ?? base.baseUrl,
        headers: { ...base.headers, ...p.headers },
        models: p.models ? mergeModels(base.models, p.models) : base.models,
      };
      if (p.modelOverrides) {
        def.models = def.models.map((m) => (p.modelOverrides?.[m.id] ? { ...m, ...stripUndefined(p.modelOverrides[m.id]!) } : m));
      }
      if (!def.baseUrl) throw new Error(`Invalid models in ${file}: provider "${pid}" needs a baseUrl`);
      providers.set(pid, { def, apiKeySpec: p.apiKey ?? prev?.apiKeySpec });
    }
  }

  const all: Model[] = [];
  for (const { def } of providers.values()) {
    for (const m of def.models) all.push(toModel(def, m));
  }

  const keyCache = new Map<string, string | undefined>();
  const apiKey = (provider: string): string | undefined => {
    if (override?.apiKey && (!override.provider || override.provider === provider)) return override.apiKey;
    if (keyCache.has(provider)) return keyCache.get(provider);
    const entry = providers.get(provider);
    let key: string | undefined;
    if (entry?.apiKeySpec) key = resolveKeySpec(entry.apiKeySpec, env);
    else if (entry?.def.envKey) key = env[entry.def.envKey] || undefined;
    else if (entry?.def.keyless) key = "none";
    keyCache.set(provider, key);
    return key;
  };

  const credentials = (): Credential[] => {
    const out: Credential[] = [];
    for (const [pid, { def, apiKeySpec }] of providers) {
      for (const name of providerEnvNames(def)) out.push({ label: name, envNames: [name], value: env[name] });
      if (apiKeySpec) out.push(specCredential(pid, apiKeySpec, env, () => apiKey(pid)));
    }
    if (override?.apiKey) out.push({ label: "--api-key", envNames: [], value: override.apiKey });
    return out;
  };

  return {
    all,
    apiKey,
    find: (provider, id) => all.find((m) => m.provider === provider && m.id === id),
    available: () => all.filter((m) => apiKey(m.provider) !== undefined),
    credentials,
  };
}

/**
 * The variables a catalog provider reads its key from: of its env names, those naming a secret
 * (models.dev lists region, project and endpoint variables beside the keys).
 */
function providerEnvNames(def: ProviderDef): string[] {
  return (def.envKey ? [def.envKey] : []).filter(isSecretName);
}

/** What a models.json `apiKey` reads: `$VAR`, a bare variable name, `!command` (and the `$VAR`s it names), or a literal. */
function specCredential(provider: string, spec: string, env: Record<string, string | undefined>, resolve: () => string | undefined): Credential {
  if (spec.startsWith("$")) return { label: spec.slice(1), envNames: [spec.slice(1)], value: env[spec.slice(1)] };
  if (spec.startsWith("!")) {
    const names = [...spec.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => m[1]!);
    return { label: `${provider} apiKey`, envNames: names, value: resolve() };
  }
  if (ENV_NAME.test(spec) && env[spec]) return { label: spec, envNames: [spec], value: env[spec] };
  return { label: `${provider} apiKey`, envNames: [], value: spec };
}

const ENV_NAME = /^[A-Z][A-Z0-9_]*$/;

function mergeModels(base: ModelDef[], extra: ModelDef[]): ModelDef[] {
  const out = base.filter((m) => !extra.some((e) => e.id === m.id));
  return [...out, ...extra];
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as Partial<T>;
}

function toModel(p: ProviderDef, m: ModelDef): Model {
  const model: Model = {
    id: m.id,
    name: m.name ?? m.id,
    api: (m.api ?? p.api) as Api,
    provider: p.id,
    baseUrl: m.baseUrl ?? p.baseUrl,
    reasoning: m.reasoning ?? false,
    input: m.input ?? ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...m.cost },
    contextWindow: m.contextWindow ?? 128000,
    maxTokens: m.maxTokens ?? 16384,
  };
  const headers = { ...p.headers, ...m.headers };
  if (Object.keys(headers).length > 0) model.headers = headers;
  if (m.thinkingLevels) model.thinkingLevels = m.thinkingLevels;
  return model;
}

/** `apiKey` in models.json: a literal, `$ENV_VAR`, or `!shell command` whose stdout is the key. */
export function resolveKeySpec(spec: string, env: Record<string, string | undefined>): string | undefined {
  if (spec.startsWith("$")) return env[spec.slice(1)] || undefined;
  if (spec.startsWith("!")) {
    const out = Bun.spawnSync(["sh", "-c", spec.slice(1)], { stdout: "pipe", stderr: "ignore", env: env as Record<string, string> });
    const key = out.stdout.toString().trim();
    return out.exitCode === 0 && key ? key : undefined;
  }
  // Environment variable names are accepted without the $, as the reference does.
  if (ENV_NAME.test(spec) && env[spec]) return env[spec];
  return spec;
}

/**
 * Resolve `--model` / `--provider`: `provider/id`, an exact id or name, or a fuzzy
 * substring; an optional `:level` suffix sets the thinking level.
 */
export function resolveModel(
  models: readonly Model[],
  pattern: string,
  provider?: string,
): { model: Model; thinkingLevel?: ThinkingLevel } | undefined {
  let pat = pattern;
  let thinkingLevel: ThinkingLevel | undefined;
  const colon = pat.lastIndexOf(":");
  if (colon > 0) {
    const lvl = pat.slice(colon + 1);
    if (["off", "minimal", "low", "medium", "high", "xhigh", "max"].includes(lvl)) {
      thinkingLevel = lvl as ThinkingLevel;
      pat = pat.slice(0, colon);
    }
  }
  let pool = provider ? models.filter((m) => m.provider === provider) : [...models];
  const slash = pat.indexOf("/");
  if (!provider && slash > 0) {
    const p = pat.slice(0, slash);
    const byProvider = models.filter((m) => m.provider === p);
    if (byProvider.length > 0) {
      pool = byProvider;
      pat = pat.slice(slash + 1);
    }
  }
  const lower = pat.toLowerCase();
  const model =
    pool.find((m) => m.id === pat) ??
    pool.find((m) => m.id.toLowerCase() === lower || m.name.toLowerCase() === lower) ??
    pool.find((m) => m.id.toLowerCase().includes(lower)) ??
    pool.find((m) => m.name.toLowerCase().includes(lower));
  return model ? { model, thinkingLevel } : undefined;
}
