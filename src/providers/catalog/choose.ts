import type { Model } from "../types.ts";

const byDateDesc = (a: Model, b: Model) => (b.releaseDate ?? "").localeCompare(a.releaseDate ?? "");

/**
 * The model to use when only the provider is known: the newest (by release date) chat model
 * that calls tools and is not deprecated, stable before alpha/beta; on a tie, the catalog's
 * order (ids sort an alias before its dated snapshots). Undefined for an empty list.
 */
export function newestModel(models: readonly Model[]): Model | undefined {
  const usable = models.filter((m) => m.toolCall !== false && m.status !== "deprecated");
  const pool = usable.some((m) => !m.status) ? usable.filter((m) => !m.status) : usable;
  if (pool.length === 0) return models[0];
  return [...pool].sort(byDateDesc)[0];
}

/** The newest model of `family`, other than `except`. */
function newestOfFamily(models: readonly Model[], family: string, except?: Model): Model | undefined {
  const same = models.filter((m) => m.family === family && m !== except && m.status !== "deprecated" && m.toolCall !== false);
  return same.length > 0 ? [...same].sort(byDateDesc)[0] : undefined;
}

/**
 * The known model an unknown id most likely follows: cut the id back one `-`/`.` part at a
 * time until it names a known model or family ("claude-sonnet-5-5" -> "claude-sonnet-5"),
 * then take the newest model of that family.
 */
export function familyTemplate(models: readonly Model[], id: string): Model | undefined {
  for (let prefix = id; prefix.length > 0; prefix = prefix.slice(0, Math.max(prefix.lastIndexOf("-"), prefix.lastIndexOf("."), 0))) {
    const exact = models.find((m) => m.id === prefix);
    if (exact) return (exact.family && newestOfFamily(models, exact.family)) || exact;
    const family = newestOfFamily(models, prefix);
    if (family) return family;
  }
  return undefined;
}

/** A current model to move to from a deprecated one: the newest of its family. */
export function replacementFor(models: readonly Model[], model: Model): Model | undefined {
  return model.family ? newestOfFamily(models, model.family, model) : undefined;
}

/**
 * A model for an id the catalog does not list, on a provider it knows: the template's limits,
 * modalities and reasoning (new models appear before any catalog lists them), no prices.
 */
export function unlistedModel(
  provider: string,
  id: string,
  defaults: { api: Model["api"]; baseUrl: string; headers?: Record<string, string> },
  template: Model | undefined,
): Model {
  const m: Model = {
    id,
    name: id,
    api: template?.api ?? defaults.api,
    provider,
    baseUrl: template?.baseUrl ?? defaults.baseUrl,
    reasoning: template?.reasoning ?? false,
    input: template ? [...template.input] : ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: template?.contextWindow ?? 128000,
    maxTokens: template?.maxTokens ?? 16384,
  };
  const headers = template?.headers ?? defaults.headers;
  if (headers) m.headers = headers;
  if (template?.thinkingLevels) m.thinkingLevels = template.thinkingLevels;
  if (template?.reasoningOptions) m.reasoningOptions = template.reasoningOptions;
  if (template?.family) m.family = template.family;
  return m;
}
