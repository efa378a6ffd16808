import { join } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../util/issues.ts";
import { readJsonFile } from "../util/json-file.ts";
import type { Credential } from "../credentials/guard.ts";
import { newestModel } from "./catalog/choose.ts";
import type { ModelDef } from "./catalog/data.ts";
import { Catalog, type SourcedModel } from "./catalog/load.ts";
import { createKeyResolver } from "./keys.ts";
import type { Api, Model, ThinkingLevel } from "./types.ts";

const ApiSchema = v.picklist(["anthropic-messages", "openai-completions", "openai-responses"]);
const TierSchema = v.object({
  contextOver: v.number(),
  input: v.number(),
  output: v.number(),
  cacheRead: v.optional(v.number()),
  cacheWrite: v.optional(v.number()),
});
const CostSchema = v.object({
  input: v.optional(v.number(), 0),
  output: v.optional(v.number(), 0),
  cacheRead: v.optional(v.number(), 0),
  cacheWrite: v.optional(v.number(), 0),
  tiers: v.optional(v.array(TierSchema)),
});
const ReasoningOptionSchema = v.variant("type", [
  v.object({ type: v.literal("effort"), values: v.array(v.string()) }),
  v.object({ type: v.literal("budget_tokens"), min: v.optional(v.number()), max: v.optional(v.number()) }),
  v.object({ type: v.literal("toggle") }),
]);
const ModelDefSchema = v.object({
  id: v.pipe(v.string(), v.minLength(1)),
  name: v.optional(v.string()),
  api: v.optional(ApiSchema),
  baseUrl: v.optional(v.string()),
  family: v.optional(v.string()),
  reasoning: v.optional(v.boolean()),
  reasoningOptions: v.optional(v.array(ReasoningOptionSchema)),
  input: v.optional(v.array(v.picklist(["text", "image"]))),
  contextWindow: v.optional(v.number()),
  maxTokens: v.optional(v.number()),
  cost: v.optional(CostSchema),
  headers: v.optional(v.record(v.string(), v.string())),
  thinkingLevels: v.optional(v.array(v.picklist(["off", "minimal", "low", "medium", "high", "xhigh", "max"]))),
  releaseDate: v.optional(v.string()),
  status: v.optional(v.picklist(["deprecated", "alpha", "beta"])),
  toolCall: v.optional(v.boolean()),
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

type FileProvider = v.InferOutput<typeof ProviderSchema>;

/** Providers tried first when nothing names one: the first-party APIs, then the big routers. */
const PREFERRED = ["anthropic", "openai", "google", "openrouter", "xai", "groq", "mistral", "deepseek", "cerebras"];

export interface ModelRegistry {
  /** Provider ids: the PREFERRED catalog ones, then those models.json names, then the rest of the catalog. */
  providers(): string[];
  /** One provider's models (parses only that provider's catalog data). */
  models(provider: string): Model[];
  /** Every model of every provider: parses the whole catalog, for listings only. */
  all(): Model[];
  /** The API key for a provider, or undefined when it has no usable auth. */
  apiKey(provider: string): string | undefined;
  /** Where the key came from: "--api-key", "models.json" or the environment variable's name. */
  keyOrigin(provider: string): string | undefined;
  find(provider: string, id: string): Model | undefined;
  /** Models whose provider has usable auth. */
  available(): Model[];
  /**
   * Every credential the configured providers read, for the credential guard: the catalog's
   * env names, models.json `$VAR` / bare-name keys, the variables a `!command` key reads,
   * literal and command-resolved values, and --api-key. Resolves `!command` keys (cached).
   */
  credentials(): Credential[];
  /** The provider's API and base URL, for a model the catalog does not list yet. */
  providerDefaults(provider: string): { api: Api; baseUrl: string; headers?: Record<string, string> } | undefined;
}

/**
 * The model catalog (built-in, refreshed) merged with `$PION_HOME/models.json` (the reference's
 * schema): models.json sets a provider's baseUrl, api, apiKey and headers, adds or replaces
 * models (`models`) and changes fields of listed ones (`modelOverrides`). Catalog data is read
 * on first use and per provider, so start-up pays only for what it touches.
 * `override.apiKey` (from --api-key) applies to `override.provider`, or to every provider.
 */
export { resolveKeySpec } from "./keys.ts";

/**
 * A provider found at run time (a llama.cpp server's model list): it stands where a catalog
 * provider would, so models.json can still move it or change its models. `apiKey` is literal;
 * without one the provider needs no key.
 */
export interface ExtraProvider {
  id: string;
  api: Exclude<Api, "scripted" | "pi-virtual">;
  baseUrl: string;
  apiKey?: string;
  headers?: Record<string, string>;
  models: ModelDef[];
}

export function loadModels(
  home: string,
  env: Record<string, string | undefined>,
  override?: { provider?: string; apiKey?: string },
  catalog: Catalog = new Catalog(home),
  opts: { extraProviders?: readonly ExtraProvider[] } = {},
): ModelRegistry {
  const extras = new Map((opts.extraProviders ?? []).map((x) => [x.id, x]));
  const file = join(home, "models.json");
  const fileProviders = new Map<string, FileProvider>();
  const raw = readJsonFile(file);
  if (raw !== undefined) {
    const parsed = v.safeParse(ModelsFileSchema, raw);
    if (!parsed.success) throw new Error(`Invalid models in ${file}: ${describeIssues(parsed.issues)}`);
    for (const [pid, p] of Object.entries(parsed.output.providers)) {
      // Overrides alone may name a provider found at run time (llama.cpp), present or not.
      if (!p.baseUrl && !catalog.has(pid) && !extras.has(pid) && p.models?.length) throw new Error(`Invalid models in ${file}: provider "${pid}" needs a baseUrl`);
      fileProviders.set(pid, p);
    }
  }

  const built = new Map<string, Model[]>();
  const models = (provider: string): Model[] => {
    let list = built.get(provider);
    if (list) return list;
    const fp = fileProviders.get(provider);
    const cat = providerSource(provider);
    list = [];
    if (fp || cat) {
      const def = { id: provider, api: fp?.api ?? cat?.api ?? "openai-completions", baseUrl: fp?.baseUrl ?? cat?.baseUrl ?? "", headers: fp?.headers ?? cat?.headers };
      let defs: MaybeSourced[] = cat?.models ?? [];
      // A models.json baseUrl moves the whole provider (a proxy, a test server), including the
      // catalog models that have an endpoint of their own.
      if (fp?.baseUrl) defs = defs.map((m) => (m.baseUrl ? { ...m, baseUrl: undefined } : m));
      if (fp?.models) {
        const extra = fp.models;
        defs = [...defs.filter((m) => !extra.some((e) => e.id === m.id)), ...extra.map((m) => ({ ...m, source: "models.json" as const }))];
      }
      const overrides = fp?.modelOverrides;
      if (overrides) {
        defs = defs.map((m) => (Object.hasOwn(overrides, m.id) ? { ...m, ...stripUndefined(overrides[m.id]!), source: "models.json" as const } : m));
      }
      list = defs.map((m) => toModel(def, m));
    }
    built.set(provider, list);
    return list;
  };

  let ids: string[] | undefined;
  const providers = (): string[] => {
    if (ids) return ids;
    const fromCatalog = catalog.ids();
    const preferred = PREFERRED.filter((p) => fromCatalog.includes(p));
    ids = [...new Set([...preferred, ...fileProviders.keys(), ...extras.keys(), ...fromCatalog])];
    return ids;
  };

  const keys = createKeyResolver({ env, override, catalog, fileKey: (pid) => fileProviders.get(pid)?.apiKey, providers });
  // A run-time provider without a key needs none: it is usable all the same (the SDK sends the placeholder).
  const extraKey = (p: string) => (fileProviders.get(p)?.apiKey || (override?.apiKey && (!override.provider || override.provider === p)) || !extras.has(p) ? undefined : (extras.get(p)!.apiKey ?? "none"));
  const apiKey = (p: string) => extraKey(p) ?? keys.apiKey(p);

  return {
    providers,
    models,
    all: () => providers().flatMap(models),
    apiKey,
    keyOrigin: (p) => (extraKey(p) !== undefined ? "discovered" : keys.keyOrigin(p)),
    find: (provider, id) => models(provider).find((m) => m.id === id),
    available: () => providers().filter((p) => apiKey(p) !== undefined).flatMap(models),
    credentials: () => [
      ...keys.credentials(),
      ...[...extras.values()].flatMap((x) => (x.apiKey ? [{ label: `${x.id} apiKey`, envNames: [], value: x.apiKey }] : [])),
    ],
    providerDefaults: (provider) => {
      const fp = fileProviders.get(provider);
      const cat = providerSource(provider);
      if (!fp && !cat) return undefined;
      const out: { api: Api; baseUrl: string; headers?: Record<string, string> } = {
        api: fp?.api ?? cat?.api ?? "openai-completions",
        baseUrl: fp?.baseUrl ?? cat?.baseUrl ?? "",
      };
      const headers = fp?.headers ?? cat?.headers;
      if (headers) out.headers = headers;
      return out;
    },
  };

  /** A run-time provider, else the catalog's. */
  function providerSource(provider: string): { api: Api; baseUrl: string; headers?: Record<string, string>; models: MaybeSourced[] } | undefined {
    const x = extras.get(provider);
    if (x) return x;
    return catalog.has(provider) ? catalog.provider(provider) : undefined;
  }
}

/** A discovered model has no catalog source. */
type MaybeSourced = ModelDef & { source?: SourcedModel["source"] };

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as Partial<T>;
}

type ProviderBase = { id: string; api: Api; baseUrl: string; headers?: Record<string, string> };

/** A ModelDef with the provider's defaults filled in; optional fields only where the data has them. */
export function toModel(p: ProviderBase, m: ModelDef & { source?: Model["source"] }): Model {
  const { tiers, ...prices } = m.cost ?? {};
  const model: Model = {
    id: m.id,
    name: m.name ?? m.id,
    api: (m.api ?? p.api) as Api,
    provider: p.id,
    baseUrl: m.baseUrl ?? p.baseUrl,
    reasoning: m.reasoning ?? false,
    input: m.input ?? ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, ...prices },
    contextWindow: m.contextWindow ?? 128000,
    maxTokens: m.maxTokens ?? 16384,
  };
  if (tiers && tiers.length > 0) model.cost.tiers = tiers;
  const headers = { ...p.headers, ...m.headers };
  if (Object.keys(headers).length > 0) model.headers = headers;
  if (m.thinkingLevels) model.thinkingLevels = m.thinkingLevels;
  if (m.reasoningOptions) model.reasoningOptions = m.reasoningOptions;
  if (m.family) model.family = m.family;
  if (m.releaseDate) model.releaseDate = m.releaseDate;
  if (m.status) model.status = m.status;
  if (m.toolCall === false) model.toolCall = false;
  if (m.source) model.source = m.source;
  return model;
}

const LEVELS: readonly string[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** `pattern` without a trailing `:level`, and that level. */
export function splitThinkingSuffix(pattern: string): { pattern: string; thinkingLevel?: ThinkingLevel } {
  const colon = pattern.lastIndexOf(":");
  if (colon > 0 && LEVELS.includes(pattern.slice(colon + 1))) {
    return { pattern: pattern.slice(0, colon), thinkingLevel: pattern.slice(colon + 1) as ThinkingLevel };
  }
  return { pattern };
}

/**
 * Resolve `--model` / `--provider`: `provider/id`, an exact id or name, or a fuzzy
 * substring (the newest current model matching it); an optional `:level` suffix sets the
 * thinking level.
 */
export function resolveModel(
  models: readonly Model[],
  pattern: string,
  provider?: string,
): { model: Model; thinkingLevel?: ThinkingLevel } | undefined {
  const split = splitThinkingSuffix(pattern);
  let pat = split.pattern;
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
  // A fuzzy pattern ("haiku") means the newest current model it matches, not the first listed,
  // of the first provider (in the pool's order) that has one.
  const fuzzy = (pick: (m: Model) => boolean) => {
    const hits = pool.filter(pick);
    return hits.length > 0 ? newestModel(hits.filter((m) => m.provider === hits[0]!.provider)) : undefined;
  };
  const model =
    pool.find((m) => m.id === pat) ??
    pool.find((m) => m.id.toLowerCase() === lower || m.name.toLowerCase() === lower) ??
    // A router's id for it: "gpt-5.2" is OpenRouter's "openai/gpt-5.2".
    pool.find((m) => m.id.toLowerCase().endsWith(`/${lower}`)) ??
    fuzzy((m) => m.id.toLowerCase().includes(lower)) ??
    fuzzy((m) => m.name.toLowerCase().includes(lower));
  return model ? { model, thinkingLevel: split.thinkingLevel } : undefined;
}
