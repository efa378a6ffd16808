import { requestHeaders } from "./compat.ts";
import { textBlockEnd, type PushStream } from "./event-stream.ts";
import { runProviderStream } from "./lifecycle.ts";
import { mistralIdFrom, toMistralBody } from "./mistral-request.ts";
import { sseBatches } from "./sse.ts";
import { setToolArguments } from "./transform.ts";
import type { AssistantMessage, LlmRequest, StopReason, StreamFn, ToolCall } from "./types.ts";

/**
 * Mistral's own chat completions endpoint (`mistral-conversations`, the built-in mistral
 * provider's API), over fetch: `<baseUrl>/v1/chat/completions`, the key as a Bearer token, the
 * SSE body read by pion's reader. An HTTP failure reads "Mistral API error (<status>): <body>",
 * which the session's retry and overflow checks classify like any provider's.
 */
export const streamMistral: StreamFn = (req, signal) =>
  runProviderStream(req, signal, async ({ msg, out, signal: sig, touch }) => {
    if (!req.apiKey && !req.authHeaders) throw new Error(`No API key for provider: ${req.model.provider}`);
    const body = JSON.stringify(toMistralBody(req));
    touch();
    const res = await (req.fetch ?? fetch)(mistralUrl(req.model.baseUrl), { method: "POST", headers: mistralHeaders(req), body, signal: sig });
    touch();
    if (!res.ok) throw new Error(`Mistral API error (${res.status}): ${await errorBody(res)}`);
    if (!res.body) throw new Error("Mistral response has no body");
    const state = new ChunkState(msg, out);
    read: for await (const batch of sseBatches(res.body, touch)) {
      for (const ev of batch) {
        const data = ev.data.trim();
        if (data === "[DONE]") break read;
        if (data) state.apply(parseChunk(data));
      }
      await out.backpressure();
      touch(); // waiting for our own consumer is not the provider stalling
    }
    state.finish();
  });

/**
 * `<baseUrl>/v1/chat/completions`, as the reference builds it from Mistral's bare origin; a base
 * URL that already ends in `/v1` (the OpenAI-compatible spelling) does not get a second one.
 */
export function mistralUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, "");
  return `${trimmed}${/\/v1$/.test(trimmed) ? "" : "/v1"}/chat/completions`;
}

/** The key as Bearer, then the model's headers and the request's own; the session id as `x-affinity` unless a header names one. */
export function mistralHeaders(req: LlmRequest): Headers {
  const headers = new Headers({ accept: "text/event-stream", "content-type": "application/json" });
  if (req.apiKey) headers.set("authorization", `Bearer ${req.apiKey}`);
  for (const [name, value] of Object.entries({ ...requestHeaders(req), ...req.authHeaders })) headers.set(name, value);
  if (req.sessionId && !headers.has("x-affinity")) headers.set("x-affinity", req.sessionId);
  return headers;
}

const MAX_ERROR_BODY = 4000;

/** The response body (trimmed, at most MAX_ERROR_BODY characters), else the status text. */
async function errorBody(res: Response): Promise<string> {
  const text = (await res.text().catch(() => "")).trim();
  if (!text) return res.statusText || `Request failed with status ${res.status}`;
  if (text.length <= MAX_ERROR_BODY) return text;
  let end = MAX_ERROR_BODY;
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--; // never half a surrogate pair
  return `${text.slice(0, end)}... [truncated ${text.length - end} chars]`;
}

type ContentItem = string | { type?: string; text?: string; thinking?: { text?: string }[] };

interface MistralToolCallDelta {
  id?: string | null;
  index?: number | null;
  function?: { name?: string; arguments?: string | Record<string, unknown> | null };
}

interface MistralUsage {
  prompt_tokens?: number;
  completion_tokens?: number;
  [field: string]: unknown;
}

export interface MistralChunk {
  id?: string;
  usage?: MistralUsage | null;
  choices: { delta?: { content?: string | ContentItem[] | null; tool_calls?: MistralToolCallDelta[] | null }; finish_reason?: string | null }[];
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);

/** One event's data as a chunk; an error object in the stream fails the request with its message. */
export function parseChunk(data: string): MistralChunk {
  let parsed: unknown;
  try {
    parsed = JSON.parse(data);
  } catch {
    throw new Error(`Mistral sent an event that is not JSON: ${data.slice(0, 200)}`);
  }
  if (isRecord(parsed) && Array.isArray(parsed.choices)) return parsed as unknown as MistralChunk;
  const inner = isRecord(parsed) && isRecord(parsed.error) ? parsed.error : parsed;
  const message = isRecord(inner) && typeof inner.message === "string" ? inner.message : undefined;
  throw new Error(message ? `Mistral stream error: ${message}` : `Invalid Mistral streaming event: ${data.slice(0, 200)}`);
}

/** Cached prompt tokens, in whichever spelling the usage carries them; never more than the prompt. */
function cachedTokens(u: MistralUsage, prompt: number): number {
  const details = (u.prompt_tokens_details ?? u.prompt_token_details) as { cached_tokens?: unknown } | undefined;
  const raw = details?.cached_tokens ?? u.num_cached_tokens;
  return typeof raw === "number" && Number.isFinite(raw) ? Math.min(prompt, Math.max(0, raw)) : 0;
}

interface ToolSlot {
  contentIndex: number;
  json: string;
}

class ChunkState {
  /** Index in msg.content of the text or thinking block receiving deltas, if one is open. */
  private open: number | undefined;
  /** A tool call's `index` (or its id) -> its slot; tool calls end together when the stream does. */
  private tools = new Map<number | string, ToolSlot>();
  private finishReason: string | undefined;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  apply(chunk: MistralChunk): void {
    if (!this.msg.responseId && chunk.id) this.msg.responseId = chunk.id;
    if (chunk.usage) this.applyUsage(chunk.usage);
    const choice = chunk.choices[0];
    if (!choice) return;
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.msg.rawStopReason = choice.finish_reason;
    }
    const content = choice.delta?.content;
    for (const item of typeof content === "string" ? [content] : (content ?? [])) {
      if (typeof item === "string") this.append("text", item);
      else if (item.type === "text") this.append("text", item.text ?? "");
      else if (item.type === "thinking") this.append("thinking", (item.thinking ?? []).map((p) => p.text ?? "").join(""));
    }
    for (const tc of choice.delta?.tool_calls ?? []) this.applyToolCall(tc);
  }

  /** Close every block; a stream that ends without a finish reason was cut off. */
  finish(): void {
    this.close();
    for (const slot of this.tools.values()) {
      const call = this.msg.content[slot.contentIndex] as ToolCall;
      setToolArguments(call, slot.json);
      this.out.push({ type: "toolcall_end", contentIndex: slot.contentIndex, toolCall: call });
    }
    if (!this.finishReason) throw new Error("Mistral stream ended without a finish reason");
    this.msg.stopReason = mapFinish(this.finishReason);
  }

  private applyUsage(u: MistralUsage): void {
    const prompt = u.prompt_tokens || 0;
    const cached = cachedTokens(u, prompt);
    const usage = this.msg.usage;
    usage.input = prompt - cached;
    usage.output = u.completion_tokens || 0;
    usage.cacheRead = cached;
    usage.cacheWrite = 0;
  }

  /** Text or thinking; empty deltas (GLM models send them around tool calls) open no block. */
  private append(kind: "text" | "thinking", delta: string): void {
    if (!delta) return;
    let block = this.open === undefined ? undefined : this.msg.content[this.open];
    if (block?.type !== kind) {
      this.close();
      block = kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" };
      this.open = this.msg.content.push(block) - 1;
      this.out.push({ type: kind === "text" ? "text_start" : "thinking_start", contentIndex: this.open });
    }
    if (block.type === "text") block.text += delta;
    else if (block.type === "thinking") block.thinking += delta;
    this.out.push({ type: kind === "text" ? "text_delta" : "thinking_delta", contentIndex: this.open!, delta });
  }

  private applyToolCall(tc: MistralToolCallDelta): void {
    this.close();
    const given = tc.id && tc.id !== "null" ? tc.id : undefined;
    const key = tc.index ?? given ?? this.tools.size;
    let slot = this.tools.get(key);
    if (!slot) {
      const id = given ?? mistralIdFrom(crypto.randomUUID());
      const name = tc.function?.name ?? "";
      const contentIndex = this.msg.content.push({ type: "toolCall", id, name, arguments: {} }) - 1;
      slot = { contentIndex, json: "" };
      this.tools.set(key, slot);
      this.out.push({ type: "toolcall_start", contentIndex, id, toolName: name });
    }
    const raw = tc.function?.arguments;
    const args = typeof raw === "string" ? raw : raw ? JSON.stringify(raw) : "";
    if (!args) return;
    slot.json += args;
    this.out.push({ type: "toolcall_delta", contentIndex: slot.contentIndex, delta: args });
  }

  private close(): void {
    if (this.open === undefined) return;
    const end = textBlockEnd(this.msg.content[this.open]!, this.open);
    this.open = undefined;
    if (end) this.out.push(end);
  }
}

/** Mistral's finish reasons; "error" is its transient server failure, worded so the session retries it. */
function mapFinish(reason: string): StopReason {
  switch (reason) {
    case "stop":
      return "stop";
    case "length":
    case "model_length":
      return "length";
    case "tool_calls":
      return "toolUse";
    case "error":
      throw new Error("Mistral stopped the response: error (a server error)");
    default:
      throw new Error(`Mistral stopped the response: ${reason}`);
  }
}
