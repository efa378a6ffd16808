import { isSecretName } from "../../credentials/child-env.ts";
import { AZURE_PLACEHOLDER_URL } from "../azure-config.ts";
import type { Api, CostTier, ReasoningOption, ThinkingLevel } from "../types.ts";
import type { CatalogData, CatalogProvider, ModelDef } from "./data.ts";
import type { ModelsDev, ModelsDevModel, ModelsDevProvider } from "./models-dev.ts";

type ChatApi = Exclude<Api, "scripted" | "pi-virtual">;

/**
 * Base URLs models.dev leaves out: the first-party APIs, and providers it describes by their own
 * AI-SDK package that also serve an OpenAI-compatible endpoint (chat completions).
 */
export const KNOWN_ENDPOINTS: Record<string, { api: ChatApi; baseUrl: string }> = {
  anthropic: { api: "anthropic-messages", baseUrl: "https://api.anthropic.com" },
  openai: { api: "openai-responses", baseUrl: "https://api.openai.com/v1" },
  groq: { api: "openai-completions", baseUrl: "https://api.groq.com/openai/v1" },
  xai: { api: "openai-completions", baseUrl: "https://api.x.ai/v1" },
  // Mistral's own endpoint, as the reference's mistral provider speaks it (`<base>/v1/chat/completions`).
  mistral: { api: "mistral-conversations", baseUrl: "https://api.mistral.ai" },
  cerebras: { api: "openai-completions", baseUrl: "https://api.cerebras.ai/v1" },
  azure: { api: "azure-openai-responses", baseUrl: AZURE_PLACEHOLDER_URL },
  "amazon-bedrock": { api: "bedrock-converse-stream", baseUrl: "https://bedrock-runtime.us-east-1.amazonaws.com" },
  "google-vertex": { api: "google-vertex", baseUrl: "https://aiplatform.googleapis.com" },
  "google-vertex-anthropic": { api: "anthropic-vertex", baseUrl: "https://aiplatform.googleapis.com" },
  google: { api: "google-generative-ai", baseUrl: "https://generativelanguage.googleapis.com/v1beta" },
  deepinfra: { api: "openai-completions", baseUrl: "https://api.deepinfra.com/v1/openai" },
  togetherai: { api: "openai-completions", baseUrl: "https://api.together.xyz/v1" },
  perplexity: { api: "openai-completions", baseUrl: "https://api.perplexity.ai" },
  openrouter: { api: "openai-completions", baseUrl: "https://openrouter.ai/api/v1" },
  vercel: { api: "openai-completions", baseUrl: "https://ai-gateway.vercel.sh/v1" },
};

/**
 * Azure's own endpoint serves OpenAI's families (Responses API); its Foundry models (Phi, Llama,
 * Mistral, …) live on a per-resource endpoint models.dev leaves as a placeholder, so they are left out.
 */
const KEEP: Record<string, (m: ModelsDevModel) => boolean> = {
  azure: (m) => /^(gpt|o|codex)(-|$)/.test(m.family ?? "") && !m.provider,
  // Vertex's Gemini models; its partner models (Claude, Llama, …) have other endpoints.
  "google-vertex": (m) => /^gemini/.test(m.family ?? "") && !m.provider,
};

/** The API an AI-SDK package name stands for; undefined for the ones pion cannot talk to. */
function apiOfPackage(npm: string | undefined, shape?: string): ChatApi | undefined {
  if (shape === "responses") return "openai-responses";
  if (shape === "completions") return "openai-completions";
  if (npm === "@ai-sdk/anthropic") return "anthropic-messages";
  if (npm === "@ai-sdk/openai") return "openai-responses";
  if (npm === "@ai-sdk/openai-compatible") return "openai-completions";
  if (npm === "@ai-sdk/google") return "google-generative-ai";
  if (npm === "@ai-sdk/amazon-bedrock") return "bedrock-converse-stream";
  if (npm === "@ai-sdk/azure") return "azure-openai-responses";
  if (npm === "@ai-sdk/google-vertex") return "google-vertex";
  if (npm === "@ai-sdk/google-vertex/anthropic") return "anthropic-vertex";
  return undefined;
}

/** A URL with a `${VAR}` placeholder needs per-user values the catalog cannot hold. */
export const usableUrl = (url: string | undefined): url is string => !!url && /^https?:\/\//.test(url) && !url.includes("${");

const LEVELS: ThinkingLevel[] = ["xhigh", "max"];

function reasoningOptions(raw: ModelsDevModel["reasoning_options"]): ReasoningOption[] | undefined {
  const out: ReasoningOption[] = [];
  for (const o of raw ?? []) {
    const r = o as Record<string, unknown>;
    if (o.type === "effort" && Array.isArray(r.values)) out.push({ type: "effort", values: r.values.filter((x): x is string => typeof x === "string") });
    else if (o.type === "budget_tokens") {
      const b: ReasoningOption = { type: "budget_tokens" };
      if (typeof r.min === "number") b.min = r.min;
      if (typeof r.max === "number") b.max = r.max;
      out.push(b);
    } else if (o.type === "toggle") out.push({ type: "toggle" });
  }
  return out.length > 0 ? out : undefined;
}

function tiers(cost: NonNullable<ModelsDevModel["cost"]>): CostTier[] | undefined {
  const raw = cost.tiers?.filter((t) => t.tier.type === "context" && typeof t.tier.size === "number");
  const list = raw?.length
    ? raw.map((t) => ({ contextOver: t.tier.size!, input: t.input, output: t.output, cacheRead: t.cache_read, cacheWrite: t.cache_write }))
    : cost.context_over_200k
      ? [{ contextOver: 200000, input: cost.context_over_200k.input, output: cost.context_over_200k.output, cacheRead: cost.context_over_200k.cache_read, cacheWrite: cost.context_over_200k.cache_write }]
      : undefined;
  return list?.map((t) => dropUndefined(t)).sort((a, b) => a.contextOver - b.contextOver);
}

function dropUndefined<T extends object>(o: T): T {
  for (const k of Object.keys(o) as (keyof T)[]) if (o[k] === undefined) delete o[k];
  return o;
}

/** Chat models only: image, speech and embedding models are no use to an agent. */
function isChatModel(m: ModelsDevModel): boolean {
  const output = m.modalities?.output ?? ["text"];
  if (!output.includes("text")) return false;
  return m.tool_call !== false || !/embed|rerank|moderation|whisper|transcri|tts/i.test(`${m.id} ${m.family ?? ""}`);
}

/** One models.dev model as a ModelDef of a provider with `api` and `baseUrl`; undefined to leave it out. */
export function convertModel(m: ModelsDevModel, provider: { api: ChatApi; baseUrl: string }): ModelDef | undefined {
  if (!isChatModel(m)) return undefined;
  const def: ModelDef = { id: m.id };
  if (m.provider?.npm || m.provider?.shape || m.provider?.api) {
    const api = m.provider.npm || m.provider.shape ? apiOfPackage(m.provider.npm, m.provider.shape) : provider.api;
    if (!api) return undefined;
    if (m.provider.api !== undefined && !usableUrl(m.provider.api)) return undefined;
    if (api !== provider.api) def.api = api;
    if (m.provider.api && m.provider.api !== provider.baseUrl) def.baseUrl = m.provider.api;
  }
  if (m.name !== m.id) def.name = m.name;
  if (m.family) def.family = m.family;
  if (m.reasoning) def.reasoning = true;
  const ro = reasoningOptions(m.reasoning_options);
  if (ro) {
    def.reasoningOptions = ro;
    const efforts = ro.flatMap((o) => (o.type === "effort" ? o.values : []));
    const extra = LEVELS.filter((l) => efforts.includes(l));
    if (extra.length > 0) def.thinkingLevels = extra;
  }
  const input = (["text", "image"] as const).filter((x) => m.modalities?.input?.includes(x) ?? x === "text");
  if (input.includes("image")) def.input = [...input];
  if (m.limit.context) def.contextWindow = m.limit.context;
  if (m.limit.output) def.maxTokens = m.limit.output;
  if (m.cost) {
    const cost: NonNullable<ModelDef["cost"]> = dropUndefined({
      input: m.cost.input,
      output: m.cost.output,
      cacheRead: m.cost.cache_read,
      cacheWrite: m.cost.cache_write,
      tiers: tiers(m.cost),
    });
    if (Object.keys(cost).length > 0) def.cost = cost;
  }
  if (m.release_date) def.releaseDate = m.release_date;
  if (m.last_updated) def.lastUpdated = m.last_updated;
  if (m.status === "deprecated" || m.status === "alpha" || m.status === "beta") def.status = m.status;
  if (m.tool_call === false) def.toolCall = false;
  return def;
}

/** A provider pion can talk to, with its models; undefined when it speaks none of pion's APIs. */
export function convertProvider(p: ModelsDevProvider): CatalogProvider | undefined {
  const known = KNOWN_ENDPOINTS[p.id];
  const api = known?.api ?? apiOfPackage(p.npm);
  const baseUrl = usableUrl(p.api) ? p.api : known?.baseUrl;
  if (!api || !baseUrl || (p.api !== undefined && !usableUrl(p.api) && !known)) return undefined;
  const models: ModelDef[] = [];
  for (const m of Object.values(p.models)) {
    if (KEEP[p.id] && !KEEP[p.id]!(m)) continue;
    const def = convertModel(m, { api, baseUrl });
    if (def) models.push(def);
  }
  if (models.length === 0) return undefined;
  models.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  // Only variables that hold a secret: some providers also list an endpoint or account variable.
  const env = p.env.filter(isSecretName);
  const out: CatalogProvider = { id: p.id, name: p.name, api, baseUrl, env, models };
  if (p.doc) out.doc = p.doc;
  return out;
}

/** models.dev data (already validated) -> the catalog pion embeds or caches. */
export function convertCatalog(data: ModelsDev, source: string): CatalogData {
  const providers: CatalogProvider[] = [];
  for (const p of Object.values(data)) {
    const c = convertProvider(p);
    if (c) providers.push(c);
  }
  providers.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  let date = "";
  for (const p of providers) for (const m of p.models) if (m.lastUpdated && m.lastUpdated > date) date = m.lastUpdated;
  return { source, date, providers };
}
