/**
 * pi-ai/compat's image generation: a registry of image APIs keyed by `model.api`, `generateImages`
 * dispatching on it, and the built-in OpenRouter one (a non-streaming Chat Completions request
 * with `modalities`, through the OpenAI SDK pion's Chat Completions adapter uses). The key comes
 * from `options.apiKey` only, as in the reference. Never rejects once dispatched: a failure is a
 * result with stopReason "error".
 */
import { priceUsage } from "../../providers/cost.ts";
import { describeRequestError } from "../../providers/errors.ts";
import { emptyUsage } from "../../providers/event-stream.ts";
import type { Model, Usage } from "../../providers/types.ts";
import { getIdentityHeaders, type ClientIdentity } from "./ai-providers-identity.ts";

type ImageModel = Model & { output: ("text" | "image")[] };
type ImagesContext = { input: ({ type: "text"; text: string } | { type: "image"; mimeType: string; data: string })[] };
type ImagesOptions = {
  apiKey?: string;
  headers?: Record<string, string | null>;
  signal?: AbortSignal;
  timeoutMs?: number;
  maxRetries?: number;
  fetch?: typeof fetch;
  identity?: ClientIdentity;
  onPayload?: (params: unknown, model: ImageModel) => unknown;
  onResponse?: (r: { status: number; headers: Record<string, string> }, model: ImageModel) => unknown;
};
type ImagesResult = {
  api: string;
  provider: string;
  model: string;
  output: ({ type: "text"; text: string } | { type: "image"; mimeType: string; data: string })[];
  stopReason: "stop" | "error" | "aborted";
  errorMessage?: string;
  responseId?: string;
  usage?: Usage;
  timestamp: number;
};
type GenerateImages = (model: ImageModel, context: ImagesContext, options?: ImagesOptions) => Promise<ImagesResult>;

const registry = new Map<string, { provider: { api: string; generateImages: GenerateImages }; sourceId?: string }>();

export function registerImagesApiProvider(provider: { api: string; generateImages: GenerateImages }, sourceId?: string): void {
  const generate: GenerateImages = (model, context, options) => {
    if (model.api !== provider.api) throw new Error(`Mismatched api: ${model.api} expected ${provider.api}`);
    return provider.generateImages(model, context, options);
  };
  registry.set(provider.api, { provider: { api: provider.api, generateImages: generate }, ...(sourceId !== undefined ? { sourceId } : {}) });
}

export const getImagesApiProvider = (api: string) => registry.get(api)?.provider;

/** Generate with the image API registered for the model's; the key must be in `options.apiKey`. */
export async function generateImages(model: ImageModel, context: ImagesContext, options?: ImagesOptions): Promise<ImagesResult> {
  const provider = getImagesApiProvider(model.api);
  if (!provider) throw new Error(`No API provider registered for api: ${model.api}`);
  return provider.generateImages(model, context, options);
}

/** Request headers, lowest first: the identity's, the model's, the call's; a null value removes one. */
function headersOf(model: ImageModel, options?: ImagesOptions): Record<string, string> {
  const out: Record<string, string> = {};
  for (const layer of [getIdentityHeaders(model, options?.identity), model.headers, options?.headers]) {
    for (const [name, value] of Object.entries(layer ?? {})) {
      for (const existing of Object.keys(out)) if (existing.toLowerCase() === name.toLowerCase()) delete out[existing];
      if (value !== null) out[name] = value;
    }
  }
  return out;
}

type RawUsage = { prompt_tokens?: number; completion_tokens?: number; prompt_tokens_details?: { cached_tokens?: number; cache_write_tokens?: number } };

/** OpenAI-style usage: cached tokens count cache writes too, which are taken out of the reads. */
function usageOf(raw: RawUsage, model: ImageModel): Usage {
  const cached = raw.prompt_tokens_details?.cached_tokens || 0;
  const cacheWrite = raw.prompt_tokens_details?.cache_write_tokens || 0;
  const cacheRead = cacheWrite > 0 ? Math.max(0, cached - cacheWrite) : cached;
  const usage = emptyUsage();
  usage.input = Math.max(0, (raw.prompt_tokens || 0) - cacheRead - cacheWrite);
  usage.output = raw.completion_tokens || 0;
  usage.cacheRead = cacheRead;
  usage.cacheWrite = cacheWrite;
  return priceUsage(usage, model);
}

/** Strip lone UTF-16 surrogates, which JSON bodies cannot carry. */
const wellFormed = (text: string) => text.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, "");

function paramsOf(model: ImageModel, context: ImagesContext): Record<string, unknown> {
  const content = context.input.map((item) => (item.type === "text" ? { type: "text", text: wellFormed(item.text) } : { type: "image_url", image_url: { url: `data:${item.mimeType};base64,${item.data}` } }));
  return { model: model.id, messages: [{ role: "user", content }], stream: false, modalities: model.output.includes("text") ? ["image", "text"] : ["image"] };
}

type ImageReply = {
  id?: string;
  usage?: RawUsage;
  choices: { message: { content?: string | null; images?: { image_url?: string | { url?: string } }[] } }[];
};

export const generateImagesOpenRouter: GenerateImages = async (model, context, options) => {
  const out: ImagesResult = { api: model.api, provider: model.provider, model: model.id, output: [], stopReason: "stop", timestamp: Date.now() };
  try {
    if (!options?.apiKey) throw new Error(`No API key for provider: ${model.provider}`);
    const sdk = await import("openai");
    const client = new sdk.default({
      apiKey: options.apiKey,
      baseURL: model.baseUrl,
      maxRetries: options.maxRetries ?? 0,
      defaultHeaders: headersOf(model, options),
      ...(options.fetch ? { fetch: options.fetch } : {}),
      organization: null,
      project: null,
    });
    let params = paramsOf(model, context);
    const replaced = await options.onPayload?.(params, model);
    if (replaced !== undefined) params = replaced as Record<string, unknown>;
    const { data, response } = await client.chat.completions
      .create(params as never, { ...(options.signal ? { signal: options.signal } : {}), ...(options.timeoutMs !== undefined ? { timeout: options.timeoutMs } : {}) })
      .withResponse();
    await options.onResponse?.({ status: response.status, headers: Object.fromEntries(response.headers) }, model);
    const reply = data as unknown as ImageReply;
    if (reply.id) out.responseId = reply.id;
    if (reply.usage) out.usage = usageOf(reply.usage, model);
    const message = reply.choices[0]?.message;
    if (typeof message?.content === "string" && message.content.length > 0) out.output.push({ type: "text", text: message.content });
    for (const image of message?.images ?? []) {
      const url = typeof image.image_url === "string" ? image.image_url : image.image_url?.url;
      const parts = url?.match(/^data:([^;]+);base64,(.+)$/);
      if (parts) out.output.push({ type: "image", mimeType: parts[1]!, data: parts[2]! });
    }
    return out;
  } catch (err) {
    out.stopReason = options?.signal?.aborted ? "aborted" : "error";
    out.errorMessage = describeRequestError(err, model.baseUrl);
    return out;
  }
};

export function registerBuiltInImagesApiProviders(): void {
  registerImagesApiProvider({ api: "openrouter-images", generateImages: generateImagesOpenRouter });
}

registerBuiltInImagesApiProviders();
