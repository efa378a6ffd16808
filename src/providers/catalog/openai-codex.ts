import type { FileModel } from "../models-file.ts";
import type { CatalogProvider } from "./data.ts";

/**
 * The ChatGPT subscription backend (`openai-codex`): models.dev does not list it, so its models
 * are kept here as data. The ids, limits, list prices and efforts are the ones the
 * reference agent (pi-ai 1.6.0) offers for this provider, so `--model openai-codex/<id>` names
 * the same models in both agents. The backend serves only the ids it knows, none of which are in
 * models.dev's OpenAI list; a models.json `openai-codex` entry adds or overrides models as for any
 * provider. A ChatGPT login is the only credential: no environment variable holds one.
 */
export const OPENAI_CODEX_ID = "openai-codex";

type Prices = [input: number, output: number, cacheRead: number, cacheWrite: number];
type Tier = [contextOver: number, ...Prices];

/**
 * The efforts a model takes, as models.dev spells reasoning options (a `thinkingLevelMap` would
 * reach RPC clients as a field the wire's model has not got). `none` is "off"; the reference also
 * offers "minimal", sent as `low`, which pion's levels clamp to `low` all the same.
 */
const OFF_AS_NONE = ["none", "low", "medium", "high", "xhigh", "max"];
/** Reasoning cannot be switched off. */
const ALWAYS_ON = ["low", "medium", "high", "xhigh", "max"];

function codex(id: string, name: string, contextWindow: number, [input, output, cacheRead, cacheWrite]: Prices, tier: Tier, efforts: string[]): FileModel {
  const [contextOver, tInput, tOutput, tCacheRead, tCacheWrite] = tier;
  return {
    id,
    name,
    reasoning: true,
    reasoningOptions: [{ type: "effort", values: efforts }],
    input: ["text", "image"],
    contextWindow,
    maxTokens: 128000,
    cost: { input, output, cacheRead, cacheWrite, tiers: [{ contextOver, input: tInput, output: tOutput, cacheRead: tCacheRead, cacheWrite: tCacheWrite }] },
  };
}

export const OPENAI_CODEX_PROVIDER: CatalogProvider & { models: FileModel[] } = {
  id: OPENAI_CODEX_ID,
  name: "OpenAI Codex",
  api: "openai-codex-responses",
  baseUrl: "https://chatgpt.com/backend-api",
  env: [],
  models: [
    codex("gpt-5.6-luna", "GPT-5.6 Luna", 272000, [0.2, 1.2, 0.02, 0.25], [272000, 0.4, 1.8, 0.04, 0.5], OFF_AS_NONE),
    codex("gpt-5.6-sol", "GPT-5.6 Sol", 272000, [4, 20, 0.4, 5], [272000, 8, 30, 0.8, 10], OFF_AS_NONE),
    codex("gpt-5.6-terra", "GPT-5.6 Terra", 272000, [2, 12, 0.2, 2.5], [272000, 4, 18, 0.4, 5], OFF_AS_NONE),
    codex("gpt-6-astra", "GPT-6 Astra", 272000, [10, 50, 1, 12.5], [272000, 20, 75, 2, 25], ALWAYS_ON),
    codex("gpt-6-luna", "GPT-6 Luna", 272000, [0.1, 0.5, 0.01, 0.125], [272000, 0.2, 0.75, 0.02, 0.25], OFF_AS_NONE),
    codex("gpt-6-sol", "GPT-6 Sol", 272000, [2, 10, 0.2, 2.5], [272000, 4, 15, 0.4, 5], OFF_AS_NONE),
    codex("gpt-6.1-sol", "GPT-6.1 Sol", 500000, [2, 10, 0.1, 2.5], [272000, 4, 15, 0.2, 5], ALWAYS_ON),
    codex("gpt-6.1-terra", "GPT-6.1 Terra", 500000, [1, 5, 0.05, 1.25], [272000, 2, 7.5, 0.1, 2.5], OFF_AS_NONE),
    codex("gpt-6.2-astra", "GPT-6.2 Astra", 272000, [8, 40, 0.4, 10], [272000, 16, 60, 0.8, 20], ALWAYS_ON),
    codex("gpt-6.2-sol", "GPT-6.2 Sol", 500000, [2, 10, 0.1, 2.5], [272000, 4, 15, 0.2, 5], ALWAYS_ON),
  ],
};
