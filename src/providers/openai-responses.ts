import type {
  Response,
  ResponseCreateParamsStreaming,
  ResponseFunctionCallOutputItemList,
  ResponseInputImage,
  ResponseInputItem,
  ResponseInputMessageContentList,
  ResponseOutputItem,
  ResponseReasoningItem,
  ResponseStreamEvent,
} from "openai/resources/responses/responses";
import * as v from "valibot";
import type { PushStream } from "./event-stream.ts";
import { callIdOf, dataUrl, IMAGE_OMITTED, runOpenAIStream, type StreamContext } from "./openai-shared.ts";
import { affinityHeaders, samplingParams } from "./compat.ts";
import { responsesReasoning } from "./reasoning-params.ts";
import { clampThinkingLevel } from "./thinking.ts";
import { sanitizeHistory, setToolArguments } from "./transform.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, StreamFn, TextContent, ToolResultMessage } from "./types.ts";

/** The OpenAI Responses API, stateless (`store: false`): reasoning is replayed from encrypted items. */
export const streamOpenAIResponses: StreamFn = (req, signal) => runOpenAIStream(req, signal, (ctx) => consumeResponses(req, ctx));

/** One Responses request and its stream; `deployment` (Azure) is sent as the body's model instead of the model's id. */
export async function consumeResponses(req: LlmRequest, { client, msg, out, signal, touch }: StreamContext, deployment?: string): Promise<void> {
  const compat = req.model.compat ?? {};
  const headers = compat.sessionAffinityFormat && req.sessionId ? affinityHeaders(compat.sessionAffinityFormat, req.sessionId, "responses") : undefined;
  const params = toParams(req);
  if (deployment) params.model = deployment;
  const stream = await client.responses.create(params, { signal, ...(headers ? { headers } : {}) });
  const state = new EventState(msg, out);
  for await (const ev of stream) {
    touch();
    state.apply(ev);
  }
  if (!state.finished) throw new Error("stream ended without response.completed");
}

/** What a thinking block's `thinkingSignature` holds: the reasoning item to send back. */
const ReasoningSignature = v.object({
  id: v.string(),
  encrypted_content: v.optional(v.nullable(v.string())),
  summary: v.optional(v.array(v.object({ type: v.literal("summary_text"), text: v.string() })), []),
});

/** Applies one Responses stream's events to the message being built (shared with the Codex adapter). */
export class EventState {
  /** output_index -> index in msg.content */
  private index = new Map<number, number>();
  private json = new Map<number, string>();
  private sawToolCall = false;
  finished = false;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  apply(ev: ResponseStreamEvent): void {
    switch (ev.type) {
      case "response.created":
        this.msg.responseId = ev.response.id;
        break;
      case "response.output_item.added":
        this.start(ev.output_index, ev.item);
        break;
      case "response.output_text.delta":
      case "response.refusal.delta":
        this.appendText(ev.output_index, ev.delta);
        break;
      case "response.reasoning_summary_part.added":
        // Separate the summary parts of one reasoning item as paragraphs.
        if (ev.summary_index > 0) this.appendThinking(ev.output_index, "\n\n");
        break;
      case "response.reasoning_summary_text.delta":
      case "response.reasoning_text.delta":
        this.appendThinking(ev.output_index, ev.delta);
        break;
      case "response.function_call_arguments.delta": {
        const i = this.index.get(ev.output_index);
        if (i === undefined || this.msg.content[i]?.type !== "toolCall") break;
        this.json.set(i, (this.json.get(i) ?? "") + ev.delta);
        this.out.push({ type: "toolcall_delta", contentIndex: i, delta: ev.delta });
        break;
      }
      case "response.output_item.done":
        this.done(ev.output_index, ev.item);
        break;
      case "response.completed":
      case "response.incomplete":
      case "response.failed":
        this.end(ev.response);
        break;
      case "error":
        this.msg.stopReason = "error";
        this.msg.errorMessage = ev.message;
        this.finished = true;
        break;
    }
  }

  private start(outputIndex: number, item: ResponseOutputItem): void {
    const i = this.msg.content.length;
    if (item.type === "message") {
      this.msg.content.push({ type: "text", text: "", textSignature: item.id });
      this.out.push({ type: "text_start", contentIndex: i });
    } else if (item.type === "reasoning") {
      this.msg.content.push({ type: "thinking", thinking: "" });
      this.out.push({ type: "thinking_start", contentIndex: i });
    } else if (item.type === "function_call") {
      const id = item.id ? `${item.call_id}|${item.id}` : item.call_id;
      this.msg.content.push({ type: "toolCall", id, name: item.name, arguments: {} });
      this.sawToolCall = true;
      this.out.push({ type: "toolcall_start", contentIndex: i, id, toolName: item.name });
    } else return;
    this.index.set(outputIndex, i);
  }

  private appendText(outputIndex: number, delta: string): void {
    const i = this.index.get(outputIndex);
    const block = i === undefined ? undefined : this.msg.content[i];
    if (i === undefined || block?.type !== "text") return;
    block.text += delta;
    this.out.push({ type: "text_delta", contentIndex: i, delta });
  }

  private appendThinking(outputIndex: number, delta: string): void {
    const i = this.index.get(outputIndex);
    const block = i === undefined ? undefined : this.msg.content[i];
    if (i === undefined || block?.type !== "thinking") return;
    block.thinking += delta;
    this.out.push({ type: "thinking_delta", contentIndex: i, delta });
  }

  /** The done item is authoritative: it fills in what the deltas did not carry. */
  private done(outputIndex: number, item: ResponseOutputItem): void {
    const i = this.index.get(outputIndex);
    const block = i === undefined ? undefined : this.msg.content[i];
    if (i === undefined || !block) return;
    if (block.type === "text" && item.type === "message") {
      if (!block.text) block.text = item.content.map((c) => (c.type === "output_text" ? c.text : c.refusal)).join("");
      this.out.push({ type: "text_end", contentIndex: i, content: block.text });
    } else if (block.type === "thinking" && item.type === "reasoning") {
      if (!block.thinking) block.thinking = item.summary.map((s) => s.text).join("\n\n");
      block.thinkingSignature = JSON.stringify(reasoningSignature(item));
      this.out.push({ type: "thinking_end", contentIndex: i, content: block.thinking });
    } else if (block.type === "toolCall" && item.type === "function_call") {
      setToolArguments(block, item.arguments || (this.json.get(i) ?? ""));
      this.out.push({ type: "toolcall_end", contentIndex: i, toolCall: block });
    }
  }

  private end(response: Response): void {
    this.finished = true;
    const msg = this.msg;
    msg.responseId = response.id;
    const u = response.usage;
    if (u) {
      // input_tokens counts cached and cache-written tokens too.
      const cacheRead = u.input_tokens_details?.cached_tokens ?? 0;
      const cacheWrite = u.input_tokens_details?.cache_write_tokens ?? 0;
      msg.usage.input = Math.max(0, u.input_tokens - cacheRead - cacheWrite);
      msg.usage.cacheRead = cacheRead;
      msg.usage.cacheWrite = cacheWrite;
      msg.usage.output = u.output_tokens;
      msg.usage.reasoning = u.output_tokens_details?.reasoning_tokens ?? 0;
    }
    const reason = response.incomplete_details?.reason;
    // As the reference spells it: the status, with the reason of an incomplete one ("incomplete.max_output_tokens").
    if (response.status) msg.rawStopReason = reason ? `${response.status}.${reason}` : response.status;
    if (response.status === "failed" || response.status === "cancelled") {
      msg.stopReason = "error";
      msg.errorMessage = response.error?.message ?? `response ${response.status}`;
    } else if (response.status === "incomplete") {
      msg.stopReason = reason === "content_filter" ? "error" : "length";
      if (reason === "content_filter") msg.errorMessage = "The provider stopped the response: content filter";
    } else msg.stopReason = this.sawToolCall ? "toolUse" : "stop";
  }
}

function reasoningSignature(item: ResponseReasoningItem): v.InferOutput<typeof ReasoningSignature> {
  return { id: item.id, encrypted_content: item.encrypted_content, summary: item.summary };
}

/**
 * models.json compat read here: `supportsMaxOutputTokens: false` leaves out max_output_tokens,
 * `supportsStrictMode: false` the tools' `strict`, `promptCacheKeyMode: "disabled"` the cache key.
 */
function toParams(req: LlmRequest): ResponseCreateParamsStreaming {
  const { model } = req;
  const compat = model.compat ?? {};
  const params: ResponseCreateParamsStreaming = {
    model: model.id,
    input: toInput(req),
    stream: true,
    store: false,
    ...(compat.supportsMaxOutputTokens === false ? {} : { max_output_tokens: model.maxTokens }),
    ...responsesReasoning(model, req.thinkingLevel),
  };
  if (req.systemPrompt) params.instructions = req.systemPrompt;
  if (req.tools.length > 0) params.tools = responsesTools(req);
  if (req.sessionId && compat.promptCacheKeyMode !== "disabled") params.prompt_cache_key = req.sessionId;
  Object.assign(params, samplingParams(model, clampThinkingLevel(model, req.thinkingLevel)));
  return params;
}

/** The request's tools as Responses function tools, `strict` as given unless models.json says the endpoint lacks it. */
export function responsesTools(req: LlmRequest, strictValue: false | null = false): NonNullable<ResponseCreateParamsStreaming["tools"]> {
  const strict = req.model.compat?.supportsStrictMode === false ? {} : { strict: strictValue };
  return req.tools.map((t) => ({ type: "function", name: t.name, description: t.description, parameters: t.parameters, ...strict })) as NonNullable<ResponseCreateParamsStreaming["tools"]>;
}

/** The conversation as Responses input items (the system prompt is not among them). */
export function toInput(req: LlmRequest): ResponseInputItem[] {
  const { model } = req;
  const images = model.input.includes("image");
  const input: ResponseInputItem[] = [];
  for (const m of sanitizeHistory(req.messages)) {
    if (m.role === "user") input.push({ role: "user", content: userContent(m.content, images) });
    else if (m.role === "assistant") input.push(...assistantItems(m, model, input.length));
    else input.push({ type: "function_call_output", call_id: callIdOf(m.toolCallId), output: toolOutput(m, images) });
  }
  return input;
}

const imagePart = (c: ImageContent): ResponseInputImage => ({
  type: "input_image",
  detail: "auto",
  image_url: dataUrl(c.data, c.mimeType),
});

function userContent(content: string | (TextContent | ImageContent)[], images: boolean): string | ResponseInputMessageContentList {
  if (typeof content === "string") return content || "(empty)";
  const parts: ResponseInputMessageContentList = content.map((c) =>
    c.type === "text" ? { type: "input_text", text: c.text } : images ? imagePart(c) : { type: "input_text", text: IMAGE_OMITTED },
  );
  return parts.length > 0 ? parts : "(empty)";
}

function toolOutput(m: ToolResultMessage, images: boolean): string | ResponseFunctionCallOutputItemList {
  const hasImages = m.content.some((c) => c.type === "image");
  if (!hasImages || !images) {
    return m.content.map((c) => (c.type === "text" ? c.text : IMAGE_OMITTED)).join("\n") || "(empty)";
  }
  return m.content.map((c) => (c.type === "text" ? { type: "input_text", text: c.text } : imagePart(c)));
}

/**
 * Item ids and encrypted reasoning are only sent back to the provider that issued them;
 * for any other source the same turn goes as plain items and thinking is dropped.
 */
function assistantItems(m: AssistantMessage, model: Model, position: number): ResponseInputItem[] {
  const native = m.api === model.api && m.provider === model.provider;
  // A function_call item id without its reasoning item is rejected, so both go or neither.
  const withReasoning = native && model.reasoning;
  const items: ResponseInputItem[] = [];
  m.content.forEach((c, i) => {
    if (c.type === "text") {
      if (!c.text) return;
      const id = native && c.textSignature ? c.textSignature : `msg_${position}_${i}`;
      items.push({
        type: "message",
        role: "assistant",
        id,
        status: "completed",
        content: [{ type: "output_text", text: c.text, annotations: [] }],
      });
    } else if (c.type === "thinking") {
      if (!withReasoning || !c.thinkingSignature) return;
      const sig = v.safeParse(ReasoningSignature, parseJson(c.thinkingSignature));
      if (sig.success) items.push({ type: "reasoning", ...sig.output });
    } else {
      const [callId, itemId] = c.id.split("|");
      items.push({
        type: "function_call",
        call_id: callId!,
        name: c.name,
        arguments: JSON.stringify(c.arguments),
        ...(withReasoning && itemId ? { id: itemId } : {}),
      });
    }
  });
  return items;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
