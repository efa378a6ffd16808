import * as v from "valibot";
import type { LlmRequest, Model, ThinkingLevel } from "./types.ts";

/**
 * models.json `compat`: how an endpoint differs from its API's standard request. A provider's
 * compat applies to all its models; a model's overrides it field by field. The fields pion
 * reads are typed here; any other field is kept and ignored (docs/models-json.md lists which).
 */
const compatSchemaOf = () => v.looseObject({
  // Chat Completions
  supportsStore: v.optional(v.boolean()),
  supportsDeveloperRole: v.optional(v.boolean()),
  supportsReasoningEffort: v.optional(v.boolean()),
  supportsUsageInStreaming: v.optional(v.boolean()),
  supportsFinishReason: v.optional(v.boolean()),
  maxTokensField: v.optional(v.picklist(["max_completion_tokens", "max_tokens"])),
  requiresToolResultName: v.optional(v.boolean()),
  requiresAssistantAfterToolResult: v.optional(v.boolean()),
  requiresNonNullAssistantContent: v.optional(v.boolean()),
  requiresToolsWithToolHistory: v.optional(v.boolean()),
  requiresThinkingAsText: v.optional(v.boolean()),
  requiresReasoningContentOnAssistantMessages: v.optional(v.boolean()),
  thinkingFormat: v.optional(v.string()),
  chatTemplateKwargs: v.optional(v.record(v.string(), v.unknown())),
  chatTemplateArgs: v.optional(v.record(v.string(), v.unknown())),
  openRouterRouting: v.optional(v.looseObject({})),
  vercelGatewayRouting: v.optional(v.looseObject({ only: v.optional(v.array(v.string())), order: v.optional(v.array(v.string())) })),
  zaiToolStream: v.optional(v.boolean()),
  thinkingTokenBudgetField: v.optional(v.picklist(["thinking_token_budget", "thinking_budget", "thinking_budget_tokens"])),
  supportsThinkingTokenBudget: v.optional(v.boolean()),
  supportsStrictMode: v.optional(v.boolean()),
  cacheControlFormat: v.optional(v.literal("anthropic")),
  sendSessionAffinityHeaders: v.optional(v.boolean()),
  sessionAffinityFormat: v.optional(v.picklist(["openai", "openai-nosession", "openrouter"])),
  promptCacheKeyMode: v.optional(v.picklist(["auto", "enabled", "disabled"])),
  supportsLongCacheRetention: v.optional(v.boolean()),
  vllmPriority: v.optional(v.number()),
  // Responses
  supportsMaxOutputTokens: v.optional(v.boolean()),
  // Messages
  supportsCacheControlOnTools: v.optional(v.boolean()),
  forceAdaptiveThinking: v.optional(v.boolean()),
});
export type Compat = v.InferOutput<ReturnType<typeof compatSchemaOf>>;
let compatSchemaBuilt: ReturnType<typeof compatSchemaOf> | undefined;
/** The schema, built on first use: a start-up without a models.json never pays for it. */
export const compatSchema = (): ReturnType<typeof compatSchemaOf> => (compatSchemaBuilt ??= compatSchemaOf());

/** The thinking formats pion builds; any other value of `thinkingFormat` falls back to "openai". */
export const THINKING_FORMATS = ["openai", "openrouter", "deepseek", "together", "zai", "qwen", "qwen-chat-template", "chat-template", "string-thinking", "baseten", "ant-ling"] as const;
export type ThinkingFormat = (typeof THINKING_FORMATS)[number];

const NESTED = ["openRouterRouting", "vercelGatewayRouting", "chatTemplateKwargs", "chatTemplateArgs"] as const;

/** `override` over `base` field by field; the routing and template objects merge one level down. */
export function mergeCompat(base: Compat | undefined, override: Compat | undefined): Compat | undefined {
  if (!override) return base;
  if (!base) return override;
  const merged: Record<string, unknown> = { ...base, ...override };
  for (const key of NESTED) {
    const b = base[key];
    const o = override[key];
    if (b || o) merged[key] = { ...b, ...o };
  }
  return merged as Compat;
}

const includes = (url: string, ...parts: string[]) => parts.some((p) => url.toLowerCase().includes(p));

/** Chat Completions compat with every field settled: the model's own, else detected from the provider and host. */
export interface CompletionsCompat {
  supportsStore: boolean;
  developerRole: boolean;
  supportsReasoningEffort: boolean;
  supportsUsageInStreaming: boolean;
  supportsFinishReason: boolean;
  maxTokensField: "max_completion_tokens" | "max_tokens";
  requiresToolResultName: boolean;
  requiresAssistantAfterToolResult: boolean;
  requiresNonNullAssistantContent: boolean;
  requiresToolsWithToolHistory: boolean;
  requiresThinkingAsText: boolean;
  requiresReasoningContentOnAssistantMessages: boolean;
  /** Undefined: pion's own choice from the catalog's reasoning options (reasoning-params.ts). */
  thinkingFormat?: ThinkingFormat;
  chatTemplateKwargs?: Record<string, unknown>;
  chatTemplateArgs?: Record<string, unknown>;
  thinkingTokenBudgetField?: "thinking_token_budget" | "thinking_budget" | "thinking_budget_tokens";
  zaiToolStream: boolean;
  supportsStrictMode: boolean;
  cacheControlFormat?: "anthropic";
  /** Undefined: pion's host-based prompt caching (completions-cache.ts) decides. */
  sendSessionAffinityHeaders?: boolean;
  sessionAffinityFormat: "openai" | "openai-nosession" | "openrouter";
  promptCacheKeyMode: "auto" | "enabled" | "disabled";
  vllmPriority?: number;
  openRouterRouting?: Record<string, unknown>;
  vercelGatewayRouting?: { only?: string[]; order?: string[] };
}

/**
 * As the reference detects them: `max_tokens` for the hosts that take only that field, the
 * developer role for OpenAI's own API, no `reasoning_effort` where it is refused, and DeepSeek's
 * `reasoning_content` on replayed assistant messages. Unlike the reference, `store` is sent only
 * when `supportsStore` is set (a field a local server does not know may be refused).
 */
export function completionsCompat(model: Model): CompletionsCompat {
  const c = model.compat ?? {};
  const url = model.baseUrl;
  const p = model.provider;
  const zai = p === "zai" || p === "zai-coding-cn" || includes(url, "api.z.ai", "open.bigmodel.cn");
  const together = p === "together" || includes(url, "api.together.ai", "api.together.xyz");
  const moonshot = p === "moonshotai" || p === "moonshotai-cn" || includes(url, "api.moonshot.");
  const openrouter = p === "openrouter" || includes(url, "openrouter.ai");
  const cfGateway = p === "cloudflare-ai-gateway" || includes(url, "gateway.ai.cloudflare.com");
  const nvidia = p === "nvidia" || includes(url, "integrate.api.nvidia.com");
  const antLing = p === "ant-ling" || includes(url, "api.ant-ling.com");
  const deepseek = p === "deepseek" || includes(url, "deepseek.com");
  const grok = p === "xai" || includes(url, "api.x.ai");
  const openai = p === "openai" || includes(url, "api.openai.com");
  const maxTokens = includes(url, "chutes.ai") || deepseek || moonshot || cfGateway || together || nvidia || antLing || zai;
  const format = c.thinkingFormat ?? (model.thinkingLevelMap || c.supportsReasoningEffort !== undefined ? "openai" : undefined);
  return {
    supportsStore: c.supportsStore ?? false,
    developerRole: model.reasoning && (c.supportsDeveloperRole ?? openai),
    supportsReasoningEffort: c.supportsReasoningEffort ?? !(grok || zai || moonshot || together || cfGateway || nvidia || antLing),
    supportsUsageInStreaming: c.supportsUsageInStreaming ?? true,
    supportsFinishReason: c.supportsFinishReason ?? true,
    maxTokensField: c.maxTokensField ?? (maxTokens ? "max_tokens" : "max_completion_tokens"),
    requiresToolResultName: c.requiresToolResultName ?? false,
    requiresAssistantAfterToolResult: c.requiresAssistantAfterToolResult ?? false,
    requiresNonNullAssistantContent: c.requiresNonNullAssistantContent ?? false,
    requiresToolsWithToolHistory: c.requiresToolsWithToolHistory ?? false,
    requiresThinkingAsText: c.requiresThinkingAsText ?? false,
    requiresReasoningContentOnAssistantMessages: c.requiresReasoningContentOnAssistantMessages ?? deepseek,
    ...(format ? { thinkingFormat: (THINKING_FORMATS as readonly string[]).includes(format) ? (format as ThinkingFormat) : "openai" } : {}),
    ...(c.chatTemplateKwargs ? { chatTemplateKwargs: c.chatTemplateKwargs } : {}),
    ...(c.chatTemplateArgs ? { chatTemplateArgs: c.chatTemplateArgs } : {}),
    ...budgetField(c),
    zaiToolStream: c.zaiToolStream ?? false,
    supportsStrictMode: c.supportsStrictMode ?? false,
    ...(c.cacheControlFormat ? { cacheControlFormat: c.cacheControlFormat } : {}),
    ...(c.sendSessionAffinityHeaders !== undefined ? { sendSessionAffinityHeaders: c.sendSessionAffinityHeaders } : {}),
    sessionAffinityFormat: c.sessionAffinityFormat ?? (openrouter ? "openrouter" : "openai"),
    promptCacheKeyMode: c.promptCacheKeyMode ?? "auto",
    ...(c.vllmPriority !== undefined ? { vllmPriority: c.vllmPriority } : {}),
    ...(c.openRouterRouting && Object.keys(c.openRouterRouting).length > 0 ? { openRouterRouting: c.openRouterRouting } : {}),
    ...(c.vercelGatewayRouting ? { vercelGatewayRouting: c.vercelGatewayRouting } : {}),
  };
}

function budgetField(c: Compat): Pick<CompletionsCompat, "thinkingTokenBudgetField"> {
  if (c.thinkingTokenBudgetField) return { thinkingTokenBudgetField: c.thinkingTokenBudgetField };
  return c.supportsThinkingTokenBudget ? { thinkingTokenBudgetField: "thinking_token_budget" } : {};
}

/**
 * Session-affinity headers in one of the reference's formats: "openai" sends `session_id` (the
 * Responses API spells it `session-id`), `x-client-request-id` and, on Chat Completions,
 * `x-session-affinity`; "openai-nosession" the same without the session id; "openrouter"
 * `x-session-id`.
 */
export function affinityHeaders(format: CompletionsCompat["sessionAffinityFormat"], sessionId: string, api: "completions" | "responses"): Record<string, string> {
  if (format === "openrouter") return { "x-session-id": sessionId };
  const out: Record<string, string> = {};
  if (format === "openai") out[api === "responses" ? "session-id" : "session_id"] = sessionId;
  out["x-client-request-id"] = sessionId;
  if (api === "completions") out["x-session-affinity"] = sessionId;
  return out;
}

/** The model's headers, with `Authorization: Bearer <key>` when its provider sets `authHeader`. */
export function requestHeaders(req: Pick<LlmRequest, "model" | "apiKey">): Record<string, string> | undefined {
  const { model, apiKey } = req;
  if (!model.authHeader || !apiKey) return model.headers;
  return { ...model.headers, Authorization: `Bearer ${apiKey}` };
}

/**
 * The fields models.json merges into an OpenAI-shaped request body: the model's
 * `samplingParams`, then its `samplingParamsByThinkingLevel` entry for the effective level
 * (later values win per key). Undefined when there are none.
 */
export function samplingParams(model: Model, level: ThinkingLevel): Record<string, unknown> | undefined {
  const byLevel = model.samplingParamsByThinkingLevel?.[level];
  if (!model.samplingParams && !byLevel) return undefined;
  return { ...model.samplingParams, ...byLevel };
}
