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

/** Fill in totalTokens and the cost breakdown from the model's per-million prices (tiered by input size). */
export function priceUsage(usage: Usage, model: Model): Usage {
  const p = pricesFor(model.cost, usage.input + usage.cacheRead + usage.cacheWrite);
  usage.totalTokens = usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  const c = usage.cost;
  c.input = (usage.input * p.input) / 1e6;
  c.output = (usage.output * p.output) / 1e6;
  c.cacheRead = (usage.cacheRead * p.cacheRead) / 1e6;
  c.cacheWrite = (usage.cacheWrite * p.cacheWrite) / 1e6;
  c.total = c.input + c.output + c.cacheRead + c.cacheWrite;
  return usage;
}
