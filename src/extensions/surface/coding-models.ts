/**
 * The reference's `ModelRegistry` over pion's models (src/providers/models.ts): the catalog and
 * models.json of pion's home and the reference's agent folder, keys from auth.json, models.json
 * and the environment, calls through pion's providers (model-calls.ts). The reference builds it
 * on a `ModelRuntime`, which pion does not offer; `new ModelRegistry()` reads pion's files
 * instead (on first use). pion has chat models only, and no providers registered at run time
 * through a registry (extensions use `pi.registerProvider`).
 */
import { pionHome } from "../../config.ts";
import type { ModelRegistry as PionModels } from "../../providers/models.ts";
import type { Model } from "../../providers/types.ts";
import { completeModel, streamModel } from "../model-calls.ts";
import { readStoredCredential } from "./coding-trust.ts";

type ModelType = "chat" | "image" | "classifier";
type Auth = { ok: true; apiKey?: string; headers?: Record<string, string> } | { ok: false; error: string };

const notInPion = (what: string) => new Error(`ModelRegistry.${what} is not available in pion: ${what.startsWith("register") || what.startsWith("unregister") ? "extensions register providers with pi.registerProvider" : "pion has chat models only"}`);

export class ModelRegistry {
  #models: PionModels | undefined;
  #warnings: string[] = [];

  constructor(runtime?: unknown) {
    if (runtime !== undefined) throw new Error("ModelRegistry over a ModelRuntime is not available in pion: `new ModelRegistry()` reads pion's own models");
  }

  get #registry(): PionModels {
    // The catalog code loads with the first registry, not with every extension.
    const { loadModels } = require("../../providers/models.ts") as typeof import("../../providers/models.ts");
    return (this.#models ??= loadModels(pionHome(), process.env, undefined, { warn: (msg) => this.#warnings.push(msg) }));
  }

  /** Reads models.json and auth.json again (the catalog itself is downloaded by `pion models refresh`). */
  async refresh(): Promise<{ aborted: boolean; errors: ReadonlyMap<string, Error> }> {
    this.#models = undefined;
    this.#warnings = [];
    void this.#registry;
    return { aborted: false, errors: new Map() };
  }

  /** What was wrong with the models files, if anything. */
  getError(): string | undefined {
    void this.#registry;
    return this.#warnings.length ? this.#warnings.join("\n") : undefined;
  }

  getAll(): Model[] {
    return [...this.#registry.all()];
  }
  getAvailable(): Model[] {
    return [...this.#registry.available()];
  }
  find(provider: string, modelId: string): Model | undefined {
    return this.#registry.find(provider, modelId);
  }
  findOfType(type: ModelType, provider: string, modelId: string): Model | undefined {
    return type === "chat" ? this.find(provider, modelId) : undefined;
  }
  getModelOfType(type: ModelType, provider: string, modelId: string): Model | undefined {
    return this.findOfType(type, provider, modelId);
  }
  getModelsOfType(type: ModelType, provider?: string): readonly Model[] {
    if (type !== "chat") return [];
    return provider ? this.#registry.models(provider) : this.getAll();
  }
  async getAvailableOfType(type: ModelType, provider?: string): Promise<readonly Model[]> {
    if (type !== "chat") return [];
    return this.getAvailable().filter((m) => !provider || m.provider === provider);
  }

  hasConfiguredAuth(model: { provider: string }): boolean {
    return this.#registry.apiKey(model.provider) !== undefined;
  }

  /** The key and headers a request to the model's provider is sent with (an expired login is refreshed first). */
  async getApiKeyAndHeaders(model: { provider: string }): Promise<Auth> {
    try {
      const auth = await this.#registry.requestAuth(model.provider);
      if (auth.apiKey === undefined && auth.headers === undefined && !this.hasConfiguredAuth(model)) return { ok: false, error: `No API key found for "${model.provider}"` };
      return { ok: true, ...auth };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }

  async getApiKeyForProvider(provider: string): Promise<string | undefined> {
    try {
      return (await this.#registry.requestAuth(provider)).apiKey;
    } catch {
      return undefined;
    }
  }

  /** Whether the provider has a key, and where pion found it. */
  getProviderAuthStatus(provider: string): { configured: boolean; source?: string; label?: string } {
    const origin = this.#registry.keyOrigin(provider);
    if (this.#registry.apiKey(provider) === undefined || origin === undefined) return { configured: false };
    const source = origin === "auth.json" ? "stored" : origin === "models.json" ? "models_json_key" : origin === "--api-key" ? "runtime" : "environment";
    return { configured: true, source, label: origin };
  }

  isUsingOAuth(model: { provider: string }): boolean {
    return this.#registry.keyOrigin(model.provider) === "auth.json" && readStoredCredential(model.provider)?.type === "oauth";
  }

  /** Providers registered through this registry: none in pion. */
  getRegisteredProviderIds(): readonly string[] {
    return [];
  }
  getRegisteredProviderConfig(): undefined {
    return undefined;
  }
  getRegisteredNativeProvider(): undefined {
    return undefined;
  }

  getProviderDisplayName(provider: string): string {
    return provider;
  }

  stream = streamModel;
  streamSimple = streamModel;
  complete = completeModel;

  classify(): Promise<never> {
    return Promise.reject(notInPion("classify"));
  }
  generateImages(): Promise<never> {
    return Promise.reject(notInPion("generateImages"));
  }
  registerProvider(): never {
    throw notInPion("registerProvider");
  }
  unregisterProvider(): never {
    throw notInPion("unregisterProvider");
  }
  registerVirtualModel(): never {
    throw notInPion("registerVirtualModel");
  }
  unregisterVirtualModel(): never {
    throw notInPion("unregisterVirtualModel");
  }
}
