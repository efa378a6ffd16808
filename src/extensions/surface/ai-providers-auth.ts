/**
 * pi-ai's auth building blocks for provider definitions: in-memory credential and model-list
 * stores (one entry per provider id), the default auth context (process environment, file
 * existence), standard env-var key auth, OAuth loaded on first use, and the error type of a
 * `Models` collection.
 */
import { homedir } from "node:os";
import { errorMessage } from "../../util/errors.ts";

type Opts = { signal?: AbortSignal };
type Credential = { type: string; key?: string; env?: Record<string, string> } & Record<string, unknown>;

/** A `Models` failure with a machine-readable code ("auth", "oauth", …); the cause's text is kept in the message. */
export class ModelsError extends Error {
  code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    const detail = options?.cause === undefined || options.cause === null ? "" : errorMessage(options.cause).trim();
    super(detail && !message.includes(detail) ? `${message}: ${detail}` : message, options);
    this.name = "ModelsError";
    this.code = code;
  }
}

function abortError(signal: AbortSignal): unknown {
  if (signal.reason !== undefined) return signal.reason;
  const err = new Error("The operation was aborted");
  err.name = "AbortError";
  return err;
}

/** Stop waiting for `work` once `signal` aborts (a later rejection of it is still caught). */
export function untilAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(abortError(signal));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
  });
}

/** Credentials kept in memory, one per provider id; changes to one provider run one after another. */
export class InMemoryCredentialStore {
  credentials = new Map<string, Credential>();
  chains = new Map<string, Promise<unknown>>();

  enqueue<T>(providerId: string, task: () => Promise<T>, options?: Opts): Promise<T> {
    const signal = options?.signal ?? new AbortController().signal;
    const previous = this.chains.get(providerId) ?? Promise.resolve();
    const queued = (async () => {
      await previous.catch(() => {});
      signal.throwIfAborted();
      return task();
    })();
    const tail = queued.catch(() => {});
    this.chains.set(providerId, tail);
    void tail.then(() => {
      if (this.chains.get(providerId) === tail) this.chains.delete(providerId);
    });
    return untilAborted(queued, signal);
  }

  async read(providerId: string, options?: Opts): Promise<Credential | undefined> {
    options?.signal?.throwIfAborted();
    return this.credentials.get(providerId);
  }

  async list(options?: Opts): Promise<{ providerId: string; type: string }[]> {
    options?.signal?.throwIfAborted();
    return [...this.credentials].map(([providerId, c]) => ({ providerId, type: c.type }));
  }

  /** `fn` maps the current credential to the next one (undefined: leave it); resolves with what is stored after. */
  modify(providerId: string, fn: (current: Credential | undefined) => Credential | undefined | Promise<Credential | undefined>, options?: Opts): Promise<Credential | undefined> {
    return this.enqueue(
      providerId,
      async () => {
        const current = this.credentials.get(providerId);
        const next = await fn(current);
        options?.signal?.throwIfAborted();
        if (next !== undefined) this.credentials.set(providerId, next);
        return next ?? current;
      },
      options,
    );
  }

  delete(providerId: string, options?: Opts): Promise<void> {
    return this.enqueue(providerId, async () => void this.credentials.delete(providerId), options);
  }
}

/** Dynamic providers' model lists kept in memory; what goes in and out is a copy. */
export class InMemoryModelsStore {
  entries = new Map<string, unknown>();

  async read(providerId: string, options?: Opts): Promise<unknown> {
    options?.signal?.throwIfAborted();
    const entry = this.entries.get(providerId);
    return entry ? structuredClone(entry) : undefined;
  }

  async write(providerId: string, entry: unknown, options?: Opts): Promise<void> {
    options?.signal?.throwIfAborted();
    this.entries.set(providerId, structuredClone(entry));
  }

  async delete(providerId: string, options?: Opts): Promise<void> {
    options?.signal?.throwIfAborted();
    this.entries.delete(providerId);
  }
}

/** Variables from the process environment (blank counts as unset); whether a file exists, `~` meaning home. */
export function defaultProviderAuthContext() {
  return {
    async env(name: string): Promise<string | undefined> {
      const value = process.env[name];
      return typeof value === "string" && value.trim().length > 0 ? value : undefined;
    },
    async fileExists(path: string): Promise<boolean> {
      try {
        const { access } = await import("node:fs/promises");
        await access(path.startsWith("~") ? homedir() + path.slice(1) : path);
        return true;
      } catch {
        return false;
      }
    },
  };
}

type Interaction = { signal: AbortSignal; prompt(p: { type: string; message: string }): Promise<string> };
type ResolveInput = { ctx: { env(name: string): Promise<string | undefined> }; credential?: Credential; signal: AbortSignal };

/** API-key auth: a stored key first, else the first of `envVars` that is set; `login` asks for a key. */
export function envApiKeyAuth(name: string, envVars: readonly string[]) {
  return {
    name,
    login: async (interaction: Interaction) => {
      interaction.signal.throwIfAborted();
      const key = await interaction.prompt({ type: "secret", message: `Enter ${name}` });
      interaction.signal.throwIfAborted();
      return { type: "api_key", key };
    },
    resolve: async ({ ctx, credential, signal }: ResolveInput) => {
      signal.throwIfAborted();
      if (credential?.key) return { auth: { apiKey: credential.key }, env: credential.env, source: "stored credential" };
      for (const envVar of envVars) {
        const value = await ctx.env(envVar);
        signal.throwIfAborted();
        if (value) return { auth: { apiKey: value }, source: envVar };
      }
      return undefined;
    },
  };
}

type OAuth = { login(...a: unknown[]): Promise<unknown>; refresh(...a: unknown[]): Promise<unknown>; toAuth(...a: unknown[]): Promise<unknown> };

/** OAuth whose flow is loaded (once) by the first login, refresh or toAuth. */
export function lazyOAuth(input: { name: string; isSubscription?: boolean; loginLabel?: string; load: () => Promise<OAuth> }) {
  let loading: Promise<OAuth> | undefined;
  const loaded = () => (loading ??= input.load());
  return {
    name: input.name,
    isSubscription: input.isSubscription,
    loginLabel: input.loginLabel,
    login: async (interaction: unknown, options?: unknown) => (await loaded()).login(interaction, options),
    refresh: async (credential: unknown, signal?: AbortSignal) => (await loaded()).refresh(credential, signal),
    toAuth: async (credential: unknown) => (await loaded()).toAuth(credential),
  };
}
