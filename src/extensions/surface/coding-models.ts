/**
 * The reference's `ModelRegistry` over pion's models (src/providers/models.ts): the catalog and
 * models.json of pion's home and the reference's agent folder, keys from auth.json, models.json
 * and the environment, calls through pion's providers (model-calls.ts). As in the reference it may
 * be built on a `ModelRuntime` (agent-runtime-models.ts), whose files and keys it then answers
 * with; `new ModelRegistry()` reads pion's files (on first use). pion has chat models only, and no
 * providers registered at run time through a registry (extensions use `pi.registerProvider`).
 */
import type { ModelRegistry as PionModels } from "../../providers/models.ts";
import type { Model } from "../../providers/types.ts";
import { completeModel, streamModel } from "../model-calls.ts";
import { ModelRuntime } from "./agent-runtime-models.ts";

type ModelType = "chat" | "image" | "classifier";
type Auth = { ok: true; apiKey?: string; headers?: Record<string, string> } | { ok: false; error: string };

const notInPion = (what: string) => new Error(`ModelRegistry.${what} is not available in pion: ${what.startsWith("register") || what.startsWith("unregister") ? "extensions register providers with pi.registerProvider" : "pion has chat models only"}`);

export class ModelRegistry {
  readonly #runtime: ModelRuntime;
  /** Whether calls use the runtime's keys (one given) or the session's (pion's own files, as the session reads them). */
  readonly #runtimeKeys: boolean;

  constructor(runtime?: unknown) {
    if (runtime !== undefined && !(runtime instanceof ModelRuntime)) throw new TypeError("ModelRegistry takes a ModelRuntime (ModelRuntime.create()) or nothing");
    this.#runtime = runtime ?? new ModelRuntime();
    this.#runtimeKeys = runtime !== undefined;
  }

  get #registry(): PionModels {
    return this.#runtime.registry;
  }

  /** Reads models.json and auth.json again (the catalog itself is downloaded by `pion models refresh`). */
  refresh(): Promise<{ aborted: boolean; errors: ReadonlyMap<string, Error> }> {
    return this.#runtime.refresh();
  }

  /** What was wrong with the models files, if anything. */
  getError(): string | undefined {
    return this.#runtime.getError();
  }

  getAll(): Model[] {
    return [...this.#registry.all()];
  }
  getAvailable(): Model[] {
    return [...this.#runtime.getAvailableSnapshot()];
  }
  find(provider: string, modelId: string): Model | undefined {
    return this.#registry.find(provider, modelId);
  }
  findOfType(type: ModelType, provider: string, modelId: string): Model | undefined {
    return this.#runtime.getModelOfType(type, provider, modelId);
  }
  getModelOfType(type: ModelType, provider: string, modelId: string): Model | undefined {
    return this.findOfType(type, provider, modelId);
  }
  getModelsOfType(type: ModelType, provider?: string): readonly Model[] {
    return this.#runtime.getModelsOfType(type, provider);
  }
  getAvailableOfType(type: ModelType, provider?: string): Promise<readonly Model[]> {
    return this.#runtime.getAvailableOfType(type, provider);
  }

  hasConfiguredAuth(model: { provider: string }): boolean {
    return this.#runtime.hasConfiguredAuth(model.provider);
  }

  /** The key and headers a request to the model's provider is sent with (an expired login is refreshed first). */
  async getApiKeyAndHeaders(model: { provider: string }): Promise<Auth> {
    try {
      const auth = await this.#runtime.getAuth(model.provider);
      return auth ? { ok: true, ...auth.auth } : { ok: false, error: `No API key found for "${model.provider}"` };
    } catch (err) {
      return { ok: false, error: err instanceof Error ? err.message : String(err) };
    }
  }

  async getApiKeyForProvider(provider: string): Promise<string | undefined> {
    try {
      return (await this.#runtime.getAuth(provider))?.auth.apiKey;
    } catch {
      return undefined;
    }
  }

  /** Whether the provider has a key, and where pion found it. */
  getProviderAuthStatus(provider: string): { configured: boolean; source?: string; label?: string } {
    return this.#runtime.getProviderAuthStatus(provider);
  }

  isUsingOAuth(model: { provider: string }): boolean {
    return this.#runtime.isUsingOAuth(model.provider);
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

  stream: typeof streamModel = (model, context, options) => (this.#runtimeKeys ? this.#runtime.stream(model, context, options) : streamModel(model, context, options));
  streamSimple: typeof streamModel = (model, context, options) => this.stream(model, context, options);
  complete: typeof completeModel = (model, context, options) => (this.#runtimeKeys ? this.#runtime.complete(model, context, options) : completeModel(model, context, options));

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
