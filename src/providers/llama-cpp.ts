import type { ModelDef } from "./catalog/data.ts";
import type { ExtraProvider } from "./models.ts";

/**
 * The llama.cpp provider: a llama-server (one model, or a router serving several) found at
 * LLAMA_BASE_URL. Its models are not in any catalog; they are read from the server when pion
 * needs the list, and spoken to with the OpenAI chat completions API under `<base>/v1`.
 */
export const LLAMA_PROVIDER = "llama.cpp";
export const DEFAULT_LLAMA_URL = "http://127.0.0.1:9931";
const TIMEOUT_MS = 5000;

type Env = Record<string, string | undefined>;

/** The server's root URL from LLAMA_BASE_URL (a trailing `/v1` or `/` dropped), else the default. */
export function llamaServerUrl(env: Env): string {
  const raw = env.LLAMA_BASE_URL?.trim() || DEFAULT_LLAMA_URL;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`LLAMA_BASE_URL is not a URL: ${raw}`);
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`LLAMA_BASE_URL must be http or https: ${raw}`);
  const path = url.pathname.replace(/\/+$/, "").replace(/\/v1$/, "");
  return `${url.origin}${path}`;
}

/** Whether the user pointed pion at a llama.cpp server (listings then ask it). */
export const llamaConfigured = (env: Env): boolean => Boolean(env.LLAMA_BASE_URL?.trim());

/** Whether a --provider / --model (or a set_model) names the llama.cpp provider. */
export function namesLlamaCpp(o: { provider?: string; model?: string }): boolean {
  return o.provider === LLAMA_PROVIDER || (o.provider === undefined && (o.model?.startsWith(`${LLAMA_PROVIDER}/`) ?? false));
}

interface ServerModel {
  id?: unknown;
  status?: { value?: unknown; args?: unknown; failed?: unknown };
  meta?: { n_ctx?: unknown; n_ctx_train?: unknown };
  architecture?: { input_modalities?: unknown; output_modalities?: unknown };
}

/**
 * Asks the server at LLAMA_BASE_URL for its models (`/v1/models`) and context size (`/props`).
 * Throws one line naming the URL when the server cannot be reached or answers oddly.
 */
export async function discoverLlamaCpp(env: Env, signal?: AbortSignal): Promise<ExtraProvider> {
  const root = llamaServerUrl(env);
  const apiKey = env.LLAMA_API_KEY?.trim() || undefined;
  const get = (path: string) => getJson(root, path, apiKey, signal);
  const list = await get("/v1/models");
  const data = (list as { data?: unknown } | null)?.data;
  if (!Array.isArray(data)) throw new Error(`llama.cpp server at ${root} returned no model list from /v1/models`);
  const entries = data.filter((m): m is ServerModel & { id: string } => typeof (m as ServerModel)?.id === "string");
  const router = entries.some((m) => m.status !== undefined);
  const models: ModelDef[] = [];
  if (router) {
    // Loaded and sleeping models answer; unloaded ones only when the router loads on demand.
    const props = entries.some((m) => m.status?.value === "unloaded") ? await get("/props").catch(() => undefined) : undefined;
    const autoload = (props as { models_autoload?: unknown } | undefined)?.models_autoload === true;
    for (const m of entries) {
      const state = m.status?.value;
      if (m.status?.failed === true || isDecisionOnly(m)) continue;
      if (state === "loaded" || state === "sleeping" || (state === "unloaded" && autoload)) {
        models.push(toModelDef(m, positive(m.meta?.n_ctx) ?? ctxArg(m.status?.args) ?? positive(m.meta?.n_ctx_train)));
      }
    }
  } else {
    const props = await get("/props");
    const nCtx = positive((props as { default_generation_settings?: { n_ctx?: unknown } } | null)?.default_generation_settings?.n_ctx);
    for (const m of entries) models.push(toModelDef(m, nCtx ?? positive(m.meta?.n_ctx) ?? positive(m.meta?.n_ctx_train)));
  }
  const provider: ExtraProvider = { id: LLAMA_PROVIDER, api: "openai-completions", baseUrl: `${root}/v1`, models };
  if (apiKey) provider.apiKey = apiKey;
  return provider;
}

function toModelDef(m: ServerModel & { id: string }, contextWindow: number | undefined): ModelDef {
  const image = Array.isArray(m.architecture?.input_modalities) && m.architecture.input_modalities.includes("image");
  const def: ModelDef = { id: m.id, name: m.id, reasoning: false, input: image ? ["text", "image"] : ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
  if (contextWindow) {
    def.contextWindow = contextWindow;
    // The server stops at the end of its context; any output size up to it is allowed.
    def.maxTokens = contextWindow;
  }
  return def;
}

/** Decision-only models (llama.cpp's classifiers) cannot chat. */
const isDecisionOnly = (m: ServerModel): boolean => {
  const out = m.architecture?.output_modalities;
  return Array.isArray(out) && out.includes("decisions") && !out.includes("text");
};

const positive = (n: unknown): number | undefined => (typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined);

/** `-c N` / `--ctx-size N` among the arguments a router starts a model with. */
function ctxArg(args: unknown): number | undefined {
  if (!Array.isArray(args)) return undefined;
  for (let i = 0; i < args.length - 1; i++) {
    if (args[i] === "-c" || args[i] === "--ctx-size") return positive(Number(args[i + 1]));
  }
  return undefined;
}

async function getJson(root: string, path: string, apiKey: string | undefined, signal?: AbortSignal): Promise<unknown> {
  const timeout = AbortSignal.timeout(TIMEOUT_MS);
  let res: Response;
  try {
    res = await fetch(`${root}${path}`, {
      headers: apiKey ? { authorization: `Bearer ${apiKey}` } : {},
      signal: signal ? AbortSignal.any([signal, timeout]) : timeout,
    });
  } catch (err) {
    if (signal?.aborted) throw err;
    const why = timeout.aborted ? `no answer in ${TIMEOUT_MS / 1000} s` : describeFetchError(err);
    throw new Error(`Could not reach the llama.cpp server at ${root} (LLAMA_BASE_URL): ${why}`);
  }
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  if (!res.ok) {
    const msg = (body as { error?: { message?: unknown } } | undefined)?.error?.message;
    throw new Error(`llama.cpp server at ${root} answered ${path} with HTTP ${res.status}${typeof msg === "string" ? `: ${msg}` : ""}`);
  }
  if (body === undefined) throw new Error(`llama.cpp server at ${root} answered ${path} with something other than JSON`);
  return body;
}

function describeFetchError(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; cause?: { code?: unknown; message?: unknown } };
  const code = e?.code ?? e?.cause?.code;
  const msg = typeof e?.message === "string" ? e.message : String(err);
  return typeof code === "string" && !msg.includes(code) ? `${msg} (${code})` : msg;
}
