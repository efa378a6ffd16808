/**
 * Composition of the virtual models extensions register (`pi.registerVirtualModel`): the model
 * registry the session and the wire see, with them listed beside the physical models, and the
 * router the session asks for each request. The providers layer never sees either.
 *
 * A virtual model under a provider that has physical models is available when that provider
 * has credentials, and hides a physical model with the same id; under any other provider id it
 * is always available (it needs no key of its own).
 */
import type { ModelRegistry } from "../providers/models.ts";
import type { Model } from "../providers/types.ts";
import type { VirtualModelDefinition } from "../extensions/api.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import type { ModelRouter } from "../session/routing.ts";
import { withExtensionProviders } from "./extension-providers.ts";

/** What a virtual-only provider answers for its key: it needs none. */
const NO_KEY_NEEDED = "none";

const catalogEntries = new WeakMap<VirtualModelDefinition, Model>();

/** The catalog entry of a virtual model, as the reference lists one (no prices; unknown limits are 0). */
function entryOf(def: VirtualModelDefinition): Model {
  let m = catalogEntries.get(def);
  if (!m) {
    const levels = def.thinkingLevels?.length ? [...def.thinkingLevels] : ["off" as const];
    m = {
      id: def.id,
      name: typeof def.name === "string" && def.name ? def.name : def.id,
      api: "pi-virtual",
      provider: def.provider,
      baseUrl: "",
      reasoning: levels.some((l) => l !== "off"),
      input: def.input?.length ? [...def.input] : ["text", "image"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: def.contextWindow ?? 0,
      maxTokens: def.maxTokens ?? 0,
      thinkingLevels: levels,
    };
    catalogEntries.set(def, m);
  }
  return m;
}

/** `physical` with the providers extensions registered (extension-providers.ts) and the runner's virtual models (read at each call: extensions may register more later). */
export function withVirtualModels(physical: ModelRegistry, runner: ExtensionRunner): ModelRegistry {
  const base = withExtensionProviders(physical, runner);
  const virtual = () => runner.virtualModels().map(entryOf);
  const virtualOnly = (p: string) => base.providerDefaults(p) === undefined;
  const hides = (list: Model[]) => {
    const ids = new Set(list.map((m) => `${m.provider}/${m.id}`));
    return (m: Model) => !ids.has(`${m.provider}/${m.id}`);
  };
  // The provider check last: it may read the provider's catalog data.
  const apiKey = (p: string) => base.apiKey(p) ?? (virtual().some((m) => m.provider === p) && virtualOnly(p) ? NO_KEY_NEEDED : undefined);
  // Without virtual models (most runs) every answer is the base registry's own.
  return {
    ...base,
    providers: () => {
      const v = virtual();
      return v.length === 0 ? base.providers() : [...new Set([...base.providers(), ...v.map((m) => m.provider)])];
    },
    models: (p) => {
      const own = virtual().filter((m) => m.provider === p);
      return own.length === 0 ? base.models(p) : [...base.models(p).filter(hides(own)), ...own];
    },
    all: () => {
      const v = virtual();
      return v.length === 0 ? base.all() : [...base.all().filter(hides(v)), ...v];
    },
    apiKey,
    keyOrigin: (p) => base.keyOrigin(p) ?? (apiKey(p) === NO_KEY_NEEDED ? "virtual model" : undefined),
    requestAuth: async (p, signal) => (base.apiKey(p) === undefined && apiKey(p) !== undefined ? { apiKey: apiKey(p) } : base.requestAuth(p, signal)),
    find: (p, id) => virtual().find((m) => m.provider === p && m.id === id) ?? base.find(p, id),
    available: () => {
      const v = virtual();
      return v.length === 0 ? base.available() : [...base.available().filter(hides(v)), ...v.filter((m) => apiKey(m.provider) !== undefined)];
    },
  };
}

/** The session's router: the extension that registered the virtual model picks. */
export function extensionRouter(runner: ExtensionRunner): ModelRouter {
  return (request) => runner.routeVirtual(request.model.provider, request.model.id, { ...request });
}
