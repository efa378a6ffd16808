import { familyTemplate, newestModel, unlistedModel } from "./catalog/choose.ts";
import { noticeDeprecated, noticeUnlisted } from "./catalog/notices.ts";
import { resolveModelReference } from "./model-reference.ts";
import type { ModelRegistry } from "./models.ts";
import { log } from "../util/log.ts";
import type { Model, ThinkingLevel } from "./types.ts";

export interface ModelChoice {
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

export interface CliModelResult {
  model?: Model;
  /** From a `:level` suffix; the caller applies it unless `--thinking` was given. */
  thinkingLevel?: ThinkingLevel;
  warning?: string;
  /** Set when no model was chosen: a one-line message for the user. */
  error?: string;
  /** Set when `model` is a custom id no catalog lists: the known model whose limits it borrowed. */
  unlisted?: { template?: Model };
}

/** The models a reference is resolved over, and which providers have credentials. */
export interface ModelPool {
  models: readonly Model[];
  usable(provider: string): boolean;
  /** A known provider's API and endpoint, for a custom id; else the provider's first model's. */
  defaults?(provider: string): { api: Model["api"]; baseUrl: string; headers?: Record<string, string> } | undefined;
}

export const registryPool = (registry: ModelRegistry): ModelPool => ({
  models: registry.all(),
  usable: (p) => registry.apiKey(p) !== undefined,
  defaults: (p) => registry.providerDefaults(p),
});

/**
 * `--model` (with `--provider`), as the reference resolves it: over every model, keyed or not
 * (so `--api-key` can set a provider up), with credentials only breaking ties between providers
 * (an inline key breaks none). An id no catalog lists, on a provider that is named, becomes a
 * custom model that borrows its family's limits (or its provider's first model's) (a `:level` then selects thinking unless
 * `--thinking` is given, in which case the suffix stays in the id).
 */
export function resolveCliModel(
  pool: ModelPool,
  o: { provider?: string; model?: string; thinking?: ThinkingLevel; inlineApiKey?: boolean },
): CliModelResult {
  if (!o.model) return {};
  const { models } = pool;
  if (models.length === 0) return { error: "No models available. Check your installation or add models to models.json." };
  const provider = o.provider ? models.find((m) => m.provider.toLowerCase() === o.provider!.toLowerCase())?.provider : undefined;
  if (o.provider && !provider) return { error: `Unknown provider "${o.provider}". Use --list-models to see available providers/models.` };
  const usable = o.inlineApiKey ? () => false : (p: string) => pool.usable(p);
  const found = resolveModelReference({ text: o.model, provider, thinkingSuffix: "strict", fuzzy: true }, models, usable);
  if (found.status === "resolved") return { model: found.model, thinkingLevel: found.thinkingLevel, warning: found.warning };
  if (found.status === "ambiguous") {
    const names = found.candidates.map((m) => `${m.provider}/${m.id}`).sort((a, b) => a.localeCompare(b));
    const why = o.inlineApiKey
      ? "--api-key does not choose a provider."
      : found.usableCount === 0
        ? "No matching provider is authenticated."
        : "More than one matching provider is authenticated.";
    return { error: `Model "${o.model}" is ambiguous across providers: ${names.join(", ")}. ${why} Use --provider or provider/model.` };
  }
  const target = found.target;
  if (!target) return { error: `Model "${o.model}" not found. Use --list-models to see available models.` };
  const id = o.thinking ? target.modelText : target.modelId;
  const suffixLevel = o.thinking ? undefined : target.thinkingLevel;
  const [first] = target.providerModels;
  // Its family's newest model, else (as in the reference) the provider's first.
  const template = familyTemplate(target.providerModels, id) ?? first;
  const model = unlistedModel(target.provider, id, pool.defaults?.(target.provider) ?? first, template);
  const wanted = o.thinking ?? suffixLevel;
  if (wanted && wanted !== "off") model.reasoning = true;
  return { model, thinkingLevel: suffixLevel, warning: `Model "${id}" not found for provider "${target.provider}". Using custom model id.`, unlisted: { template } };
}

/**
 * A provider to start on when nothing names one: it has a key from models.json, auth.json,
 * --api-key, a `*_API_KEY` variable or a token variable of that provider's own, or pion found it
 * at run time (a llama.cpp server). A generic token that happens to be set (GITHUB_TOKEN, HF_TOKEN) makes
 * its provider usable when named, but does not choose it.
 */
const PROVIDER_TOKENS = ["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "COPILOT_GITHUB_TOKEN"];

function autoPickable(registry: ModelRegistry, provider: string): boolean {
  if (registry.apiKey(provider) === undefined) return false;
  const origin = registry.keyOrigin(provider) ?? "";
  return ["models.json", "--api-key", "auth.json", "discovered"].includes(origin) || origin.endsWith("_API_KEY") || PROVIDER_TOKENS.includes(origin);
}

/**
 * The session's starting model: the pattern if given (see resolveCliModel; its warning goes to
 * stderr); else the provider's newest model; else
 * the newest model of the first provider (in the registry's order) with a key (see autoPickable). Throws a
 * one-line error for an unknown model or provider. A deprecated choice gets a stderr notice.
 */
export function chooseModel(
  registry: ModelRegistry,
  o: { pattern?: string; provider?: string; thinking?: ThinkingLevel; inlineApiKey?: boolean },
): ModelChoice {
  let choice: ModelChoice = {};
  if (o.pattern) {
    const found = resolveCliModel(registryPool(registry), { provider: o.provider, model: o.pattern, thinking: o.thinking, inlineApiKey: o.inlineApiKey });
    if (!found.model) throw new Error(found.error);
    if (found.warning) log("models", found.warning);
    if (found.unlisted) noticeUnlisted(found.model, found.unlisted.template);
    choice = { model: found.model, thinkingLevel: found.thinkingLevel };
  } else if (o.provider) {
    const model = newestModel(registry.models(o.provider));
    if (!model) throw new Error(`Unknown provider: ${o.provider}`);
    choice = { model };
  } else {
    for (const p of registry.providers()) {
      if (!autoPickable(registry, p)) continue;
      const model = newestModel(registry.models(p));
      if (model) {
        choice = { model };
        break;
      }
    }
  }
  if (choice.model) noticeDeprecated(choice.model, registry.models(choice.model.provider));
  return choice;
}
