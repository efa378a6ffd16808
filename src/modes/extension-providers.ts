/**
 * Providers extensions register (`pi.registerProvider(name, config)`, config as a models.json
 * provider): their models join the registry the session and the wire see, so they are usable in
 * `--model`, `set_model`, `get_available_models` and `ctx.modelRegistry`; their `apiKey` reads as
 * in models.json (a literal, `$VAR`, a variable name, `!command`). A provider an extension
 * registers replaces a configured one of the same name. Read at each call: extensions may
 * register and unregister providers at any time.
 */
import { parseModelsFile, type FileProvider } from "../providers/models-file.ts";
import { toModel, type ModelRegistry } from "../providers/models.ts";
import { resolveKeySpec } from "../providers/keys.ts";
import type { Api, Model } from "../providers/types.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import { log } from "../util/log.ts";

interface Registered {
  provider: FileProvider;
  models: Model[];
}

const parsedConfigs = new WeakMap<object, Registered | null>();

function parse(name: string, config: unknown, path: string): Registered | undefined {
  const key = config as object;
  const cached = parsedConfigs.get(key);
  if (cached !== undefined) return cached ?? undefined;
  const provider = parseModelsFile({ providers: { [name]: config } }, `pi.registerProvider("${name}") in ${path}`, (msg) => log("extensions", msg)).get(name);
  const out = provider
    ? { provider, models: (provider.models ?? []).map((m) => toModel({ id: name, api: (provider.api ?? "openai-completions") as Api, baseUrl: provider.baseUrl ?? "", ...(provider.headers ? { headers: provider.headers } : {}), ...(provider.compat ? { compat: provider.compat } : {}) }, m)) }
    : null;
  parsedConfigs.set(key, out);
  return out ?? undefined;
}

export function withExtensionProviders(base: ModelRegistry, runner: ExtensionRunner, env: Record<string, string | undefined> = process.env): ModelRegistry {
  const registered = () => {
    const out = new Map<string, Registered>();
    for (const r of runner.providers()) {
      const p = parse(r.name, r.config, r.extensionPath);
      if (p) out.set(r.name, p);
    }
    return out;
  };
  const key = (p: string): string | undefined => {
    const spec = registered().get(p)?.provider.apiKey;
    return spec === undefined ? undefined : resolveKeySpec(spec, env);
  };
  const apiKey = (p: string) => (registered().has(p) ? key(p) : base.apiKey(p));
  return {
    ...base,
    providers: () => [...new Set([...base.providers(), ...registered().keys()])],
    models: (p) => registered().get(p)?.models ?? base.models(p),
    all: () => {
      const mine = registered();
      return mine.size === 0 ? base.all() : [...base.all().filter((m) => !mine.has(m.provider)), ...[...mine.values()].flatMap((r) => r.models)];
    },
    apiKey,
    keyOrigin: (p) => (registered().has(p) ? (key(p) !== undefined ? "extension provider" : undefined) : base.keyOrigin(p)),
    requestAuth: async (p, signal) => {
      if (!registered().has(p)) return base.requestAuth(p, signal);
      const k = key(p);
      return k === undefined ? {} : { apiKey: k };
    },
    find: (p, id) => (registered().has(p) ? registered().get(p)!.models.find((m) => m.id === id) : base.find(p, id)),
    available: () => {
      const mine = registered();
      if (mine.size === 0) return base.available();
      return [...base.available().filter((m) => !mine.has(m.provider)), ...[...mine].filter(([p]) => key(p) !== undefined).flatMap(([, r]) => r.models)];
    },
    providerDefaults: (p) => {
      const r = registered().get(p)?.provider;
      return r ? { api: (r.api ?? "openai-completions") as Api, baseUrl: r.baseUrl ?? "", ...(r.headers ? { headers: r.headers } : {}) } : base.providerDefaults(p);
    },
  };
}
