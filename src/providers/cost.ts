import type { Model, ModelCost, Usage } from "./types.ts";

/**
 * The per-million prices for one request: the model's base prices, or those of the highest
 * tier whose `contextOver` the request's input (fresh, cache-read and cache-written tokens)
 * exceeds. A tier without its own cache prices keeps the base ones.
 */
export function pricesFor(cost: ModelCost, inputTokens: number): Omit<ModelCost, "tiers"> {
  let tier: NonNullable<ModelCost["tiers"]>[number] | undefined;
  for (const t of cost.tiers ?? []) if (inputTokens > t.contextOver && (!tier || t.contextOver > tier.contextOver)) tier = t;
  if (!tier) return { input: cost.input, output: cost.output, cacheRead: cost.cacheRead, cacheWrite: cost.cacheWrite };
  return { input: tier.input, output: tier.output, cacheRead: tier.cacheRead ?? cost.cacheRead, cacheWrite: tier.cacheWrite ?? cost.cacheWrite };
}

/**
 * Fill in totalTokens and the cost breakdown from the model's per-million prices (tiered by input
 * size). One-hour cache writes (`cacheWrite1h`, a part of `cacheWrite`) cost twice the input price,
 * Anthropic's published rate: the catalog (models.dev) has no one-hour price. A total the provider
 * already reported (`cost.totalFromProvider` true, see `applyReportedCost`) stands; otherwise the
 * total is the sum of the parts and `totalFromProvider` is false.
 */
export function priceUsage(usage: Usage, model: Model): Usage {
  const p = pricesFor(model.cost, usage.input + usage.cacheRead + usage.cacheWrite);
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  const c = usage.cost;
  const longWrite = Math.min(usage.cacheWrite1h ?? 0, usage.cacheWrite);
  c.input = (usage.input * p.input) / 1e6;
  c.output = (usage.output * p.output) / 1e6;
  c.cacheRead = (usage.cacheRead * p.cacheRead) / 1e6;
  c.cacheWrite = ((usage.cacheWrite - longWrite) * p.cacheWrite + longWrite * 2 * p.input) / 1e6;
  if (c.totalFromProvider !== true) {
    c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
    c.totalFromProvider = false;
  }
  return usage;
}

/** OpenRouter's billing fields on a reply's usage (not in OpenAI's schema). */
export interface ReportedCost {
  cost?: unknown;
  is_byok?: unknown;
  cost_details?: { upstream_inference_cost?: unknown; upstream_inference_prompt_cost?: unknown; upstream_inference_completions_cost?: unknown } | null;
}

/**
 * Take the provider's billed total when its accounting is complete: `cost` alone when OpenRouter
 * paid the upstream provider (`is_byok` false); with the user's own key (`is_byok` true) OpenRouter's
 * fee plus the upstream cost it reports. Anything incomplete or invalid leaves the catalog's price.
 */
export function applyReportedCost(usage: Usage, reported: ReportedCost): void {
  if (!isPrice(reported.cost)) return;
  let total: number | undefined;
  if (reported.is_byok === false) total = reported.cost;
  else if (reported.is_byok === true && reported.cost_details) {
    const d = reported.cost_details;
    const upstream = isPrice(d.upstream_inference_cost)
      ? d.upstream_inference_cost
      : d.upstream_inference_cost === null && isPrice(d.upstream_inference_prompt_cost) && isPrice(d.upstream_inference_completions_cost)
        ? d.upstream_inference_prompt_cost + d.upstream_inference_completions_cost
        : undefined;
    if (upstream !== undefined) total = reported.cost + upstream;
  }
  if (total === undefined) return;
  usage.cost.total = total;
  usage.cost.totalFromProvider = true;
}

const isPrice = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x) && x >= 0;

/** OpenRouter, by provider id or by its host: the provider whose `usage.cost` pion believes. */
export const isOpenRouter = (model: Model): boolean => model.provider === "openrouter" || /(^|\.)openrouter\.ai$/.test(hostOf(model.baseUrl));

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    return "";
  }
}
