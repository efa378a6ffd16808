/**
 * pi-ai's `createProvider`: a provider object from its parts (id, auth, static models of every
 * type, chat streams for one API or per `model.api`, image and classifier implementations, and
 * an optional model list fetched at run time and kept in the models store), and `fauxProvider`,
 * the faux test provider as such an object.
 */
import { ModelsError } from "./ai-providers-auth.ts";
import { createFauxCore, fauxControls, type FauxOptions } from "./ai-providers-faux.ts";
import { lazyStream, type ReferenceStreamFn } from "./ai-providers-streams.ts";
import type { Model } from "../../providers/types.ts";

type AnyModel = Model & { type?: string };
type Streams = { stream: ReferenceStreamFn; streamSimple: ReferenceStreamFn; fetchDeferred?: Fn; cancelDeferred?: Fn };
type Fn = (...args: never[]) => unknown;
type Publication = { persist?: { models: AnyModel[]; checkedAt: number } | null; update?: () => void };
type RefreshContext = { stored?: { models: AnyModel[] }; publish(p: Publication): Promise<boolean>; allowNetwork: boolean; signal: AbortSignal };
type Opts = { signal?: AbortSignal };

export interface ProviderParts {
  id: string;
  name?: string;
  baseUrl?: string;
  headers?: Record<string, string>;
  auth: unknown;
  models: readonly AnyModel[];
  fetchModels?: (context: RefreshContext) => Promise<readonly AnyModel[]>;
  filterModels?: Fn;
  filterAllModels?: Fn;
  api?: Streams | Record<string, Streams | undefined>;
  images?: Record<string, { generateImages: (model: AnyModel, context: unknown, options?: Opts) => Promise<unknown> } | undefined>;
  classifiers?: Record<string, { classify: (model: AnyModel, context: unknown, options?: Opts) => Promise<unknown> } | undefined>;
}

const typeOf = (m: AnyModel) => m.type ?? "chat";
const KNOWN_TYPES = ["chat", "image", "classifier"];

/** A one-shot operation's failure as its result (images have `output`, classifiers `answers`). */
const failedResult = (model: AnyModel, err: Error, empty: Record<string, unknown>) => ({
  api: model.api,
  provider: model.provider,
  model: model.id,
  ...empty,
  stopReason: "error",
  errorMessage: err.message,
  timestamp: Date.now(),
});

export function createProvider(input: ProviderParts) {
  const single = input.api && typeof (input.api as Streams).stream === "function" ? (input.api as Streams) : undefined;
  const byApi = single || !input.api ? undefined : (input.api as Record<string, Streams | undefined>);
  const present = <T>(o?: Record<string, T | undefined>) => Object.values(o ?? {}).filter((x): x is T => x !== undefined);
  const streams = single ? [single] : present(byApi);
  const images = present(input.images);
  const classifiers = present(input.classifiers);
  if (streams.length === 0 && images.length === 0 && classifiers.length === 0) {
    throw new Error(`Provider ${input.id}: at least one of "api", "images", or "classifiers" is required.`);
  }
  let dynamic: AnyModel[] = [];
  // A fetched model replaces the static one of the same type and id.
  const current = (): AnyModel[] => {
    const merged = [...input.models];
    for (const m of dynamic) {
      const i = merged.findIndex((e) => typeOf(e) === typeOf(m) && e.id === m.id);
      if (i >= 0) merged[i] = m;
      else merged.push(m);
    }
    return merged;
  };
  const apiFor = (model: AnyModel) => single ?? byApi?.[model.api];
  const dispatch = (model: AnyModel, run: (s: Streams) => unknown, signal?: AbortSignal) => {
    const s = apiFor(model);
    if (s) return run(s);
    return lazyStream(model, async () => {
      throw new ModelsError("stream", `Provider ${input.id} has no API implementation for "${model.api}"`);
    }, undefined, signal);
  };
  const fetchModels = input.fetchModels;

  const provider: Record<string, unknown> = {
    id: input.id,
    name: input.name ?? input.id,
    baseUrl: input.baseUrl,
    headers: input.headers,
    auth: input.auth,
    getModels: () => current().filter((m) => typeOf(m) === "chat"),
    getAllModels: current,
    refreshModels: fetchModels
      ? async (context: RefreshContext) => {
          if (context.stored) {
            const restored = context.stored.models.filter((m) => m.provider === input.id);
            if (!(await context.publish({ update: () => void (dynamic = restored) }))) return;
          }
          if (!context.allowNetwork || context.signal.aborted) return;
          const fetched = await fetchModels(context);
          if (context.signal.aborted) return;
          const known = fetched.filter((m) => KNOWN_TYPES.includes(typeOf(m)));
          await context.publish({ persist: { models: known, checkedAt: Date.now() }, update: () => void (dynamic = known) });
        }
      : undefined,
    filterModels: input.filterModels,
    filterAllModels: input.filterAllModels,
    stream: (model: AnyModel, context: never, options?: Opts) => dispatch(model, (s) => s.stream(model, context, options), options?.signal),
    streamSimple: (model: AnyModel, context: never, options?: Opts) => dispatch(model, (s) => s.streamSimple(model, context, options), options?.signal),
  };
  if (streams.some((s) => s.fetchDeferred)) {
    provider.fetchDeferred = (model: AnyModel, handle: never, options?: Opts) =>
      lazyStream(model, async () => {
        const impl = apiFor(model)?.fetchDeferred as ((m: AnyModel, h: never, o?: Opts) => never) | undefined;
        if (!impl) throw new ModelsError("provider", `Provider ${input.id} does not support deferred responses for "${model.api}"`);
        return impl(model, handle, options);
      }, undefined, options?.signal);
  }
  if (streams.some((s) => s.cancelDeferred)) {
    provider.cancelDeferred = async (model: AnyModel, handle: never, options?: Opts) => {
      const impl = apiFor(model)?.cancelDeferred as ((m: AnyModel, h: never, o?: Opts) => Promise<void>) | undefined;
      if (!impl) throw new ModelsError("provider", `Provider ${input.id} cannot cancel deferred responses for "${model.api}"`);
      await impl(model, handle, options);
    };
  }
  if (images.length > 0) {
    provider.generateImages = async (model: AnyModel, context: unknown, options?: Opts) => {
      const impl = input.images![model.api];
      if (!impl) return failedResult(model, new ModelsError("provider", `Provider ${input.id} has no image generation implementation for "${model.api}"`), { output: [] });
      return impl.generateImages(model, context, options);
    };
  }
  if (classifiers.length > 0) {
    provider.classify = async (model: AnyModel, context: unknown, options?: Opts) => {
      const impl = input.classifiers![model.api];
      if (!impl) return failedResult(model, new ModelsError("provider", `Provider ${input.id} has no classifier implementation for "${model.api}"`), { answers: {} });
      return impl.classify(model, context, options);
    };
  }
  return provider;
}

/** The faux provider as a provider object, for a `Models` collection; auth always resolves (no key). */
export function fauxProvider(options: FauxOptions = {}) {
  const core = createFauxCore(options);
  const provider = createProvider({
    id: core.provider,
    auth: { apiKey: { name: "Faux", resolve: async () => ({ auth: {} }) } },
    models: core.models,
    api: { stream: core.stream as ReferenceStreamFn, streamSimple: core.streamSimple as ReferenceStreamFn, fetchDeferred: core.fetchDeferred, cancelDeferred: core.cancelDeferred },
  });
  return { provider, ...fauxControls(core) };
}
