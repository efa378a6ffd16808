import { existsSync, readFileSync } from "node:fs";
import * as v from "valibot";
import { configValueEnvNames, isCommandValue, resolveConfigValue, soleEnvName } from "../credentials/config-value.ts";
import type { Credential } from "../credentials/guard.ts";
import { errorMessage } from "../util/errors.ts";
import { describeIssues } from "../util/issues.ts";
import { parseLooseJson } from "../util/jsonc.ts";
import { isImplementedApi, type ImplementedApi } from "./apis.ts";
import type { ModelDef } from "./catalog/data.ts";
import { compatSchema, mergeCompat, type Compat } from "./compat.ts";
import type { Model } from "./types.ts";

/**
 * models.json, the reference's schema (its docs/models-configuration.md) plus pion's own model
 * fields (reasoningOptions, thinkingLevels, family, releaseDate, status, toolCall, and cost tiers
 * by `contextOver` as the built-in catalog writes them). Unknown fields are accepted and ignored,
 * as the reference's schema allows them.
 *
 * Nothing in the file stops pion from starting: a file that is not JSON is ignored, a provider
 * that fails the schema or names an API pion has no adapter for is skipped (its models with an
 * API of their own that pion speaks are kept), each with one warning.
 */

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
/** The schemas, built on first use: a start-up without a models.json never pays for them. */
function makeSchemas() {
  const Level = v.picklist(LEVELS);
  const Positive = v.pipe(v.number(), v.minValue(0));

  /** `inputTokensAbove` is the reference's spelling, `contextOver` the catalog's; both become `contextOver`. */
  const TierSchema = v.pipe(
    v.looseObject({
      inputTokensAbove: v.optional(Positive),
      contextOver: v.optional(Positive),
      input: v.number(),
      output: v.number(),
      cacheRead: v.optional(v.number()),
      cacheWrite: v.optional(v.number()),
    }),
    v.check((t) => t.inputTokensAbove !== undefined || t.contextOver !== undefined, "a cost tier needs inputTokensAbove"),
    v.transform(({ inputTokensAbove, contextOver, input, output, cacheRead, cacheWrite }) => ({
      contextOver: (inputTokensAbove ?? contextOver)!,
      input,
      output,
      ...(cacheRead !== undefined ? { cacheRead } : {}),
      ...(cacheWrite !== undefined ? { cacheWrite } : {}),
    })),
  );
  const CostSchema = v.looseObject({
    input: v.optional(v.number()),
    output: v.optional(v.number()),
    cacheRead: v.optional(v.number()),
    cacheWrite: v.optional(v.number()),
    tiers: v.optional(v.array(TierSchema)),
  });
  const ReasoningOptionSchema = v.variant("type", [
    v.object({ type: v.literal("effort"), values: v.array(v.string()) }),
    v.object({ type: v.literal("budget_tokens"), min: v.optional(v.number()), max: v.optional(v.number()) }),
    v.object({ type: v.literal("toggle") }),
  ]);
  const Params = v.record(v.string(), v.unknown());
  const Headers = v.record(v.string(), v.string());
  const NonEmpty = v.pipe(v.string(), v.minLength(1));

  const modelFields = {
    name: v.optional(v.string()),
    reasoning: v.optional(v.boolean()),
    thinkingLevelMap: v.optional(v.record(Level, v.nullable(v.string()))),
    input: v.optional(v.array(v.picklist(["text", "image"]))),
    inputLimits: v.optional(v.looseObject({})),
    cost: v.optional(CostSchema),
    promptCache: v.optional(v.looseObject({ short: v.optional(Positive), long: v.optional(Positive) })),
    contextWindow: v.optional(v.pipe(v.number(), v.gtValue(0))),
    maxTokens: v.optional(v.pipe(v.number(), v.gtValue(0))),
    samplingParams: v.optional(Params),
    samplingParamsByThinkingLevel: v.optional(v.record(Level, Params)),
    headers: v.optional(Headers),
    compat: v.optional(compatSchema()),
    // pion's own, as its catalog has them
    family: v.optional(v.string()),
    reasoningOptions: v.optional(v.array(ReasoningOptionSchema)),
    thinkingLevels: v.optional(v.array(Level)),
    releaseDate: v.optional(v.string()),
    status: v.optional(v.picklist(["deprecated", "alpha", "beta"])),
    toolCall: v.optional(v.boolean()),
  };
  const ModelDefSchema = v.looseObject({ id: NonEmpty, api: v.optional(NonEmpty), baseUrl: v.optional(NonEmpty), ...modelFields });
  const ModelOverrideSchema = v.looseObject(modelFields);
  const ProviderSchema = v.looseObject({
    name: v.optional(v.string()),
    baseUrl: v.optional(NonEmpty),
    apiKey: v.optional(v.string()),
    api: v.optional(NonEmpty),
    oauth: v.optional(v.string()),
    headers: v.optional(Headers),
    compat: v.optional(compatSchema()),
    authHeader: v.optional(v.boolean()),
    models: v.optional(v.array(ModelDefSchema)),
    modelOverrides: v.optional(v.record(v.string(), ModelOverrideSchema)),
  });
  const FileSchema = v.looseObject({ $schema: v.optional(v.string()), providers: v.optional(v.record(v.string(), v.unknown()), {}) });
  return { ProviderSchema, FileSchema };
}
let built: ReturnType<typeof makeSchemas> | undefined;
const schemas = () => (built ??= makeSchemas());
type ParsedProvider = v.InferOutput<ReturnType<typeof makeSchemas>["ProviderSchema"]>;


/** The model fields models.json adds to a catalog entry. */
export type ModelExtras = Pick<Model, "compat" | "thinkingLevelMap" | "samplingParams" | "samplingParamsByThinkingLevel" | "inputLimits" | "promptCache">;
export type FileModel = ModelDef & ModelExtras;

export interface FileProvider {
  name?: string;
  baseUrl?: string;
  apiKey?: string;
  api?: ImplementedApi;
  headers?: Record<string, string>;
  compat?: Compat;
  authHeader?: boolean;
  models?: FileModel[];
  modelOverrides?: Record<string, Partial<FileModel>>;
}

/** A provider found at run time (a llama.cpp server): it stands where a catalog provider would. */
export interface ExtraProvider {
  id: string;
  api: ImplementedApi;
  baseUrl: string;
  apiKey?: string;
  headers?: Record<string, string>;
  models: ModelDef[];
}

export type Warn = (message: string) => void;

/**
 * Every models.json in `paths`, the first winning: within a provider its fields win one by one
 * (headers and compat merge key by key), models are the union by id with the first file's entry
 * winning, and so are modelOverrides. (Providers found at run time stand beside the catalog's:
 * models.ts.)
 */
export function readModelsFiles(o: { paths: readonly string[]; known: (provider: string) => boolean; warn: Warn }): Map<string, FileProvider> {
  const out = new Map<string, FileProvider>();
  const layers = o.paths.map((path) => parseModelsFile(readFile(path, o.warn), path, o.warn));
  for (const layer of layers) {
    for (const [pid, p] of layer) {
      const have = out.get(pid);
      out.set(pid, have ? mergeProvider(have, p) : p);
    }
  }
  // Checked once the files are merged: another file may give the provider its baseUrl.
  for (const [pid, p] of out) {
    if (!p.baseUrl && !o.known(pid) && (p.models ?? []).some((m) => !m.baseUrl)) {
      o.warn(`models.json: provider "${pid}" skipped: it needs a baseUrl`);
      out.delete(pid);
    }
  }
  return out;
}

function readFile(path: string, warn: Warn): unknown {
  if (!existsSync(path)) return undefined;
  try {
    return parseLooseJson(readFileSync(path, "utf8"));
  } catch (err) {
    warn(`${path} ignored: it is not valid JSON (${errorMessage(err)})`);
    return undefined;
  }
}

/** One file's providers, each validated on its own. */
export function parseModelsFile(raw: unknown, file: string, warn: Warn): Map<string, FileProvider> {
  const out = new Map<string, FileProvider>();
  if (raw === undefined) return out;
  const top = v.safeParse(schemas().FileSchema, raw);
  if (!top.success) {
    warn(`${file} ignored: ${describeIssues(top.issues)}`);
    return out;
  }
  for (const [pid, rawProvider] of Object.entries(top.output.providers)) {
    const parsed = v.safeParse(schemas().ProviderSchema, rawProvider);
    if (!parsed.success) {
      warn(`${file}: provider "${pid}" skipped: ${describeIssues(parsed.issues)}`);
      continue;
    }
    const p = supportedPart(pid, parsed.output, (msg) => warn(`${file}: ${msg}`));
    if (p) out.set(pid, p);
  }
  return out;
}

/** The provider without what names an API pion lacks: one warning per API; undefined when nothing is left. */
function supportedPart(pid: string, p: ParsedProvider, warn: Warn): FileProvider | undefined {
  const { api, models, oauth: _oauth, ...rest } = p;
  const warned = new Set<string>();
  const unsupported = (name: string) => {
    if (warned.has(name)) return;
    warned.add(name);
    warn(`provider "${pid}" uses API "${name}", which pion does not implement: ${name === api ? "skipped" : "its models on it are skipped"}`);
  };
  const providerOk = api === undefined || isImplementedApi(api);
  if (!providerOk) unsupported(api);
  const kept: FileModel[] = [];
  for (const m of models ?? []) {
    const modelApi = m.api ?? (providerOk ? undefined : api);
    if (modelApi !== undefined && !isImplementedApi(modelApi)) unsupported(modelApi);
    else kept.push(m as FileModel); // its api, if any, is one pion implements
  }
  if (!providerOk && kept.length === 0) return undefined;
  const out: FileProvider = { ...rest };
  if (providerOk && api) out.api = api;
  if (models) out.models = kept;
  return out;
}

function mergeProvider(winner: FileProvider, other: FileProvider): FileProvider {
  const out: FileProvider = { ...other, ...definedOnly(winner) };
  if (winner.headers || other.headers) out.headers = { ...other.headers, ...winner.headers };
  const compat = mergeCompat(other.compat, winner.compat);
  if (compat) out.compat = compat;
  if (winner.models || other.models) {
    const first = winner.models ?? [];
    out.models = [...first, ...(other.models ?? []).filter((m) => !first.some((w) => w.id === m.id))];
  }
  if (winner.modelOverrides || other.modelOverrides) {
    const overrides: Record<string, Partial<FileModel>> = { ...other.modelOverrides };
    for (const [id, o] of Object.entries(winner.modelOverrides ?? {})) overrides[id] = { ...overrides[id], ...o };
    out.modelOverrides = overrides;
  }
  return out;
}

function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, val]) => val !== undefined)) as Partial<T>;
}

/**
 * A modelOverrides entry over a model: object fields (cost, compat, thinkingLevelMap,
 * samplingParams and its levels, promptCache, inputLimits, headers) merge with the model's
 * field by field, the others replace it, as the reference applies them.
 */
export function applyOverride<M extends FileModel>(m: M, o: Partial<FileModel>): M {
  const out = { ...m, ...definedOnly(o) };
  if (o.cost) out.cost = { ...m.cost, ...definedOnly(o.cost) };
  if (o.compat) out.compat = mergeCompat(m.compat, o.compat);
  if (o.thinkingLevelMap) out.thinkingLevelMap = { ...m.thinkingLevelMap, ...o.thinkingLevelMap };
  if (o.samplingParams) out.samplingParams = { ...m.samplingParams, ...o.samplingParams };
  if (o.samplingParamsByThinkingLevel) {
    const levels = { ...m.samplingParamsByThinkingLevel };
    for (const [level, params] of Object.entries(o.samplingParamsByThinkingLevel)) levels[level as (typeof LEVELS)[number]] = { ...levels[level as (typeof LEVELS)[number]], ...params };
    out.samplingParamsByThinkingLevel = levels;
  }
  if (o.promptCache) out.promptCache = { ...m.promptCache, ...o.promptCache };
  if (o.inputLimits) out.inputLimits = { ...m.inputLimits, ...o.inputLimits };
  if (o.headers) out.headers = { ...m.headers, ...o.headers };
  return out;
}

/**
 * Header values resolved like apiKey (`$NAME`, `${NAME}`, `!command`, `$$` / `$!`). A header whose
 * value does not resolve is left out, with a warning, rather than failing every request.
 */
export function resolveHeaders(headers: Record<string, string> | undefined, env: Record<string, string | undefined>, where: string, warn: Warn): Record<string, string> | undefined {
  if (!headers) return undefined;
  const out: Record<string, string> = {};
  for (const [name, spec] of Object.entries(headers)) {
    const value = resolveConfigValue(spec, env);
    if (value === undefined) warn(`${where}: header "${name}" did not resolve (${describeSpec(spec)}); requests go without it`);
    else out[name] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

function describeSpec(spec: string): string {
  if (isCommandValue(spec)) return `the command failed or printed nothing`;
  const names = configValueEnvNames(spec);
  return names.length === 1 ? `${names[0]} is not set` : `one of ${names.join(", ")} is not set`;
}

/**
 * What the credential guard must mask for models.json headers: every header whose value comes
 * from a variable or a command (literal values are configuration, not secrets pion can know).
 * A sole `$NAME` is labelled with the name; anything else `<provider> header <name>`.
 */
export function headerCredentials(fileProviders: ReadonlyMap<string, FileProvider>, env: Record<string, string | undefined>): Credential[] {
  const out: Credential[] = [];
  for (const [pid, p] of fileProviders) {
    const all: [string, string][] = [
      ...Object.entries(p.headers ?? {}),
      ...(p.models ?? []).flatMap((m) => Object.entries(m.headers ?? {})),
      ...Object.values(p.modelOverrides ?? {}).flatMap((m) => Object.entries(m.headers ?? {})),
    ];
    for (const [name, spec] of all) {
      const sole = soleEnvName(spec);
      const names = configValueEnvNames(spec);
      if (sole) out.push({ label: sole, envNames: [sole], value: env[sole] });
      else if (names.length > 0 || isCommandValue(spec)) out.push({ label: `${pid} header ${name}`, envNames: names, value: resolveConfigValue(spec, env) });
    }
  }
  return out;
}
