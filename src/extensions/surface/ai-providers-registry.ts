/**
 * pi-ai/compat's API registry: `registerApiProvider({api, stream, streamSimple}, sourceId?)` adds
 * or replaces the implementation of an API. An extension's implementation is also pion's: a
 * model on that API (from `pi.registerProvider`, models.json, or the session's own choice) is
 * streamed by it, through `streamByApi` (providers/apis.ts keeps the added ones). The built-in
 * entries are pion's own adapters (ai-providers-streams.ts) and change nothing there.
 */
import { setAddedApi } from "../../providers/apis.ts";
import { BUILT_IN_APIS, fromReferenceStream, type ReferenceStreamFn } from "./ai-providers-streams.ts";
import { createFauxCore, fauxControls, type FauxOptions } from "./ai-providers-faux.ts";

interface ApiProvider {
  api: string;
  stream: ReferenceStreamFn;
  streamSimple: ReferenceStreamFn;
}

const entries = new Map<string, { provider: ApiProvider; sourceId?: string; builtIn: boolean }>();

/** The reference refuses a model of another API before calling the implementation. */
function checked(api: string, fn: ReferenceStreamFn): ReferenceStreamFn {
  return (model, context, options) => {
    if (model.api !== api) throw new Error(`Mismatched api: ${model.api} expected ${api}`);
    return fn(model, context, options);
  };
}

function put(provider: ApiProvider, sourceId: string | undefined, builtIn: boolean): void {
  if (!provider || typeof provider.api !== "string") throw new TypeError("registerApiProvider({ api, stream, streamSimple }): api is a string");
  const wrapped: ApiProvider = { api: provider.api, stream: checked(provider.api, provider.stream), streamSimple: checked(provider.api, provider.streamSimple) };
  entries.set(provider.api, { provider: wrapped, ...(sourceId !== undefined ? { sourceId } : {}), builtIn });
  // The session's requests are "simple" ones: a thinking level, no provider-specific options.
  setAddedApi(provider.api, builtIn ? undefined : fromReferenceStream(typeof provider.streamSimple === "function" ? wrapped.streamSimple : wrapped.stream));
}

function remove(api: string): void {
  entries.delete(api);
  setAddedApi(api, undefined);
}

export function registerApiProvider(provider: ApiProvider, sourceId?: string): void {
  put(provider, sourceId, false);
}

export const getApiProvider = (api: string): ApiProvider | undefined => entries.get(api)?.provider;

export const getApiProviders = (): ApiProvider[] => [...entries.values()].map((e) => e.provider);

export function unregisterApiProviders(sourceId: string): void {
  for (const [api, e] of [...entries]) if (e.sourceId === sourceId) remove(api);
}

/** The built-in APIs, where nothing has registered one of the same name yet. */
export function registerBuiltInApiProviders(): void {
  for (const [api, make] of Object.entries(BUILT_IN_APIS)) if (!entries.has(api)) put({ api, ...make() }, undefined, true);
}

export function resetApiProviders(): void {
  for (const api of [...entries.keys()]) remove(api);
  registerBuiltInApiProviders();
}

/** The faux test provider on the registry: its API streams its scripted replies until `unregister()`. */
export function registerFauxProvider(options: FauxOptions = {}) {
  const core = createFauxCore(options);
  const sourceId = `faux-provider-${Math.random().toString(36).slice(2, 10)}`;
  registerApiProvider({ api: core.api, stream: core.stream as ReferenceStreamFn, streamSimple: core.streamSimple as ReferenceStreamFn }, sourceId);
  return { ...fauxControls(core), unregister: () => unregisterApiProviders(sourceId) };
}

// As the reference's compat module does when it loads (a few closures, no I/O).
registerBuiltInApiProviders();
