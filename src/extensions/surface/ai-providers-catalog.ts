/**
 * pi-ai/compat's static catalog reads and environment keys, from pion's catalog and key table:
 * `getModel` / `getModels` / `getProviders` read the built-in (or refreshed) catalog without
 * models.json, as the reference's read its generated one; a model comes in the reference's shape
 * (`type: "chat"`, price tiers with `inputTokensAbove`) and keeps pion's fields, so it can be
 * passed back to `stream`. `findEnvKeys` / `getEnvApiKey` read the variables pion reads a
 * provider's key from. The reference's provider ids are accepted where pion's differ.
 * `getImageModel` / `getImageModels` / `getImageProviders` read the image-model catalog (the
 * models.dev models that output images, for the image APIs pion implements), read on first use.
 */
import { pionHome } from "../../config.ts";
import { AMBIENT_KEY, ambientSource } from "../../providers/ambient.ts";
import { Catalog } from "../../providers/catalog/load.ts";
import { imageCatalog } from "../../providers/catalog/images.ts";
import type { ImageModel } from "../../providers/catalog/images-convert.ts";
import { BEARER_ENV, pionProviderId } from "../../providers/env-names.ts";
import { keyEnvNames } from "../../providers/keys.ts";
import { loadModels, type ModelRegistry } from "../../providers/models.ts";
import type { Model } from "../../providers/types.ts";

type Env = Record<string, string | undefined>;

let catalog: Catalog | undefined;
let registry: ModelRegistry | undefined;
const theCatalog = () => (catalog ??= new Catalog(pionHome()));
// No models.json, no auth.json: only the catalog's entries, as the reference's static read.
const catalogModels = () => (registry ??= loadModels(pionHome(), {}, undefined, { catalog: theCatalog(), paths: [], authPaths: [] }));

/** A pion model in the reference's shape: its fields, `type`, and each price tier's threshold under the reference's name too. */
function referenceShape(m: Model): Model & { type: "chat" } {
  const out = { ...m, type: "chat" as const };
  if (m.cost.tiers) out.cost = { ...m.cost, tiers: m.cost.tiers.map((t) => ({ ...t, inputTokensAbove: t.contextOver })) };
  return out;
}

export function getModel(provider: string, id: string): (Model & { type: "chat" }) | undefined {
  const m = catalogModels().find(pionProviderId(provider), id);
  return m ? referenceShape(m) : undefined;
}

export const getModels = (provider: string): (Model & { type: "chat" })[] => catalogModels().models(pionProviderId(provider)).map(referenceShape);

export const getProviders = (): string[] => catalogModels().providers();

export const getImageModel = (provider: string, id: string): ImageModel | undefined => imageCatalog().get(pionProviderId(provider))?.get(id);

export const getImageModels = (provider: string): ImageModel[] => [...(imageCatalog().get(pionProviderId(provider))?.values() ?? [])];

export const getImageProviders = (): string[] => [...imageCatalog().keys()];

/** As the reference reads a variable: the given environment's value, else the process's; empty counts as unset. */
const valueOf = (name: string, env?: Env): string | undefined => env?.[name] || process.env[name] || undefined;

/** The variables that hold a key for the provider, of those it is read from; undefined when none does. */
export function findEnvKeys(provider: string, env?: Env): string[] | undefined {
  const found = keyEnvNames(pionProviderId(provider), theCatalog()).filter((name) => valueOf(name, env));
  return found.length > 0 ? found : undefined;
}

/**
 * The provider's key from the environment. Anthropic's ANTHROPIC_AUTH_TOKEN goes out as a Bearer
 * header, not a key, so it is passed over; a cloud provider whose SDK finds its own credentials
 * (AWS, Google ADC) answers "<authenticated>" when they are there.
 */
export function getEnvApiKey(provider: string, env?: Env): string | undefined {
  const id = pionProviderId(provider);
  const names = findEnvKeys(id, env);
  const name = names?.find((n) => !(id === "anthropic" && n === BEARER_ENV));
  if (name) return valueOf(name, env);
  return ambientSource(id, { ...process.env, ...definedOnly(env) }) ? AMBIENT_KEY : undefined;
}

const definedOnly = (env?: Env): Env => Object.fromEntries(Object.entries(env ?? {}).filter(([, v]) => v));
