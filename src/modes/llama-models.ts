import { discoverLlamaCpp, llamaConfigured, llamaServerUrl } from "../providers/llama-cpp.ts";
import type { ExtraProvider, ModelRegistry } from "../providers/models.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";

export interface LiveRegistry {
  /** Always the newest registry: what `refresh` found replaces what was there. */
  registry: ModelRegistry;
  /**
   * Ask the llama.cpp server for its models. `required` (the user named the provider): a
   * server that does not answer is an error naming its URL. Otherwise the server is asked only
   * when LLAMA_BASE_URL is set, and a failure is a stderr warning that leaves the list as it was.
   */
  refresh(required: boolean): Promise<void>;
}

/**
 * The model registry with the providers pion discovers at run time (llama.cpp), built by `load`
 * from what was found. Nothing is asked at start-up unless the caller refreshes.
 */
export function liveRegistry(load: (extra: ExtraProvider[]) => ModelRegistry, env: Record<string, string | undefined>): LiveRegistry {
  // Listeners for refreshed logins follow the registry across reloads.
  const listeners: Parameters<ModelRegistry["onNewCredentials"]>[0][] = [];
  const build = (extra: ExtraProvider[]) => {
    const next = load(extra);
    for (const l of listeners) next.onNewCredentials(l);
    return next;
  };
  let current = build([]);
  const registry: ModelRegistry = {
    providers: () => current.providers(),
    models: (p) => current.models(p),
    all: () => current.all(),
    apiKey: (p) => current.apiKey(p),
    keyOrigin: (p) => current.keyOrigin(p),
    requestAuth: (p, signal) => current.requestAuth(p, signal),
    keySources: (p) => current.keySources(p),
    onNewCredentials: (listener) => {
      listeners.push(listener);
      current.onNewCredentials(listener);
    },
    find: (p, id) => current.find(p, id),
    available: () => current.available(),
    credentials: () => current.credentials(),
    fileProviders: () => current.fileProviders?.() ?? new Map(),
    providerDefaults: (p) => current.providerDefaults(p),
  };
  const refresh = async (required: boolean) => {
    if (!required && !llamaConfigured(env)) return;
    try {
      const found = await discoverLlamaCpp(env);
      current = build([found]);
      if (required && found.models.length === 0) {
        throw new Error(`The llama.cpp server at ${llamaServerUrl(env)} has no model ready (a router started with --no-models-autoload loads one on request)`);
      }
    } catch (err) {
      if (required) throw err;
      log("models", errorMessage(err));
    }
  };
  return { registry, refresh };
}
