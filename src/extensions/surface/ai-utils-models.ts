/**
 * pi-ai's model helpers for extensions: pricing a usage (pion's tiered prices, providers/cost.ts),
 * model identity and type and the prompt-cache warming arithmetic. A model here is either pion's or one an extension built in the reference's shape
 * (tiers keyed `inputTokensAbove`).
 */
import { pricesFor } from "../../providers/cost.ts";
import { zeroCost } from "../../providers/event-stream.ts";
import type { Cost, ModelCost, Usage } from "../../providers/types.ts";

type Tier = { inputTokensAbove?: number; contextOver?: number; input: number; output: number; cacheRead?: number; cacheWrite?: number };
interface PricedModel {
  cost: Omit<ModelCost, "tiers"> & { tiers?: Tier[] };
}
interface TypedModel {
  id: string;
  provider: string;
  api?: string;
  type?: string;
}

/**
 * Set `usage.cost` from the model's per-million prices (the tier the input, fresh plus cache-read
 * plus cache-written, is above); one-hour cache writes (`cacheWrite1h`) at twice the input price.
 * The total is always the sum of the parts: a provider-billed total is not kept. Returns the cost.
 */
export function calculateCost(model: PricedModel, usage: Usage): Cost {
  const tiers = model.cost.tiers?.map(({ inputTokensAbove, contextOver, ...prices }) => ({ ...prices, contextOver: contextOver ?? inputTokensAbove ?? Infinity }));
  const p = pricesFor({ ...model.cost, tiers }, usage.input + usage.cacheRead + usage.cacheWrite);
  const longWrite = usage.cacheWrite1h ?? 0;
  const c = usage.cost;
  c.input = (p.input / 1e6) * usage.input;
  c.output = (p.output / 1e6) * usage.output;
  c.cacheRead = (p.cacheRead / 1e6) * usage.cacheRead;
  c.cacheWrite = (p.cacheWrite * (usage.cacheWrite - longWrite) + p.input * 2 * longWrite) / 1e6;
  c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
  c.totalFromProvider = false;
  return c;
}

/** A model without `type` is a chat model. */
export const getModelType = (model: { type?: string }): string => model.type ?? "chat";

export const isModelType = (model: { type?: string }, type: string): boolean => getModelType(model) === type;

/** A chat model on `api`. */
export const hasApi = (model: TypedModel, api: string): boolean => isModelType(model, "chat") && model.api === api;

/** Same type, id and provider; false when either is missing. */
export const modelsAreEqual = (a: TypedModel | null | undefined, b: TypedModel | null | undefined): boolean =>
  !!a && !!b && getModelType(a) === getModelType(b) && a.id === b.id && a.provider === b.provider;

/** A refresh is sent only when it is expected to save at least this many dollars. */
const MINIMUM_SAVINGS = 0.05;
/** The chance that a real request comes before the entry expires while the agent is idle. */
const IDLE_CONTINUATION = 0.15;

/** When to refresh a cache entry that lives `ttlMs`: at 90% of it, at least ten seconds before it ends; never for ten seconds or less. */
export function getCacheWarmingDelayMs(ttlMs: number): number | undefined {
  if (ttlMs <= 10_000) return undefined;
  return Math.max(1, Math.floor(Math.min(ttlMs * 0.9, ttlMs - 10_000)));
}

interface RequestOptions {
  cacheRetention?: "none" | "short" | "long";
  env?: Record<string, string | undefined>;
  reasoning?: unknown;
}

/**
 * How long the cache entry of a request lives: the model's `promptCache` seconds for the retention
 * the request used (`cacheRetention`, else long when PI_CACHE_RETENTION is "long", else short).
 * pion's own requests always use the short retention.
 */
export function getPromptCacheTtlMs(model: { promptCache?: { short?: number; long?: number } }, options: RequestOptions | undefined): number | undefined {
  const fromEnv = options?.env?.PI_CACHE_RETENTION || process.env.PI_CACHE_RETENTION;
  const retention = options?.cacheRetention ?? (fromEnv === "long" ? "long" : "short");
  if (retention === "none") return undefined;
  const seconds = model.promptCache?.[retention];
  return seconds === undefined ? undefined : seconds * 1000;
}

/**
 * Whether a one-token replay reads the same cache entry: not for Anthropic's budget thinking, whose
 * budget follows `max_tokens` and is part of the cache key (adaptive thinking is fine).
 */
export function isCacheWarmingReplayable(model: { api?: string; compat?: { forceAdaptiveThinking?: boolean } }, options: RequestOptions | undefined): boolean {
  if (!options?.reasoning || model.api !== "anthropic-messages") return true;
  return model.compat?.forceAdaptiveThinking === true;
}

/** A refresh's options: the request's own with one output token, no retries, no continuation of provider state. */
export const getCacheWarmingRequestOptions = <T extends object>(options: T, signal: AbortSignal): T => ({ ...options, maxTokens: 1, disableContinuation: true, maxRetries: 0, signal });

/**
 * Whether refreshing the cache entry of a `promptTokens` request pays: a cache read of the prompt
 * plus one output token against the miss it avoids (a cache write, or fresh input for a model
 * without write prices, less the read), weighted by the chance the conversation goes on.
 */
export function evaluateCacheWarming(model: PricedModel, promptTokens: number, phase: "streaming" | "idle") {
  const price = (tokens: Partial<Pick<Usage, "input" | "output" | "cacheRead" | "cacheWrite">>) =>
    calculateCost(model, { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: zeroCost(), ...tokens }).total;
  const hit = price({ cacheRead: promptTokens });
  const miss = price(model.cost.cacheWrite > 0 ? { cacheWrite: promptTokens } : { input: promptTokens });
  const warmCost = price({ cacheRead: promptTokens, output: 1 });
  const missCost = Math.max(0, miss - hit);
  const continuationProbability = phase === "idle" ? IDLE_CONTINUATION : 1;
  const expectedSavings = continuationProbability * missCost - warmCost;
  return {
    phase,
    warmCost,
    missCost,
    continuationProbability,
    expectedSavings,
    economicsAvailable: promptTokens > 0 && (hit > 0 || miss > 0),
    action: expectedSavings >= MINIMUM_SAVINGS ? ("warm" as const) : ("stop" as const),
  };
}
