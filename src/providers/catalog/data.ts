import type { Api, CostTier, ReasoningOption, ThinkingLevel } from "../types.ts";

/**
 * One model as the catalog and `models.json` describe it: every field but `id` optional
 * (absent fields take the provider's defaults). The embedded catalog, a refreshed cache and
 * models.json entries all have this shape, so they merge key by key.
 */
export interface ModelDef {
  id: string;
  name?: string;
  api?: Exclude<Api, "scripted" | "pi-virtual">;
  baseUrl?: string;
  family?: string;
  reasoning?: boolean;
  reasoningOptions?: ReasoningOption[];
  thinkingLevels?: ThinkingLevel[];
  input?: ("text" | "image")[];
  contextWindow?: number;
  maxTokens?: number;
  cost?: { input?: number; output?: number; cacheRead?: number; cacheWrite?: number; tiers?: CostTier[] };
  headers?: Record<string, string>;
  releaseDate?: string;
  lastUpdated?: string;
  status?: "deprecated" | "alpha" | "beta";
  toolCall?: boolean;
}

export interface CatalogProvider {
  id: string;
  name: string;
  api: Exclude<Api, "scripted" | "pi-virtual">;
  baseUrl: string;
  /** Environment variables that may hold the key, in order of preference. */
  env: string[];
  doc?: string;
  models: ModelDef[];
}

/** What `bun run catalog` embeds and `pion models refresh` caches. */
export interface CatalogData {
  /** Where the data came from (a file or URL) and when. */
  source: string;
  /** The newest `lastUpdated` of any model: how recent the data is. */
  date: string;
  providers: CatalogProvider[];
}
