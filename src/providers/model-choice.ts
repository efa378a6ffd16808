import { familyTemplate, newestModel, unlistedModel } from "./catalog/choose.ts";
import { noticeDeprecated, noticeUnlisted } from "./catalog/notices.ts";
import { resolveModel, splitThinkingSuffix, type ModelRegistry } from "./models.ts";
import type { Model, ThinkingLevel } from "./types.ts";

export interface ModelChoice {
  model?: Model;
  thinkingLevel?: ThinkingLevel;
}

/** A model id rather than a search phrase: what a new, not yet catalogued id looks like. */
const looksLikeId = (s: string) => /^[\w.:@/-]+$/.test(s);

/**
 * Resolve a pattern (`id`, `provider/id`, fuzzy text, optional `:level`) against the registry.
 * A named provider is searched alone (one provider's data is parsed); otherwise models with a
 * usable key are searched before the rest of the catalog. With `unlisted`, an id no catalog
 * lists, on a provider it knows, becomes a model that borrows its family's limits.
 */
export function findModel(registry: ModelRegistry, pattern: string, provider?: string, unlisted = false): ModelChoice | undefined {
  const split = splitThinkingSuffix(pattern);
  let pat = split.pattern;
  let p = provider;
  const slash = pat.indexOf("/");
  if (!p && slash > 0 && registry.providerDefaults(pat.slice(0, slash))) {
    p = pat.slice(0, slash);
    pat = pat.slice(slash + 1);
  }
  const found = p ? resolveModel(registry.models(p), pat, p) : (resolveModel(registry.available(), pat) ?? resolveModel(registry.all(), pat));
  if (found) return { model: found.model, thinkingLevel: split.thinkingLevel };
  const defaults = p ? registry.providerDefaults(p) : undefined;
  if (!unlisted || !p || !defaults || !looksLikeId(pat)) return undefined;
  const template = familyTemplate(registry.models(p), pat);
  const model = unlistedModel(p, pat, defaults, template);
  noticeUnlisted(model, template);
  return { model, thinkingLevel: split.thinkingLevel };
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
 * The session's starting model: the pattern if given; else the provider's newest model; else
 * the newest model of the first provider (in the registry's order) with a key (see autoPickable). Throws a
 * one-line error for an unknown model or provider. A deprecated choice gets a stderr notice.
 */
export function chooseModel(registry: ModelRegistry, o: { pattern?: string; provider?: string }): ModelChoice {
  let choice: ModelChoice = {};
  if (o.pattern) {
    const found = findModel(registry, o.pattern, o.provider, true);
    if (!found) throw new Error(`Model not found: ${o.provider ? `${o.provider}/` : ""}${o.pattern}`);
    choice = found;
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
