/**
 * A fake LLM server for tests: the real Anthropic and OpenAI SDKs talk to it over HTTP.
 *
 * Each request to a known endpoint takes the next scripted reply and streams it as SSE in the
 * format of the API the path names. No scripted reply left, an unknown path or a failing
 * `onRequest` hook answers HTTP 500 with `x-should-retry: false`, so an unexpected request
 * fails loudly instead of being retried by the SDK.
 */
import {
  encodeAnthropic,
  encodeCompletions,
  encodeResponses,
  randomId,
  type Frame,
  type StreamPlan,
} from "./fake-provider/encoders.ts";
import { bedrockErrorResponse, encodeBedrock } from "./fake-provider/bedrock.ts";
import { encodeGoogle } from "./fake-provider/google.ts";
import { encodeMistral, mistralErrorResponse } from "./fake-provider/mistral.ts";
import { encodePiMessages, piMessagesErrorBody } from "./fake-provider/pi-messages.ts";

/** pi-messages is served under `/pi` (a models.json `baseUrl` of `${url}/pi`): its `/messages` would be Anthropic's. */
export type FakeApi = "anthropic-messages" | "openai-completions" | "openai-responses" | "openai-codex-responses" | "google-generative-ai" | "bedrock-converse-stream" | "mistral-conversations" | "pi-messages";

export type FakeBlock =
  | { type: "text"; /** An array gives the individual deltas. */ text: string | string[] }
  | { type: "thinking"; thinking: string | string[]; /** Anthropic signature / Responses encrypted_content. */ signature?: string }
  /** Anthropic only (the OpenAI encoders leave it out): encrypted thinking the client must send back unchanged. */
  | { type: "redacted_thinking"; data: string }
  | {
      type: "toolCall";
      /** Default: toolu_… for Anthropic, call_… for OpenAI. */
      id?: string;
      name: string;
      /** An object is JSON-encoded; a string is sent verbatim (it may be invalid JSON). */
      arguments: Record<string, unknown> | string;
      /** Split the JSON text into this many argument deltas. Default 1. */
      fragments?: number;
      /** Gemini only: the part's `thoughtSignature`. */
      signature?: string;
    };

/**
 * `input` counts prompt tokens neither read from nor written to the cache (Anthropic `input_tokens`).
 * OpenAI replies report `prompt_tokens`/`input_tokens` = input + cacheRead + cacheWrite, with
 * `cached_tokens` = cacheRead and `cache_write_tokens` = cacheWrite. Defaults: input 10, output 5, caches 0.
 */
export interface FakeUsage {
  input?: number;
  output?: number;
  cacheRead?: number;
  cacheWrite?: number;
  /** Anthropic only: how many of `cacheWrite` were one-hour writes (`cache_creation.ephemeral_1h_input_tokens`). Default 0. */
  cacheWrite1h?: number;
  /** OpenAI APIs only: how many of `output` were reasoning tokens. Default 0. */
  reasoning?: number;
  /** Chat Completions: OpenRouter's billing fields (`cost`, `is_byok`, `cost_details`), added to the usage chunk; pi-messages: `cost` is the usage's cost total. */
  billing?: Record<string, unknown>;
}

/** Chunks are SSE events (an OpenAI `data: [DONE]` counts as one). */
export interface FakeTiming {
  /** Wait before each chunk. */
  chunkDelayMs?: number;
  /** Send this many chunks, then nothing more while keeping the connection open. */
  stallAfterChunks?: number;
  /** Send this many chunks, then reset the connection (the client sees a network error). */
  disconnectAfterChunks?: number;
}

export type FakeReply =
  | ({
      kind?: "message";
      blocks: FakeBlock[];
      usage?: FakeUsage;
      /** Default: "toolUse" when a toolCall block is present, else "stop". */
      stopReason?: "stop" | "length" | "toolUse";
      /** Gemini and Mistral only: the raw finish reason (SAFETY, RECITATION, …; Mistral's error, model_length). */
      finishReason?: string;
    } & FakeTiming)
  | {
      kind: "http_error";
      status: number;
      /** Replaces the provider-shaped error body entirely. */
      body?: unknown;
      /** Used in the default body. */
      message?: string;
      errorType?: string;
      headers?: Record<string, string>;
    }
  | ({
      kind: "stream_error";
      /** Streamed completely before the error. */
      afterBlocks?: FakeBlock[];
      message: string;
      /** Anthropic `error.type` (default overloaded_error), OpenAI `error.type`/`code` (default server_error). */
      errorType?: string;
    } & FakeTiming);

export interface FakeRequest {
  /** Undefined for a path the fake does not serve. */
  api: FakeApi | undefined;
  path: string;
  method: string;
  /** Lower-cased names. */
  headers: Record<string, string>;
  /** Parsed JSON, or the raw text when the body is not JSON. */
  body: unknown;
}

export interface FakeProviderOptions {
  replies?: FakeReply[];
  /** Runs before a reply is taken; a throw answers HTTP 500 and is added to `failures`. */
  onRequest?: (req: FakeRequest) => void;
}

export interface FakeProvider extends Disposable, AsyncDisposable {
  /** `http://127.0.0.1:PORT`, no trailing slash and no /v1. */
  readonly url: string;
  readonly requests: FakeRequest[];
  /** Why the fake refused a request: empty queue, unknown path, failed hook. */
  readonly failures: string[];
  /** Scripted replies not yet taken. */
  readonly remaining: number;
  enqueue(...replies: FakeReply[]): void;
  /** Resolves with `requests` once at least `n` have arrived. */
  waitForRequests(n: number, timeoutMs?: number): Promise<FakeRequest[]>;
  stop(): Promise<void>;
}

const encoders: Record<FakeApi, (plan: StreamPlan) => Frame[]> = {
  "anthropic-messages": encodeAnthropic,
  "openai-completions": encodeCompletions,
  "openai-responses": encodeResponses,
  // The ChatGPT backend (`/codex/responses`): the Responses stream, ended by `response.done`.
  "openai-codex-responses": (plan) => encodeResponses(plan, "response.done"),
  "google-generative-ai": encodeGoogle,
  "bedrock-converse-stream": encodeBedrock,
  "mistral-conversations": encodeMistral,
  "pi-messages": encodePiMessages,
};

/**
 * A Google OAuth token endpoint (the STS exchange an `external_account` ADC file names as its
 * `token_url`): any request gets FAKE_ACCESS_TOKEN, which Vertex requests then carry as Bearer.
 */
export const FAKE_TOKEN_PATH = "/oauth/token";
export const FAKE_ACCESS_TOKEN = "ya29.fake-access-token";
const tokenResponse = () =>
  Response.json({ access_token: FAKE_ACCESS_TOKEN, issued_token_type: "urn:ietf:params:oauth:token-type:access_token", token_type: "Bearer", expires_in: 3600 });

/** The APIs that name streaming in their path rather than with `stream: true` in the body (pi-messages always streams). */
const streamsByPath = (api: FakeApi, url: URL): boolean =>
  api === "bedrock-converse-stream" || api === "pi-messages" || (api === "google-generative-ai" && url.searchParams.get("alt") === "sse");

export function startFakeProvider(opts: FakeProviderOptions = {}): FakeProvider {
  const queue: FakeReply[] = [...(opts.replies ?? [])];
  const requests: FakeRequest[] = [];
  const failures: string[] = [];
  let waiters: { n: number; resolve: () => void }[] = [];

  const refuse = (api: FakeApi | undefined, message: string): Response => {
    failures.push(message);
    return errorResponse(api, 500, { message, errorType: "api_error", headers: { "x-should-retry": "false" } });
  };

  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(httpReq) {
      const path = new URL(httpReq.url).pathname;
      const api = httpReq.method === "POST" ? apiForPath(path) : undefined;
      const text = await bodyText(httpReq);
      const req: FakeRequest = {
        api,
        path,
        method: httpReq.method,
        headers: Object.fromEntries(httpReq.headers),
        body: parseJsonOrText(text),
      };
      requests.push(req);
      waiters = waiters.filter((w) => (requests.length >= w.n ? (w.resolve(), false) : true));

      if (httpReq.method === "POST" && path === FAKE_TOKEN_PATH) return tokenResponse();
      if (!api) return refuse(undefined, `fake provider: no endpoint for ${httpReq.method} ${path}`);
      try {
        opts.onRequest?.(req);
      } catch (err) {
        return refuse(api, `fake provider: onRequest failed: ${err instanceof Error ? err.message : String(err)}`);
      }
      const body = req.body;
      // Gemini says "stream" in its path (`:streamGenerateContent?alt=sse`), not in its body.
      if (!isRecord(body) || (body.stream !== true && !streamsByPath(api, new URL(httpReq.url)))) {
        return refuse(api, "fake provider: only streaming requests (stream: true) are supported");
      }
      const reply = queue.shift();
      if (!reply) return refuse(api, `fake provider: no scripted reply left for request #${requests.length} (${path})`);
      if (reply.kind === "http_error") return errorResponse(api, reply.status, reply);
      const model = modelInPath(api, path);
      const contentType = api === "bedrock-converse-stream" ? "application/vnd.amazon.eventstream" : undefined;
      return streamResponse(encoders[api](toPlan(reply, model ? { ...body, model } : body)), reply, contentType);
    },
  });
  const url = `http://127.0.0.1:${server.port}`;
  const stop = () => server.stop(true);

  return {
    url,
    requests,
    failures,
    get remaining() {
      return queue.length;
    },
    enqueue: (...replies) => void queue.push(...replies),
    waitForRequests(n, timeoutMs = 5000) {
      if (requests.length >= n) return Promise.resolve(requests);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(
          () => reject(new Error(`fake provider: ${requests.length} of ${n} requests after ${timeoutMs} ms`)),
          timeoutMs,
        );
        waiters.push({ n, resolve: () => (clearTimeout(timer), resolve(requests)) });
      });
    },
    stop,
    [Symbol.dispose]: () => void stop(),
    [Symbol.asyncDispose]: stop,
  };
}

function apiForPath(path: string): FakeApi | undefined {
  const p = path.replace(/\/+$/, "");
  if (p.endsWith("/pi/messages")) return "pi-messages";
  // Claude on Vertex: the Messages body at the model's `:streamRawPredict`.
  if (p.endsWith("/messages") || p.endsWith(":streamRawPredict")) return "anthropic-messages";
  // Mistral's path is OpenAI's: the fake serves Mistral's format under /mistral/.
  if (p.endsWith("/chat/completions")) return p.startsWith("/mistral/") ? "mistral-conversations" : "openai-completions";
  if (p.endsWith("/codex/responses")) return "openai-codex-responses";
  if (p.endsWith("/responses")) return "openai-responses";
  if (p.endsWith(":streamGenerateContent")) return "google-generative-ai";
  if (/^\/model\/[^/]+\/converse-stream$/.test(p)) return "bedrock-converse-stream";
  return undefined;
}

/** Gemini and Bedrock name the model in the path (`/models/<id>:streamGenerateContent`, `/model/<id>/converse-stream`). */
function modelInPath(api: FakeApi, path: string): string | undefined {
  const m = api === "google-generative-ai" ? /\/models\/([^/:]+):/.exec(path) : api === "bedrock-converse-stream" ? /^\/model\/([^/]+)\//.exec(path) : null;
  return m ? decodeURIComponent(m[1]!) : undefined;
}

function toPlan(reply: Exclude<FakeReply, { kind: "http_error" }>, body: Record<string, unknown>): StreamPlan {
  const model = typeof body.model === "string" ? body.model : "fake-model";
  const streamOptions = body.stream_options;
  const includeUsage = isRecord(streamOptions) && streamOptions.include_usage === true;
  if (reply.kind === "stream_error") {
    return {
      model,
      includeUsage,
      blocks: reply.afterBlocks ?? [],
      usage: fullUsage(undefined),
      stopReason: "stop",
      error: { message: reply.message, errorType: reply.errorType },
    };
  }
  const hasTool = reply.blocks.some((b) => b.type === "toolCall");
  return {
    model,
    includeUsage,
    blocks: reply.blocks,
    usage: fullUsage(reply.usage),
    stopReason: reply.stopReason ?? (hasTool ? "toolUse" : "stop"),
    ...(reply.finishReason ? { finishReason: reply.finishReason } : {}),
  };
}

const fullUsage = (u: FakeUsage | undefined): StreamPlan["usage"] => ({
  input: u?.input ?? 10,
  output: u?.output ?? 5,
  cacheRead: u?.cacheRead ?? 0,
  cacheWrite: u?.cacheWrite ?? 0,
  cacheWrite1h: u?.cacheWrite1h ?? 0,
  ...(u?.reasoning !== undefined ? { reasoning: u.reasoning } : {}),
  ...(u?.billing ? { billing: u.billing } : {}),
});

const DISCONNECT_FLUSH_MS = 20;

function streamResponse(frames: Frame[], timing: FakeTiming, contentType = "text/event-stream; charset=utf-8"): Response {
  const enc = new TextEncoder();
  let cancelled = false;
  const body = new ReadableStream<Uint8Array>({
    async start(ctl) {
      for (const [i, frame] of frames.entries()) {
        if (i === timing.stallAfterChunks) return;
        if (i === timing.disconnectAfterChunks) {
          // Erroring the body resets the socket and drops whatever Bun has not written yet, so give the
          // chunks already enqueued time to reach the client first. error() without a reason: Bun logs reasons.
          await Bun.sleep(DISCONNECT_FLUSH_MS);
          ctl.error();
          return;
        }
        if (timing.chunkDelayMs) await Bun.sleep(timing.chunkDelayMs);
        if (cancelled) return;
        ctl.enqueue(typeof frame === "string" ? enc.encode(frame) : frame);
      }
      ctl.close();
    },
    cancel() {
      cancelled = true;
    },
  });
  return new Response(body, {
    headers: { "content-type": contentType, "cache-control": "no-cache" },
  });
}

const anthropicErrorTypes: Record<number, string> = {
  400: "invalid_request_error",
  401: "authentication_error",
  403: "permission_error",
  404: "not_found_error",
  413: "request_too_large",
  429: "rate_limit_error",
  500: "api_error",
  504: "timeout_error",
  529: "overloaded_error",
};
const openaiErrorTypes: Record<number, string> = {
  400: "invalid_request_error",
  401: "invalid_request_error",
  403: "invalid_request_error",
  404: "invalid_request_error",
  429: "rate_limit_exceeded",
  500: "server_error",
  503: "server_error",
};

const googleStatuses: Record<number, string> = {
  400: "INVALID_ARGUMENT",
  401: "UNAUTHENTICATED",
  403: "PERMISSION_DENIED",
  404: "NOT_FOUND",
  429: "RESOURCE_EXHAUSTED",
  500: "INTERNAL",
  503: "UNAVAILABLE",
};

function errorResponse(
  api: FakeApi | undefined,
  status: number,
  o: { body?: unknown; message?: string; errorType?: string; headers?: Record<string, string> },
): Response {
  const message = o.message ?? (status === 529 ? "Overloaded" : `fake provider: HTTP ${status}`);
  const requestId = randomId("req_011", 24);
  if (api === "anthropic-messages") {
    const type = o.errorType ?? anthropicErrorTypes[status] ?? "api_error";
    const body = o.body ?? { type: "error", error: { type, message }, request_id: requestId };
    return Response.json(body, { status, headers: { "request-id": requestId, ...o.headers } });
  }
  if (api === "mistral-conversations") return mistralErrorResponse(status, o);
  if (api === "pi-messages") return Response.json(o.body ?? piMessagesErrorBody(message, o.errorType), { status, headers: o.headers });
  if (api === "bedrock-converse-stream") return bedrockErrorResponse(status, o.message ?? `fake provider: HTTP ${status}`, o.errorType, o.headers);
  if (api === "google-generative-ai") {
    const body = o.body ?? { error: { code: status, message, status: o.errorType ?? googleStatuses[status] ?? "INTERNAL" } };
    return Response.json(body, { status, headers: o.headers });
  }
  const type = o.errorType ?? openaiErrorTypes[status] ?? "server_error";
  const code = status === 429 ? "rate_limit_exceeded" : status === 401 ? "invalid_api_key" : null;
  const body = o.body ?? { error: { message, type, param: null, code } };
  return Response.json(body, { status, headers: { "x-request-id": requestId, ...o.headers } });
}

/** The request body as text; a zstd-encoded one (as the Codex adapter sends it) decoded first. */
async function bodyText(req: Request): Promise<string> {
  if (req.headers.get("content-encoding") !== "zstd") return req.text();
  return new TextDecoder().decode(Bun.zstdDecompressSync(new Uint8Array(await req.arrayBuffer())));
}

function parseJsonOrText(text: string): unknown {
  if (text === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
