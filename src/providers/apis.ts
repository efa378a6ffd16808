import type { StreamFn } from "./types.ts";

/**
 * The wire APIs pion has an adapter for (index.ts maps each to its adapter). A models.json
 * provider or model on any other API is skipped with a warning; adding an adapter means adding
 * its name here.
 */
export const IMPLEMENTED_APIS = ["anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "bedrock-converse-stream", "azure-openai-responses", "google-vertex", "anthropic-vertex", "mistral-conversations", "openai-codex-responses", "pi-messages"] as const;

export type ImplementedApi = (typeof IMPLEMENTED_APIS)[number];

/**
 * APIs added at run time by extensions (pi-ai's `registerApiProvider`): `streamByApi` sends a
 * model on one of them to its stream function, before pion's own adapter of the same name.
 */
const added = new Map<string, StreamFn>();

/** Add (or, with undefined, remove) a run-time API. */
export function setAddedApi(api: string, stream: StreamFn | undefined): void {
  if (stream) added.set(api, stream);
  else added.delete(api);
}

export const addedApi = (api: string): StreamFn | undefined => added.get(api);

/**
 * Streams one provider's models on one API take (an extension's `pi.registerProvider(name,
 * {api, streamSimple})`): only that provider's models, before any API-wide stream.
 */
const byProvider = new Map<string, { api: string; stream: StreamFn }>();

export function setProviderStream(provider: string, entry: { api: string; stream: StreamFn } | undefined): void {
  if (entry) byProvider.set(provider, entry);
  else byProvider.delete(provider);
}

/** The stream a model of `provider` on `api` takes, if its provider registered one for that API. */
export function providerStream(provider: string, api: string): StreamFn | undefined {
  const entry = byProvider.get(provider);
  return entry?.api === api ? entry.stream : undefined;
}

/** Whether pion can stream a model on `api`: one of its adapters, or an API an extension added. */
export const isImplementedApi = (api: string): api is ImplementedApi =>
  (IMPLEMENTED_APIS as readonly string[]).includes(api) || added.has(api) || [...byProvider.values()].some((e) => e.api === api);
