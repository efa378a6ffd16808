/**
 * The ChatGPT subscription backend (`openai-codex-responses`): the Responses API at
 * `<baseUrl>/codex/responses`, authenticated by a ChatGPT login's access token (the
 * `openai-codex` OAuth credential in auth.json) and the account id the token names. The body is
 * a stateless Responses request (openai-responses.ts builds its input and tools and reads its
 * events) with the backend's own fields; it goes out zstd-compressed over HTTP and the reply
 * streams back as SSE. The reference also speaks this API over a WebSocket; pion does not.
 */
import type { ResponseInputItem, ResponseStreamEvent } from "openai/resources/responses/responses";
import { chatgptAccountId } from "../credentials/oauth-refresh.ts";
import { runProviderStream } from "./lifecycle.ts";
import { EventState, responsesTools, toInput } from "./openai-responses.ts";
import { countReasoningApart } from "./openai-shared.ts";
import { mappedValue } from "./reasoning-params.ts";
import { sseBatches } from "./sse.ts";
import { clampThinkingLevel } from "./thinking.ts";
import type { LlmRequest, Model, StreamFn } from "./types.ts";

export const CODEX_BASE_URL = "https://chatgpt.com/backend-api";

/** The backend refuses a smaller output limit. */
const MIN_OUTPUT_TOKENS = 16;
/** OpenAI's limit on `prompt_cache_key`, in code points. */
const CACHE_KEY_MAX = 64;

export const streamOpenAICodex: StreamFn = (req, signal) =>
  runProviderStream(req, signal, async ({ msg, out, signal: sig, touch }) => {
    countReasoningApart(msg);
    const { url, headers, body } = codexRequest(req);
    const json = JSON.stringify(body);
    const compressed = compress(json);
    if (compressed) headers.set("content-encoding", "zstd");
    touch();
    const res = await (req.fetch ?? fetch)(url, { method: "POST", headers, body: compressed ?? json, signal: sig });
    if (!res.ok) throw new Error(codexErrorMessage(res.status, await res.text().catch(() => "")));
    if (!res.body) throw new Error("the Codex backend answered without a body");
    const state = new EventState(msg, out);
    for await (const batch of sseBatches(res.body, touch)) {
      for (const { data } of batch) {
        if (!data || data === "[DONE]") continue;
        const ev = codexEvent(data);
        if (ev) state.apply(ev);
        if (state.finished) return;
      }
    }
    throw new Error("the Codex stream ended without response.completed");
  });

/** The URL, headers and body of one request (exported for tests). */
export function codexRequest(req: LlmRequest): { url: string; headers: Headers; body: Record<string, unknown> } {
  const token = req.apiKey;
  if (!token) throw new Error(`no credential for ${req.model.provider}: it needs a ChatGPT login (auth.json "openai-codex")`);
  const accountId = chatgptAccountId(token);
  if (!accountId) throw new Error(`the ${req.model.provider} credential is not a ChatGPT access token naming an account`);
  const cacheKey = req.sessionId ? Array.from(req.sessionId).slice(0, CACHE_KEY_MAX).join("") : undefined;
  return { url: codexUrl(req.model.baseUrl), headers: codexHeaders(req, token, accountId, cacheKey), body: codexBody(req, cacheKey) };
}

/** `<baseUrl>/codex/responses`, unless the base URL already names that endpoint (or `/codex`). */
export function codexUrl(baseUrl: string): string {
  const base = (baseUrl.trim() || CODEX_BASE_URL).replace(/\/+$/, "");
  if (base.endsWith("/codex/responses")) return base;
  return base.endsWith("/codex") ? `${base}/responses` : `${base}/codex/responses`;
}

/**
 * The model's and the call's headers over an `originator` (the backend expects one; the
 * reference names itself "pi"), then the ones this API fixes: auth, account, beta flag, SSE.
 */
function codexHeaders(req: LlmRequest, token: string, accountId: string, cacheKey: string | undefined): Headers {
  const headers = new Headers({ originator: "pi" });
  for (const [name, value] of Object.entries({ ...req.model.headers, ...req.authHeaders })) headers.set(name, value);
  headers.set("authorization", `Bearer ${token}`);
  headers.set("chatgpt-account-id", accountId);
  headers.set("openai-beta", "responses=experimental");
  headers.set("accept", "text/event-stream");
  headers.set("content-type", "application/json");
  if (cacheKey) {
    headers.set("session-id", cacheKey);
    headers.set("x-client-request-id", cacheKey);
  }
  return headers;
}

/**
 * The backend's Responses body: never stored, reasoning always returned encrypted for replay,
 * the system prompt as the first input item (the backend puts `instructions` after the input,
 * where it would defeat the prompt cache), tools with `strict: null`.
 */
function codexBody(req: LlmRequest, cacheKey: string | undefined): Record<string, unknown> {
  const { model } = req;
  // User text as input_text parts, as the backend's own client sends it.
  const input: ResponseInputItem[] = toInput(req).map((item) =>
    "role" in item && item.role === "user" && typeof item.content === "string" ? { ...item, content: [{ type: "input_text", text: item.content }] } : item,
  );
  if (req.systemPrompt) input.unshift({ role: model.reasoning && model.compat?.supportsDeveloperRole !== false ? "developer" : "system", content: req.systemPrompt });
  const body: Record<string, unknown> = {
    model: model.id,
    store: false,
    stream: true,
    input,
    text: { verbosity: "low" },
    include: ["reasoning.encrypted_content"],
    prompt_cache_key: cacheKey,
    tool_choice: "auto",
    parallel_tool_calls: true,
  };
  if (model.compat?.supportsMaxOutputTokens !== false) body.max_output_tokens = Math.max(model.maxTokens, MIN_OUTPUT_TOKENS);
  if (req.tools.length > 0) body.tools = responsesTools(req, null);
  const effort = codexEffort(model, req.thinkingLevel);
  if (effort !== undefined) body.reasoning = { effort, summary: "auto" };
  return body;
}

/**
 * The effort sent for a level: "off" is effort `none`, or the model's mapped value for off, or
 * no reasoning field when the model cannot stop reasoning (off mapped to null, or efforts listed
 * without `none`); any other level is clamped to the model's and mapped. Undefined for a model
 * without reasoning.
 */
export function codexEffort(model: Model, level: LlmRequest["thinkingLevel"]): string | undefined {
  if (!model.reasoning) return undefined;
  if (level === "off") {
    const off = model.thinkingLevelMap?.off;
    if (off !== undefined) return off ?? undefined;
    const efforts = model.reasoningOptions?.find((o) => o.type === "effort");
    return efforts && !efforts.values.includes("none") ? undefined : "none";
  }
  const clamped = clampThinkingLevel(model, level);
  return clamped === "off" ? codexEffort(model, "off") : mappedValue(model, clamped);
}

const KNOWN_STATUSES = new Set(["completed", "incomplete", "failed", "cancelled", "queued", "in_progress"]);

/**
 * One SSE data payload as a Responses event: `error` events throw; the backend's terminal
 * `response.done` (and `response.incomplete`) read as `response.completed`, its status kept only
 * when it is one of the API's.
 */
function codexEvent(data: string): ResponseStreamEvent | undefined {
  let ev: Record<string, unknown>;
  try {
    ev = JSON.parse(data) as Record<string, unknown>;
  } catch {
    throw new Error(`the Codex stream sent invalid JSON: ${data.slice(0, 200)}`);
  }
  const type = typeof ev.type === "string" ? ev.type : undefined;
  if (!type) return undefined;
  if (type === "error") {
    const nested = (typeof ev.error === "object" && ev.error !== null ? ev.error : {}) as Record<string, unknown>;
    const text = [ev.message, nested.message, ev.code, nested.code].find((x) => typeof x === "string" && x);
    throw new Error(`Codex error: ${text ?? data}`);
  }
  if (type === "response.done" || type === "response.completed" || type === "response.incomplete") {
    const response = (ev.response ?? {}) as Record<string, unknown>;
    const status = typeof response.status === "string" && KNOWN_STATUSES.has(response.status) ? response.status : undefined;
    return { ...ev, type: "response.completed", response: { ...response, status } } as unknown as ResponseStreamEvent;
  }
  return ev as unknown as ResponseStreamEvent;
}

/**
 * A failed HTTP response as one line. A spent ChatGPT allowance (HTTP 429 or a usage-limit code)
 * says so with the plan and when it resets, and carries no status: waiting a few seconds and
 * retrying does not help. Anything else: the status and the backend's message.
 */
export function codexErrorMessage(status: number, text: string, now = Date.now()): string {
  let error: Record<string, unknown> | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: unknown };
    if (typeof parsed.error === "object" && parsed.error !== null) error = parsed.error as Record<string, unknown>;
  } catch {
    // not JSON: the text itself is the message
  }
  const code = String(error?.code ?? error?.type ?? "");
  if (status === 429 || /usage_limit_reached|usage_not_included|rate_limit_exceeded/i.test(code)) {
    const plan = typeof error?.plan_type === "string" ? ` (${error.plan_type.toLowerCase()} plan)` : "";
    const resets = typeof error?.resets_at === "number" ? ` It resets in about ${Math.max(0, Math.round((error.resets_at * 1000 - now) / 60_000))} min.` : "";
    return `The ChatGPT usage limit of this account${plan} is used up.${resets}`;
  }
  const message = typeof error?.message === "string" && error.message ? error.message : text.trim() || "request failed";
  return `${status} ${message}`;
}

/** The body zstd-compressed (the backend decodes `content-encoding: zstd`), or undefined where Bun lacks zstd. */
function compress(json: string): Uint8Array | undefined {
  if (typeof Bun.zstdCompressSync !== "function") return undefined;
  try {
    return new Uint8Array(Bun.zstdCompressSync(json, { level: 3 }));
  } catch {
    return undefined;
  }
}
