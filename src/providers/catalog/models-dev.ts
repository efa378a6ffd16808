import * as v from "valibot";

/**
 * The shape models.dev serves at https://models.dev/api.json (the fields pion reads; unknown
 * keys are allowed, so the data may grow without breaking a refresh).
 */
const Price = v.optional(v.number());
const TierSchema = v.looseObject({
  input: v.number(),
  output: v.number(),
  cache_read: Price,
  cache_write: Price,
  tier: v.looseObject({ type: v.string(), size: v.optional(v.number()) }),
});
const ModelSchema = v.looseObject({
  id: v.string(),
  name: v.string(),
  family: v.optional(v.string()),
  release_date: v.optional(v.string()),
  last_updated: v.optional(v.string()),
  reasoning: v.optional(v.boolean()),
  reasoning_options: v.optional(v.array(v.looseObject({ type: v.string() }))),
  tool_call: v.optional(v.boolean()),
  status: v.optional(v.string()),
  modalities: v.optional(v.looseObject({ input: v.optional(v.array(v.string())), output: v.optional(v.array(v.string())) })),
  limit: v.looseObject({ context: v.optional(v.number()), output: v.optional(v.number()) }),
  cost: v.optional(
    v.looseObject({
      input: Price,
      output: Price,
      cache_read: Price,
      cache_write: Price,
      tiers: v.optional(v.array(TierSchema)),
      context_over_200k: v.optional(v.looseObject({ input: v.number(), output: v.number(), cache_read: Price, cache_write: Price })),
    }),
  ),
  provider: v.optional(v.looseObject({ npm: v.optional(v.string()), api: v.optional(v.string()), shape: v.optional(v.string()) })),
});
const ProviderSchema = v.looseObject({
  id: v.string(),
  name: v.string(),
  env: v.array(v.string()),
  npm: v.optional(v.string()),
  api: v.optional(v.string()),
  doc: v.optional(v.string()),
  models: v.record(v.string(), ModelSchema),
});
export const ModelsDevSchema = v.record(v.string(), ProviderSchema);

export type ModelsDev = v.InferOutput<typeof ModelsDevSchema>;
export type ModelsDevProvider = v.InferOutput<typeof ProviderSchema>;
export type ModelsDevModel = v.InferOutput<typeof ModelSchema>;
