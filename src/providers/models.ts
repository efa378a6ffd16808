import { filesIn, userConfigDirs } from "../config-dirs.ts";
import type { Credential } from "../credentials/guard.ts";
import { log } from "../util/log.ts";
import { Catalog } from "./catalog/load.ts";
import { createKeyResolver, type KeyResolver } from "./keys.ts";
import { applyOverride, headerCredentials, readModelsFiles, resolveHeaders, type ExtraProvider, type FileModel, type FileProvider, type Warn } from "./models-file.ts";
import { mergeCompat, type Compat } from "./compat.ts";
import type { Api, Model, ThinkingLevel } from "./types.ts";

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
  /** Where the key came from: "--api-key", "auth.json", "models.json" or the environment variable's name. */
  keyOrigin(provider: string): string | undefined;
  /** The auth for one request (refreshes an expired auth.json login; throws when it cannot). */
  requestAuth: KeyResolver["requestAuth"];
  /** Where a provider's key is looked for, in order. */
  keySources: KeyResolver["keySources"];
  /** Tokens learned later (a refreshed login), for the credential guard. */
  onNewCredentials: KeyResolver["onNewCredentials"];
  find(provider: string, id: string): Model | undefined;
  /** Models whose provider has usable auth. */
  available(): Model[];
  /**
   * Every credential the configured providers read, for the credential guard: the catalog's
   * env names, models.json `$VAR` / bare-name keys, the variables a `!command` key reads,
   * literal and command-resolved values, --api-key, and models.json header values read from a
   * variable or a command. Resolves `!command` keys (cached).
   */
  credentials(): Credential[];
  /** The merged models.json providers (for the credential guard: see headerCredentials). */
  fileProviders?(): ReadonlyMap<string, FileProvider>;
  /** The provider's API and base URL, for a model the catalog does not list yet. */
  providerDefaults(provider: string): { api: Api; baseUrl: string; headers?: Record<string, string> } | undefined;
}

export interface LoadOptions {
  catalog?: Catalog;
  /** models.json files, the first winning on a conflict. Default: pion's home's, then the reference's agent folder's. */
  paths?: readonly string[];
  /** Providers found at run time (a llama.cpp server), below every file. */
  extraProviders?: readonly ExtraProvider[];
  /** Where warnings about the files go. Default: stderr. */
  warn?: Warn;
  /** auth.json files, the first winning per provider. Default: pion's home's, then the reference's agent folder's. */
  authPaths?: readonly string[];
}

export { resolveKeySpec } from "./keys.ts";

/** `name` in pion's home and then in the reference's agent folder (config-dirs.ts lists them the other way round). */
const userFiles = (home: string, env: Record<string, string | undefined>, name: string): string[] => filesIn(userConfigDirs(home, env), name).reverse();
export type { ExtraProvider } from "./models-file.ts";

/**
 * The model catalog (built-in, refreshed) merged with models.json (the reference's schema, see
 * models-file.ts): models.json sets a provider's baseUrl, api, apiKey, headers and compat, adds or
 * replaces models (`models`) and changes fields of listed ones (`modelOverrides`). Catalog data is
 * read on first use and per provider, so start-up pays only for what it touches.
 * `override.apiKey` (from --api-key) applies to `override.provider`, or to every provider.
 */
export function loadModels(
  home: string,
  env: Record<string, string | undefined>,
  override?: { provider?: string; apiKey?: string },
  opts: LoadOptions = {},
): ModelRegistry {
  const catalog = opts.catalog ?? new Catalog(home);
  const warn = opts.warn ?? ((msg: string) => log("models", msg));
  // Providers found at run time stand where a catalog provider would: models.json can still move
  // them or change their models, and one without a key needs none.
  const extras = new Map((opts.extraProviders ?? []).map((x) => [x.id, x]));
  const fileProviders: ReadonlyMap<string, FileProvider> = readModelsFiles({
    paths: opts.paths ?? userFiles(home, env, "models.json"),
    known: (pid) => catalog.has(pid) || extras.has(pid),
    warn,
  });
  /** A run-time provider, else the catalog's. */
  const providerSource = (provider: string): { api: Api; baseUrl: string; headers?: Record<string, string>; models: (FileModel & { source?: Model["source"] })[] } | undefined =>
    extras.get(provider) ?? (catalog.has(provider) ? catalog.provider(provider) : undefined);

  const built = new Map<string, Model[]>();
  const models = (provider: string): Model[] => {
    let list = built.get(provider);
    if (list) return list;
    const fp = fileProviders.get(provider);
    const cat = providerSource(provider);
    list = [];
    if (fp || cat) {
      const where = `provider "${provider}"`;
      const def: ProviderBase = {
        id: provider,
        api: fp?.api ?? cat?.api ?? "openai-completions",
        baseUrl: fp?.baseUrl ?? cat?.baseUrl ?? "",
        headers: resolveHeaders(fp?.headers, env, where, warn),
        compat: fp?.compat,
        authHeader: fp?.authHeader,
      };
      let defs: (FileModel & { source?: Model["source"] })[] = cat?.models ?? [];
      // A models.json baseUrl moves the whole provider (a proxy, a test server), including the
      // catalog models that have an endpoint of their own.
      if (fp?.baseUrl) defs = defs.map((m) => (m.baseUrl ? { ...m, baseUrl: undefined } : m));
      if (fp?.models) {
        const extra = fp.models;
        defs = [...defs.filter((m) => !extra.some((e) => e.id === m.id)), ...extra.map((m) => ({ ...m, source: "models.json" as const }))];
      }
      const overrides = fp?.modelOverrides;
      if (overrides) {
        defs = defs.map((m) => (Object.hasOwn(overrides, m.id) ? { ...applyOverride(m, overrides[m.id]!), source: "models.json" as const } : m));
      }
      list = defs.map((m) => toModel(def, { ...m, headers: resolveHeaders(m.headers, env, `model "${provider}/${m.id}"`, warn) }));
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

  const keys = createKeyResolver({
    env,
    override,
    catalog,
    fileKey: (pid) => fileProviders.get(pid)?.apiKey ?? literalSpec(extras.get(pid)?.apiKey),
    providers,
    authPaths: opts.authPaths ?? userFiles(home, env, "auth.json"),
  });
  // A run-time provider without a key needs none: it is usable all the same (the SDK sends a placeholder).
  const apiKey = (p: string) => keys.apiKey(p) ?? (extras.has(p) ? "none" : undefined);

  return {
    providers,
    models,
    all: () => providers().flatMap(models),
    apiKey,
    keyOrigin: (p) => keys.keyOrigin(p) ?? (extras.has(p) ? "discovered" : undefined),
    requestAuth: keys.requestAuth,
    keySources: keys.keySources,
    onNewCredentials: keys.onNewCredentials,
    find: (provider, id) => models(provider).find((m) => m.id === id),
    available: () => providers().filter((p) => apiKey(p) !== undefined).flatMap(models),
    // models.json headers from a variable or a command are secrets too (keys.ts covers the keys).
    credentials: () => [...keys.credentials(), ...headerCredentials(fileProviders, env)],
    fileProviders: () => fileProviders,
    providerDefaults: (provider) => {
      const fp = fileProviders.get(provider);
      const cat = providerSource(provider);
      if (!fp && !cat) return undefined;
      const out: { api: Api; baseUrl: string; headers?: Record<string, string> } = {
        api: fp?.api ?? cat?.api ?? "openai-completions",
        baseUrl: fp?.baseUrl ?? cat?.baseUrl ?? "",
      };
      const headers = resolveHeaders(fp?.headers, env, `provider "${provider}"`, () => {});
      if (headers) out.headers = headers;
      return out;
    },
  };
}

/** A literal key as a models.json value that resolves to itself (`$$` for `$`, `$!` for a leading `!`). */
const literalSpec = (key: string | undefined): string | undefined => key?.replace(/\$/g, "$$$$").replace(/^!/, "$$!");

type ProviderBase = { id: string; api: Api; baseUrl: string; headers?: Record<string, string>; compat?: Compat; authHeader?: boolean };

/** A ModelDef with the provider's defaults filled in; optional fields only where the data has them. */
export function toModel(p: ProviderBase, m: FileModel & { source?: Model["source"] }): Model {
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
  const compat = mergeCompat(p.compat, m.compat);
  if (compat) model.compat = compat;
  if (m.thinkingLevelMap) model.thinkingLevelMap = m.thinkingLevelMap;
  if (m.samplingParams) model.samplingParams = m.samplingParams;
  if (m.samplingParamsByThinkingLevel) model.samplingParamsByThinkingLevel = m.samplingParamsByThinkingLevel;
  if (m.inputLimits) model.inputLimits = m.inputLimits;
  if (m.promptCache) model.promptCache = m.promptCache;
  if (p.authHeader) model.authHeader = true;
  return model;
}
