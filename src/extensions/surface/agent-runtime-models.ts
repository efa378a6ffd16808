/**
 * The reference's `ModelRuntime` (its pi-ai `Models` collection of providers, models and
 * credentials) over pion's registry (src/providers/models.ts): the catalog, models.json and
 * auth.json that `ModelRegistry` (coding-models.ts) reads, and calls through pion's providers
 * with this runtime's keys. Keys set with `setRuntimeApiKey` win over the files and the
 * environment for this runtime only. pion has chat models only and takes providers from
 * extensions through `pi.registerProvider`, so registering providers or virtual models here,
 * logins, images and classifiers throw, naming the method.
 */
import { pionHome } from "../../config.ts";
import type { ModelRegistry as PionModels } from "../../providers/models.ts";
import type { Model } from "../../providers/types.ts";
import { completeModel, streamModel, type CallContext, type CallOptions } from "../model-calls.ts";
import { readStoredCredential } from "./coding-trust.ts";

type ModelType = "chat" | "image" | "classifier";
/** pi-ai's auth of one request: the key and headers, and a label of where they came from. */
type AuthResult = { auth: { apiKey?: string; headers?: Record<string, string> }; source?: string };
type AuthCheck = { type: "api_key" | "oauth"; source?: string };

export interface CreateModelRuntimeOptions {
  authPath?: string;
  /** null: no models.json at all. */
  modelsPath?: string | null;
  signal?: AbortSignal;
}

const notInPion = (method: string, why: string) => new Error(`ModelRuntime.${method} is not available in pion: ${why}`);
const CHAT_ONLY = "pion has chat models only";
const NO_REGISTRATION = "extensions register providers with pi.registerProvider";

const providerOf = (target: string | { provider: string }) => (typeof target === "string" ? target : target.provider);

export class ModelRuntime {
  readonly #options: CreateModelRuntimeOptions;
  #models: PionModels | undefined;
  #warnings: string[] = [];
  readonly #runtimeKeys = new Map<string, string>();

  /** The reference makes runtimes with `create()` only; pion's ModelRegistry makes its own with this. */
  constructor(options: CreateModelRuntimeOptions = {}) {
    this.#options = options;
  }

  /** A runtime over pion's model files, or the ones `authPath` / `modelsPath` name. */
  static async create(options: CreateModelRuntimeOptions = {}): Promise<ModelRuntime> {
    options.signal?.throwIfAborted();
    const runtime = new ModelRuntime(options);
    void runtime.registry;
    return runtime;
  }

  /** pion's registry this runtime reads (ModelRegistry over a runtime shares it). */
  get registry(): PionModels {
    // The catalog code loads with the first runtime, not with every extension.
    const { loadModels } = require("../../providers/models.ts") as typeof import("../../providers/models.ts");
    const { authPath, modelsPath } = this.#options;
    return (this.#models ??= loadModels(pionHome(), process.env, undefined, {
      warn: (msg) => this.#warnings.push(msg),
      ...(modelsPath === null ? { paths: [] } : modelsPath ? { paths: [modelsPath] } : {}),
      ...(authPath ? { authPaths: [authPath] } : {}),
    }));
  }

  getProviders(): readonly Record<string, unknown>[] {
    return this.registry.providers().map((id) => this.#provider(id));
  }
  getProvider(providerId: string): Record<string, unknown> | undefined {
    return this.registry.providers().includes(providerId) ? this.#provider(providerId) : undefined;
  }

  /** pi-ai's provider object for one of pion's providers: its models, its key through this runtime, calls through pion's providers. */
  #provider(id: string): Record<string, unknown> {
    const { createProvider } = require("./ai-providers-provider.ts") as typeof import("./ai-providers-provider.ts");
    const defaults = this.registry.providerDefaults(id);
    const models = this.registry.models(id);
    const call = (model: Model, context: CallContext, options?: CallOptions) => this.stream(model, context, options);
    return createProvider({
      id,
      name: id,
      baseUrl: defaults?.baseUrl ?? models[0]?.baseUrl,
      ...(defaults?.headers ? { headers: defaults.headers } : {}),
      auth: {
        apiKey: {
          name: "API key",
          check: () => this.checkAuth(id),
          resolve: () => this.getAuth(id),
          login: () => Promise.reject(notInPion("login", "log in with `pion login`")),
        },
      },
      models,
      api: { stream: call as never, streamSimple: call as never },
    });
  }
  getModels(providerId?: string): readonly Model[] {
    return providerId ? this.registry.models(providerId) : this.registry.all();
  }
  getModel(providerId: string, modelId: string): Model | undefined {
    return this.registry.find(providerId, modelId);
  }
  getPhysicalModel(providerId: string, modelId: string): Model | undefined {
    return this.getModel(providerId, modelId);
  }
  getModelsOfType(type: ModelType, providerId?: string): readonly Model[] {
    return type === "chat" ? this.getModels(providerId) : [];
  }
  getModelOfType(type: ModelType, providerId: string, modelId: string): Model | undefined {
    return type === "chat" ? this.getModel(providerId, modelId) : undefined;
  }
  getAllModels(providerId?: string): readonly Model[] {
    return this.getModels(providerId);
  }

  hasConfiguredAuth(providerId: string): boolean {
    return this.#runtimeKeys.has(providerId) || this.registry.apiKey(providerId) !== undefined;
  }
  /** Models whose provider has a key, as of now. */
  getAvailableSnapshot(): readonly Model[] {
    const keyed = [...this.#runtimeKeys.keys()].flatMap((p) => this.registry.models(p));
    const seen = new Set<Model>(this.registry.available());
    return [...seen, ...keyed.filter((m) => !seen.has(m))];
  }
  async getAvailable(providerId?: string): Promise<readonly Model[]> {
    return this.getAvailableSnapshot().filter((m) => !providerId || m.provider === providerId);
  }
  async getAvailableOfType(type: ModelType, providerId?: string): Promise<readonly Model[]> {
    return type === "chat" ? this.getAvailable(providerId) : [];
  }
  getAllAvailable(providerId?: string): Promise<readonly Model[]> {
    return this.getAvailable(providerId);
  }
  /** Whether the provider has a key and of which kind, labelled as pi-ai labels it; undefined without one. */
  async checkAuth(providerId: string): Promise<AuthCheck | undefined> {
    if (!this.hasConfiguredAuth(providerId)) return undefined;
    return { type: this.isUsingOAuth(providerId) ? "oauth" : "api_key", source: this.#authSource(providerId) };
  }

  /** pi-ai's label of where a provider's key comes from: a stored one (auth.json, a runtime key), a login, models.json, or the variable's name. */
  #authSource(providerId: string): string | undefined {
    if (this.#runtimeKeys.has(providerId)) return "stored credential";
    if (this.isUsingOAuth(providerId)) return "OAuth";
    const origin = this.registry.keyOrigin(providerId);
    return origin === "auth.json" || origin === "--api-key" ? "stored credential" : origin === "models.json" ? "configured API key" : origin;
  }

  /** The key and headers a request to the provider is sent with (an expired login is refreshed first); undefined without a key. */
  async getAuth(target: string | { provider: string }, overrides: { apiKey?: string } = {}): Promise<AuthResult | undefined> {
    const provider = providerOf(target);
    if (overrides.apiKey) return { auth: { apiKey: overrides.apiKey } };
    const runtimeKey = this.#runtimeKeys.get(provider);
    if (runtimeKey) return { auth: { apiKey: runtimeKey }, source: "stored credential" };
    const auth = await this.registry.requestAuth(provider);
    if (auth.apiKey === undefined && auth.headers === undefined && this.registry.apiKey(provider) === undefined) return undefined;
    const source = this.#authSource(provider);
    return { auth: { ...(auth.apiKey !== undefined ? { apiKey: auth.apiKey } : {}), ...(auth.headers ? { headers: auth.headers } : {}) }, ...(source ? { source } : {}) };
  }

  async setRuntimeApiKey(providerId: string, apiKey: string): Promise<void> {
    this.#runtimeKeys.set(providerId, apiKey);
  }
  async removeRuntimeApiKey(providerId: string): Promise<void> {
    this.#runtimeKeys.delete(providerId);
  }
  /** pion writes credentials synchronously: nothing is ever in flight. */
  async settleCredentialWrites(): Promise<void> {}

  isUsingOAuth(providerId: string): boolean {
    return !this.#runtimeKeys.has(providerId) && this.registry.keyOrigin(providerId) === "auth.json" && readStoredCredential(providerId)?.type === "oauth";
  }
  isUsingSubscription(providerId: string): boolean {
    return this.isUsingOAuth(providerId);
  }

  /** Whether the provider has a key, and where pion found it (the variable's name as `label` for one from the environment). */
  getProviderAuthStatus(providerId: string): { configured: boolean; source?: string; label?: string } {
    if (this.#runtimeKeys.has(providerId)) return { configured: true, source: "runtime" };
    const origin = this.registry.keyOrigin(providerId);
    if (this.registry.apiKey(providerId) === undefined || origin === undefined) return { configured: false };
    if (origin === "auth.json") return { configured: true, source: "stored" };
    if (origin === "models.json") {
      const command = this.registry.fileProviders?.().get(providerId)?.apiKey?.startsWith("!");
      return { configured: true, source: command ? "models_json_command" : "models_json_key" };
    }
    if (origin === "--api-key") return { configured: true, source: "runtime" };
    return { configured: true, source: "environment", label: origin };
  }

  getError(): string | undefined {
    void this.registry;
    return this.#warnings.length ? this.#warnings.join("\n") : undefined;
  }

  /** Reads models.json and auth.json again (the catalog itself is downloaded by `pion models refresh`). */
  async refresh(): Promise<{ aborted: boolean; errors: ReadonlyMap<string, Error> }> {
    this.#models = undefined;
    this.#warnings = [];
    void this.registry;
    return { aborted: false, errors: new Map() };
  }

  /** Providers registered on this runtime: none in pion. */
  getRegisteredProviderIds(): readonly string[] {
    return [];
  }
  getRegisteredProviderConfig(_providerId: string): undefined {
    return undefined;
  }
  getRegisteredNativeProvider(_providerId: string): undefined {
    return undefined;
  }

  /**
   * One call through pion's providers with this runtime's key for the model's provider unless
   * `options.apiKey` names one. A login's token is left to the session's auth, which refreshes it.
   */
  stream(model: Model, context: CallContext, options: CallOptions = {}) {
    return streamModel(model, context, { ...options, ...this.#callKey(model.provider, options) });
  }
  streamSimple(model: Model, context: CallContext, options: CallOptions = {}) {
    return this.stream(model, context, options);
  }
  complete(model: Model, context: CallContext, options: CallOptions = {}) {
    return completeModel(model, context, { ...options, ...this.#callKey(model.provider, options) });
  }
  completeSimple(model: Model, context: CallContext, options: CallOptions = {}) {
    return this.complete(model, context, options);
  }

  #callKey(provider: string, options: CallOptions): { apiKey?: string } {
    const apiKey = options.apiKey ?? this.#runtimeKeys.get(provider) ?? (this.isUsingOAuth(provider) ? undefined : this.registry.apiKey(provider));
    return apiKey ? { apiKey } : {};
  }

  registerProvider(): never {
    throw notInPion("registerProvider", NO_REGISTRATION);
  }
  registerNativeProvider(): never {
    throw notInPion("registerNativeProvider", NO_REGISTRATION);
  }
  unregisterProvider(): never {
    throw notInPion("unregisterProvider", NO_REGISTRATION);
  }
  registerVirtualModel(): never {
    throw notInPion("registerVirtualModel", "pion has no virtual models");
  }
  unregisterVirtualModel(): never {
    throw notInPion("unregisterVirtualModel", "pion has no virtual models");
  }
  resolveModel(): Promise<never> {
    return Promise.reject(notInPion("resolveModel", "pion has no virtual models"));
  }
  generateImages(): Promise<never> {
    return Promise.reject(notInPion("generateImages", CHAT_ONLY));
  }
  classify(): Promise<never> {
    return Promise.reject(notInPion("classify", CHAT_ONLY));
  }
  streamDeferred(): never {
    throw notInPion("streamDeferred", "pion has no deferred requests");
  }
  fetchDeferred(): Promise<never> {
    return Promise.reject(notInPion("fetchDeferred", "pion has no deferred requests"));
  }
  cancelDeferred(): Promise<never> {
    return Promise.reject(notInPion("cancelDeferred", "pion has no deferred requests"));
  }
  login(): Promise<never> {
    return Promise.reject(notInPion("login", "log in with `pion login`"));
  }
  logout(): Promise<never> {
    return Promise.reject(notInPion("logout", "log out with `pion logout`"));
  }
  listCredentials(): Promise<never> {
    return Promise.reject(notInPion("listCredentials", "pion does not list stored credentials to extensions"));
  }
}
