/**
 * pi-ai's `createModels`: a collection of provider objects (createProvider's, an extension's own)
 * with auth applied to every request. A provider's auth resolves as the reference's: a key given
 * with the request, else the stored credential (an OAuth one refreshed under the store's lock
 * when it expires within five minutes), else its ambient `apiKey.resolve` (environment, files).
 * Requests never reject: setup failures (unknown provider, no auth) end the stream with an error.
 * Dynamic providers' model lists refresh through the models store, each publication checked
 * against the provider's latest refresh so a superseded one changes nothing.
 * A parent span in `options.telemetry` gets each request's `pi.ai.request` span (a deferred
 * poll's `pi.ai.poll`) and metrics, as ai-telemetry.ts describes.
 */
import { InMemoryCredentialStore, InMemoryModelsStore, ModelsError, defaultProviderAuthContext, untilAborted } from "./ai-providers-auth.ts";
import { getOpenCodeSessionHeaders, mergeClientIdentity, type ClientIdentity } from "./ai-providers-identity.ts";
import { transcriptOf } from "../../providers/transcript.ts";
import { lazyStream, type ReferenceStream } from "./ai-providers-streams.ts";
import { observeModelRequest } from "./ai-telemetry.ts";
import type { Model } from "../../providers/types.ts";

type AnyModel = Model & { type?: string };
type Env = Record<string, string>;
type Credential = { type: string; key?: string; env?: Env; expires?: number } & Record<string, unknown>;
type AuthContext = { env(name: string): Promise<string | undefined>; fileExists(path: string): Promise<boolean> };
type AuthResult = { auth: { apiKey?: string; headers?: Record<string, string>; baseUrl?: string }; env?: Env; source?: string };
type ApiKeyAuth = { resolve(i: { ctx: AuthContext; credential?: Credential; signal: AbortSignal }): Promise<AuthResult | undefined>; check?: (i: { ctx: AuthContext; credential?: Credential; signal: AbortSignal }) => Promise<unknown>; login?: (...a: unknown[]) => Promise<Credential> };
type OAuthAuth = { refresh(c: Credential, signal: AbortSignal): Promise<Credential>; toAuth(c: Credential): Promise<AuthResult["auth"]>; login?: (...a: unknown[]) => Promise<Credential> };
type Fn = (...args: never[]) => never;
type Provider = {
  id: string;
  name: string;
  baseUrl?: string;
  auth: { apiKey?: ApiKeyAuth; oauth?: OAuthAuth };
  getModels(): AnyModel[];
  getAllModels?(): AnyModel[];
  refreshModels?(context: Record<string, unknown>): Promise<void>;
  refreshModelsAuth?: "credential" | "configured";
  filterModels?(models: AnyModel[], credential?: Credential): AnyModel[];
  filterAllModels?(models: AnyModel[], credential?: Credential): AnyModel[];
  stream: Fn;
  streamSimple: Fn;
  fetchDeferred?: Fn;
  cancelDeferred?: Fn;
  generateImages?: Fn;
  classify?: Fn;
};
type CredentialStore = InMemoryCredentialStore;
type ModelsStore = InMemoryModelsStore;
type RequestOptions = { apiKey?: string; env?: Env; headers?: Record<string, string | null>; signal?: AbortSignal; sessionId?: string; identity?: ClientIdentity; transformHeaders?: (h: Record<string, string | null>) => Record<string, string | null> | Promise<Record<string, string | null>> } & Record<string, unknown>;
type Overrides = { apiKey?: string; env?: Env; signal?: AbortSignal; minOAuthValidityMs?: number };

const typeOf = (m: AnyModel) => m.type ?? "chat";
const signalOf = (s?: AbortSignal) => s ?? new AbortController().signal;
const OAUTH_MIN_VALIDITY_MS = 5 * 60 * 1000;
const OAUTH_REFRESH_TIMEOUT_MS = 15_000;

/** Header maps merged case-insensitively, the later one winning. */
function mergeHeaders(base?: Record<string, string | null>, over?: Record<string, string | null>): Record<string, string | null> | undefined {
  if (!base && !over) return undefined;
  const out = { ...base };
  for (const [name, value] of Object.entries(over ?? {})) {
    for (const existing of Object.keys(out)) if (existing.toLowerCase() === name.toLowerCase()) delete out[existing];
    out[name] = value;
  }
  return out;
}

async function guarded<T>(code: string, message: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw new ModelsError(code, message, { cause: err });
  }
}

/**
 * Refresh a stored OAuth login under the store's lock, re-checking `stale` there so concurrent
 * callers refresh once. `signal` only cancels the wait for the lock: a refresh that started may
 * have rotated the refresh token, so it runs to the end (bounded by a timeout) and is stored.
 */
async function refreshStoredLogin(store: CredentialStore, providerId: string, oauth: OAuthAuth, stale: (c: Credential) => boolean, signal: AbortSignal): Promise<Credential | undefined> {
  const lockWait = new AbortController();
  const cancel = () => lockWait.abort(signal.reason);
  signal.addEventListener("abort", cancel, { once: true });
  if (signal.aborted) cancel();
  let after: Credential | undefined;
  try {
    after = await store.modify(
      providerId,
      async (current) => {
        signal.removeEventListener("abort", cancel);
        signal.throwIfAborted();
        if (current?.type !== "oauth" || !stale(current)) return undefined;
        return guarded("oauth", `OAuth refresh failed for ${providerId}`, () => oauth.refresh(current, AbortSignal.timeout(OAUTH_REFRESH_TIMEOUT_MS)));
      },
      { signal: lockWait.signal },
    );
  } catch (err) {
    if (err instanceof ModelsError) throw err;
    signal.throwIfAborted();
    throw new ModelsError("auth", `Credential store modify failed for ${providerId}`, { cause: err });
  } finally {
    signal.removeEventListener("abort", cancel);
  }
  return after?.type === "oauth" ? after : undefined;
}

class Models {
  private providers = new Map<string, Provider>();
  private generations = new Map<string, number>();
  private controllers = new Map<string, AbortController>();
  private publications = new Map<string, Promise<unknown>>();
  private readonly credentials: CredentialStore;
  private readonly modelsStore: ModelsStore;
  private readonly authContext: AuthContext;
  private readonly identity?: ClientIdentity;

  constructor(o: { credentials?: CredentialStore; modelsStore?: ModelsStore; authContext?: AuthContext; identity?: ClientIdentity } = {}) {
    this.credentials = o.credentials ?? new InMemoryCredentialStore();
    this.modelsStore = o.modelsStore ?? new InMemoryModelsStore();
    this.authContext = o.authContext ?? defaultProviderAuthContext();
    if (o.identity) this.identity = o.identity;
  }

  setProvider(provider: Provider): void {
    this.supersede(provider.id);
    this.providers.set(provider.id, provider);
  }
  deleteProvider(id: string): void {
    this.supersede(id);
    this.providers.delete(id);
  }
  clearProviders(): void {
    for (const id of new Set([...this.providers.keys(), ...this.controllers.keys()])) this.supersede(id);
    this.providers.clear();
  }
  getProviders = (): Provider[] => [...this.providers.values()];
  getProvider = (id: string): Provider | undefined => this.providers.get(id);

  /** A provider whose model list throws has none. */
  private listed(provider: string | undefined, all: boolean): AnyModel[] {
    const chosen = provider === undefined ? this.getProviders() : [this.providers.get(provider)].filter((p): p is Provider => !!p);
    return chosen.flatMap((p) => {
      try {
        return all ? (p.getAllModels?.() ?? p.getModels()) : p.getModels();
      } catch {
        return [];
      }
    });
  }
  getModels = (provider?: string) => this.listed(provider, false);
  getAllModels = (provider?: string) => this.listed(provider, true);
  getModelsOfType = (type: string, provider?: string) => this.getAllModels(provider).filter((m) => typeOf(m) === type);
  getModel = (provider: string, id: string) => this.getModels(provider).find((m) => m.id === id);
  getModelOfType = (type: string, provider: string, id: string) => this.getModelsOfType(type, provider).find((m) => m.id === id);

  private supersede(providerId: string): number {
    const generation = (this.generations.get(providerId) ?? 0) + 1;
    this.generations.set(providerId, generation);
    this.controllers.get(providerId)?.abort();
    this.controllers.delete(providerId);
    return generation;
  }

  /** One refresh's publication: persisted and applied in order, unless a newer refresh or a cancel came since. */
  private publish(providerId: string, generation: number, signal: AbortSignal, p: { persist?: unknown; update?: () => void }): Promise<boolean> {
    const current = () => !signal.aborted && this.generations.get(providerId) === generation;
    const previous = this.publications.get(providerId) ?? Promise.resolve();
    const queued = (async () => {
      await previous.catch(() => {});
      if (!current()) return false;
      if (p.persist === null) await this.modelsStore.delete(providerId, { signal });
      else if (p.persist !== undefined) await this.modelsStore.write(providerId, structuredClone(p.persist), { signal });
      if (!current()) return false;
      p.update?.();
      return true;
    })();
    const tail = queued.catch(() => {});
    this.publications.set(providerId, tail);
    void tail.then(() => {
      if (this.publications.get(providerId) === tail) this.publications.delete(providerId);
    });
    return untilAborted(queued, signal);
  }

  private async refreshPhase(p: Provider, credential: Credential | undefined, allowNetwork: boolean, force: boolean | undefined, generation: number, signal: AbortSignal): Promise<void> {
    const stored = (await this.modelsStore.read(p.id, { signal })) as { models: AnyModel[] } | undefined;
    const known = stored ? { ...structuredClone(stored), models: stored.models.filter((m) => ["chat", "image", "classifier"].includes(typeOf(m))) } : undefined;
    await p.refreshModels!({ credential, stored: known, publish: (pub: { persist?: unknown; update?: () => void }) => this.publish(p.id, generation, signal, pub), allowNetwork, force: allowNetwork ? force : undefined, signal, baseUrl: p.baseUrl });
  }

  async refresh(options: { allowNetwork?: boolean; providers?: readonly string[]; force?: boolean; signal?: AbortSignal } = {}) {
    const allowNetwork = options.allowNetwork ?? true;
    const caller = signalOf(options.signal);
    const errors = new Map<string, Error>();
    if (caller.aborted) return { aborted: true, errors };
    const wanted = options.providers ? new Set(options.providers) : undefined;
    const refreshable = this.getProviders().filter((p) => p.refreshModels && (!wanted || wanted.has(p.id)));
    const all = Promise.all(
      refreshable.map(async (p) => {
        const generation = this.supersede(p.id);
        const controller = new AbortController();
        this.controllers.set(p.id, controller);
        const signal = AbortSignal.any([caller, controller.signal]);
        const run = (async () => {
          let stored: Credential | undefined;
          let readError: unknown;
          try {
            stored = await this.readCredential(p.id, signal);
          } catch (err) {
            readError = err;
          }
          // The cached list comes back before any auth or network work.
          await this.refreshPhase(p, stored, false, undefined, generation, signal);
          if (readError !== undefined) throw readError;
          if (!allowNetwork || signal.aborted) return;
          const network = await this.networkCredential(p, stored, signal);
          if (network) await this.refreshPhase(p, network.credential, true, options.force, generation, signal);
        })();
        try {
          await untilAborted(run, signal);
        } catch (err) {
          if (!signal.aborted) errors.set(p.id, err instanceof Error ? err : new ModelsError("model_source", `Model refresh failed for ${p.id}`, { cause: err }));
        } finally {
          if (this.controllers.get(p.id) === controller) this.controllers.delete(p.id);
        }
      }),
    );
    try {
      await untilAborted(all, caller);
    } catch (err) {
      if (!caller.aborted) throw err;
    }
    return { aborted: caller.aborted, errors: new Map(errors) };
  }

  /** The credential the network phase runs with; undefined when the provider is not configured. */
  private async networkCredential(p: Provider, stored: Credential | undefined, signal: AbortSignal): Promise<{ credential?: Credential } | undefined> {
    if (p.refreshModelsAuth === "configured") return (await this.checkWith(p, stored, signal)) ? {} : undefined;
    if (stored?.type === "oauth") {
      if (!p.auth.oauth) return undefined;
      if (Date.now() < (stored.expires ?? 0)) return { credential: stored };
      if (signal.aborted) return undefined;
      const fresh = await refreshStoredLogin(this.credentials, p.id, p.auth.oauth, (c) => Date.now() >= (c.expires ?? 0), signal);
      return fresh ? { credential: fresh } : undefined;
    }
    if (!p.auth.apiKey) return undefined;
    const result = await p.auth.apiKey.resolve({ ctx: this.authContext, credential: stored?.type === "api_key" ? stored : undefined, signal });
    return result ? { credential: { type: "api_key", key: result.auth.apiKey, env: result.env } as Credential } : undefined;
  }

  private readCredential(providerId: string, signal: AbortSignal): Promise<Credential | undefined> {
    return guarded("auth", `Credential store read failed for ${providerId}`, () => this.credentials.read(providerId, { signal }));
  }

  private async checkWith(p: Provider, credential: Credential | undefined, signal: AbortSignal): Promise<unknown> {
    if (credential?.type === "oauth") return p.auth.oauth ? { source: "OAuth", type: "oauth" } : undefined;
    const apiKey = p.auth.apiKey;
    if (!apiKey) return undefined;
    if (apiKey.check) {
      const check = apiKey.check;
      return guarded("auth", `API key auth check failed for provider ${p.id}`, () => check({ ctx: this.authContext, credential: credential?.type === "api_key" ? credential : undefined, signal }));
    }
    const resolved = await this.resolveAuth(p, { signal });
    return resolved ? { source: resolved.source, type: "api_key" } : undefined;
  }

  checkAuth(providerId: string, options?: { signal?: AbortSignal }): Promise<unknown> {
    const signal = signalOf(options?.signal);
    return untilAborted(
      (async () => {
        signal.throwIfAborted();
        const p = this.providers.get(providerId);
        return p ? this.checkWith(p, await this.readCredential(providerId, signal), signal) : undefined;
      })(),
      signal,
    );
  }

  private async configured(providerId: string | undefined, signal: AbortSignal) {
    signal.throwIfAborted();
    const chosen = providerId ? [this.providers.get(providerId)].filter((p): p is Provider => !!p) : this.getProviders();
    const checked = await Promise.all(
      chosen.map(async (provider) => {
        const credential = await this.readCredential(provider.id, signal);
        return { provider, credential, ok: (await this.checkWith(provider, credential, signal)) !== undefined };
      }),
    );
    return checked.filter((c) => c.ok);
  }

  getAvailable(providerId?: string, options?: { signal?: AbortSignal }): Promise<AnyModel[]> {
    const signal = signalOf(options?.signal);
    return untilAborted(
      this.configured(providerId, signal).then((ps) => ps.flatMap(({ provider, credential }) => provider.filterModels?.(provider.getModels(), credential) ?? provider.getModels())),
      signal,
    );
  }

  getAllAvailable(providerId?: string, options?: { signal?: AbortSignal }): Promise<AnyModel[]> {
    const signal = signalOf(options?.signal);
    return untilAborted(
      this.configured(providerId, signal).then((ps) =>
        ps.flatMap(({ provider, credential }) => {
          const models = provider.getAllModels?.() ?? provider.getModels();
          if (provider.filterAllModels) return provider.filterAllModels(models, credential);
          if (!provider.filterModels) return models;
          const chat = new Set(provider.filterModels(provider.getModels(), credential).map((m) => m.id));
          return models.filter((m) => typeOf(m) !== "chat" || chat.has(m.id));
        }),
      ),
      signal,
    );
  }

  async getAvailableOfType(type: string, providerId?: string, options?: { signal?: AbortSignal }): Promise<AnyModel[]> {
    return (await this.getAllAvailable(providerId, options)).filter((m) => typeOf(m) === type);
  }

  /** A key given with the request, else the stored credential (which then owns the provider), else ambient auth. */
  private resolveAuth(p: Provider, o: Overrides): Promise<AuthResult | undefined> {
    const signal = signalOf(o.signal);
    const base = this.authContext;
    const ctx: AuthContext = o.env ? { env: async (n) => o.env![n] || (await base.env(n)), fileExists: (path) => base.fileExists(path) } : base;
    const viaKey = (credential: Credential | undefined) => guarded("auth", `API key auth failed for provider ${p.id}`, () => p.auth.apiKey!.resolve({ ctx, credential, signal }));
    const work = async (): Promise<AuthResult | undefined> => {
      signal.throwIfAborted();
      if (o.apiKey !== undefined && p.auth.apiKey) return viaKey({ type: "api_key", key: o.apiKey, ...(o.env ? { env: o.env } : {}) });
      const stored = await this.readCredential(p.id, signal);
      if (stored?.type === "oauth" && p.auth.oauth) return this.oauthAuth(p.id, p.auth.oauth, stored, signal, o.minOAuthValidityMs);
      if (stored?.type === "api_key" && p.auth.apiKey) return viaKey(o.env ? { ...stored, env: { ...stored.env, ...o.env } } : stored);
      if (stored) return undefined;
      return p.auth.apiKey ? viaKey(undefined) : undefined;
    };
    return untilAborted(work(), signal);
  }

  private async oauthAuth(providerId: string, oauth: OAuthAuth, stored: Credential, signal: AbortSignal, minValidityMs?: number): Promise<AuthResult | undefined> {
    const window = Math.max(OAUTH_MIN_VALIDITY_MS, minValidityMs ?? 0);
    const soon = (c: Credential) => Date.now() + window >= (c.expires ?? 0);
    let credential: Credential | undefined = stored;
    if (soon(credential)) {
      credential = await refreshStoredLogin(this.credentials, providerId, oauth, soon, signal);
      if (!credential) return undefined;
      // Only a caller that asked for a validity gets it enforced after the refresh.
      if (minValidityMs !== undefined && soon(credential)) throw new ModelsError("oauth", `OAuth refresh returned a token that expires too soon for ${providerId}`);
    }
    const c = credential;
    return { auth: await guarded("oauth", `OAuth auth derivation failed for ${providerId}`, () => oauth.toAuth(c)), source: "OAuth" };
  }

  async getAuth(target: string | AnyModel, overrides: Overrides = {}): Promise<AuthResult | undefined> {
    const model = typeof target === "string" ? undefined : target;
    const p = this.providers.get(model?.provider ?? (target as string));
    if (!p) return undefined;
    const result = await this.resolveAuth(p, overrides);
    if (!result || !model?.headers) return result;
    return { ...result, auth: { ...result.auth, headers: mergeHeaders(result.auth.headers, model.headers) as Record<string, string> } };
  }

  async login(providerId: string, type: string, interaction: { signal?: AbortSignal } & Record<string, unknown>, options?: unknown): Promise<Credential> {
    const signal = signalOf(interaction.signal);
    signal.throwIfAborted();
    const p = this.providers.get(providerId);
    if (!p) throw new ModelsError("provider", `Unknown provider: ${providerId}`);
    const method = type === "oauth" ? p.auth.oauth : p.auth.apiKey;
    if (!method?.login) throw new ModelsError("auth", `${p.name} does not support ${type} login`);
    const credential = await untilAborted(method.login({ ...interaction, signal }, options), signal);
    // Once the store has started writing it, the login is kept even if the caller gives up.
    let writing = false;
    const write = this.credentials.modify(providerId, async () => ((writing = true), credential), { signal });
    try {
      await new Promise<void>((resolve, reject) => {
        const onAbort = () => !writing && reject(signal.reason);
        signal.addEventListener("abort", onAbort, { once: true });
        if (signal.aborted) onAbort();
        write.then(() => resolve(), reject).finally(() => signal.removeEventListener("abort", onAbort));
      });
    } catch (err) {
      signal.throwIfAborted();
      throw new ModelsError("auth", `Credential store modify failed for ${providerId}`, { cause: err });
    }
    return credential;
  }

  async logout(providerId: string, options?: { signal?: AbortSignal }): Promise<void> {
    const signal = signalOf(options?.signal);
    signal.throwIfAborted();
    try {
      await this.credentials.delete(providerId, { signal });
    } catch (err) {
      signal.throwIfAborted();
      throw new ModelsError("auth", `Credential store delete failed for ${providerId}`, { cause: err });
    }
  }

  private provider(model: AnyModel, type?: string): Provider {
    if (type && typeOf(model) !== type) throw new ModelsError("provider", `Model ${model.provider}/${model.id} is not ${type === "image" ? "an" : "a"} ${type} model`);
    const p = this.providers.get(model.provider);
    if (!p) throw new ModelsError("provider", `Unknown provider: ${model.provider}`);
    return p;
  }

  /** The model and options a provider is called with: resolved auth, the call's own fields winning. */
  private async applyAuth(model: AnyModel, options?: RequestOptions): Promise<[AnyModel, RequestOptions]> {
    this.provider(model);
    const resolved = await this.getAuth(model, { ...(options?.apiKey !== undefined ? { apiKey: options.apiKey } : {}), ...(options?.env ? { env: options.env } : {}), ...(options?.signal ? { signal: options.signal } : {}) });
    if (!resolved) throw new ModelsError("auth", `Provider is not configured: ${model.provider}`);
    const requestModel = resolved.auth.baseUrl ? { ...model, baseUrl: resolved.auth.baseUrl } : model;
    let headers = mergeHeaders(mergeHeaders(getOpenCodeSessionHeaders(requestModel, typeof options?.sessionId === "string" ? options.sessionId : undefined), resolved.auth.headers), options?.headers);
    if (options?.transformHeaders) headers = await options.transformHeaders(headers ?? {});
    const env = resolved.env || options?.env ? { ...resolved.env, ...options?.env } : undefined;
    const identity = mergeClientIdentity(this.identity, options?.identity);
    const { transformHeaders: _t, ...rest } = options ?? {};
    return [requestModel, { ...rest, apiKey: options?.apiKey ?? resolved.auth.apiKey, headers, env, ...(identity ? { identity } : {}) } as RequestOptions];
  }

  private request(method: "stream" | "streamSimple", model: AnyModel, context: { systemPrompt?: string; tools?: unknown[]; messages?: unknown[] }, options?: RequestOptions) {
    const transcript = transcriptOf({ systemPrompt: context.systemPrompt ?? "", tools: (context.tools ?? []) as never, messages: (context.messages ?? []) as never });
    return lazyStream(model, async () => {
      const p = this.provider(model, "chat");
      const [m, o] = await this.applyAuth(model, options);
      return (p[method] as unknown as (m: AnyModel, c: unknown, o: RequestOptions) => ReferenceStream)(m, transcript, o);
    }, observeModelRequest(model, options, false), options?.signal);
  }

  stream = (model: AnyModel, context: Record<string, never>, options?: RequestOptions) => this.request("stream", model, context, options);
  streamSimple = (model: AnyModel, context: Record<string, never>, options?: RequestOptions) => this.request("streamSimple", model, context, options);
  complete = async (model: AnyModel, context: Record<string, never>, options?: RequestOptions) => this.stream(model, context, options).result();
  completeSimple = async (model: AnyModel, context: Record<string, never>, options?: RequestOptions) => this.streamSimple(model, context, options).result();

  streamDeferred(model: AnyModel, handle: unknown, options?: RequestOptions) {
    return lazyStream(model, async () => {
      const p = this.provider(model, "chat");
      if (!p.fetchDeferred) throw new ModelsError("provider", `Provider ${model.provider} does not support deferred responses`);
      const [m, o] = await this.applyAuth(model, options);
      return (p.fetchDeferred as unknown as (m: AnyModel, h: unknown, o: RequestOptions) => ReferenceStream)(m, handle, o);
    }, observeModelRequest(model, options, true), options?.signal);
  }
  fetchDeferred = async (model: AnyModel, handle: unknown, options?: RequestOptions) => this.streamDeferred(model, handle, options).result();

  async cancelDeferred(model: AnyModel, handle: unknown, options?: RequestOptions): Promise<void> {
    const p = this.provider(model, "chat");
    if (!p.cancelDeferred) throw new ModelsError("provider", `Provider ${model.provider} does not support deferred responses`);
    const [m, o] = await this.applyAuth(model, options);
    await (p.cancelDeferred as unknown as (m: AnyModel, h: unknown, o: RequestOptions) => Promise<void>)(m, handle, o);
  }

  /** Image generation and classification never reject: a failure is their result with stopReason "error". */
  private async oneShot(kind: "image" | "classifier", model: AnyModel, context: unknown, options?: RequestOptions): Promise<unknown> {
    const [method, what, empty] = kind === "image" ? (["generateImages", "image generation", { output: [] }] as const) : (["classify", "classification", { answers: {} }] as const);
    try {
      const p = this.provider(model, kind);
      if (kind === "classifier" && (context as { images?: unknown[] })?.images?.length && !model.input.includes("image")) throw new ModelsError("provider", `Model ${model.provider}/${model.id} does not accept image input`);
      const run = p[method] as unknown as ((m: AnyModel, c: unknown, o: RequestOptions) => Promise<unknown>) | undefined;
      if (!run) throw new ModelsError("provider", `Provider ${model.provider} does not support ${what}`);
      const [m, o] = await this.applyAuth(model, options);
      return await run(m, context, o);
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      return { api: model.api, provider: model.provider, model: model.id, ...empty, stopReason: options?.signal?.aborted ? "aborted" : "error", errorMessage: message, timestamp: Date.now() };
    }
  }
  generateImages = (model: AnyModel, context: unknown, options?: RequestOptions) => this.oneShot("image", model, context, options);
  classify = (model: AnyModel, context: unknown, options?: RequestOptions) => this.oneShot("classifier", model, context, options);
}

export const createModels = (options?: ConstructorParameters<typeof Models>[0]) => new Models(options);
