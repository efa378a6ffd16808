import type {
  ChatCompletionAssistantMessageParam,
  ChatCompletionChunk,
  ChatCompletionContentPartImage,
  ChatCompletionContentPartText,
  ChatCompletionCreateParamsStreaming,
  ChatCompletionMessageParam,
} from "openai/resources/chat/completions";
import { affinityHeaders, completionsCompat, samplingParams, type CompletionsCompat } from "./compat.ts";
import { completionsCaching, markCompletionsCache, type CompletionsCaching } from "./completions-cache.ts";
import { completionsBudget, formatReasoning } from "./completions-thinking.ts";
import { applyReportedCost, isOpenRouter, type ReportedCost } from "./cost.ts";
import { textBlockEnd, type PushStream } from "./event-stream.ts";
import { callIdOf, dataUrl, IMAGE_OMITTED, runOpenAIStream, type StreamContext } from "./openai-shared.ts";
import { completionsReasoning } from "./reasoning-params.ts";
import { clampThinkingLevel } from "./thinking.ts";
import { sanitizeHistory, setToolArguments } from "./transform.ts";
import type { AssistantMessage, ImageContent, LlmRequest, Model, StopReason, StreamFn, TextContent, ToolCall } from "./types.ts";

/** Chat Completions, the API every OpenAI-compatible server speaks. */
export const streamOpenAICompletions: StreamFn = (req, signal) => runOpenAIStream(req, signal, (ctx) => consumeCompletions(req, ctx));

/** One Chat Completions request and its stream; `deployment` (Azure) is sent as the body's model instead of the model's id. */
export async function consumeCompletions(req: LlmRequest, { client, msg, out, signal, touch }: StreamContext, deployment?: string): Promise<void> {
  const caching = completionsCaching(req.model, req.sessionId);
  const compat = completionsCompat(req.model);
  const headers = sessionHeaders(req, caching, compat);
  const params = toParams(req, caching, compat);
  if (deployment) params.model = deployment;
  const stream = await client.chat.completions.create(params, { signal, ...(headers ? { headers } : {}) });
  const state = new ChunkState(msg, out, isOpenRouter(req.model), compat.supportsFinishReason);
  for await (const chunk of stream) {
    touch();
    state.apply(chunk);
  }
  state.finish();
}

/** Reasoning deltas are not in OpenAI's schema: DeepSeek and most servers send `reasoning_content`, OpenRouter and vLLM `reasoning`. */
type CompatDelta = ChatCompletionChunk.Choice.Delta & { reasoning_content?: string | null; reasoning?: string | null };
type FinishReason = NonNullable<ChatCompletionChunk.Choice["finish_reason"]>;

interface ToolSlot {
  contentIndex: number;
  id: string;
  json: string;
}

class ChunkState {
  /** Index in msg.content of the block receiving deltas, if one is open. */
  private open: number | undefined;
  /** Tool-call `index` of the chunk -> its slot. */
  private tools = new Map<number, ToolSlot>();
  private finishReason: FinishReason | undefined;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
    /** Believe the usage chunk's `cost` (OpenRouter's billed total). */
    private reportsCost: boolean,
    /** False (models.json `supportsFinishReason`): a stream that just ends is a finished reply. */
    private expectsFinishReason = true,
  ) {}

  apply(chunk: ChatCompletionChunk): void {
    this.msg.responseId ??= chunk.id;
    if (chunk.usage) this.applyUsage(chunk.usage);
    const choice = chunk.choices?.[0];
    if (!choice) return;
    const delta: CompatDelta = choice.delta ?? {};
    const reasoning = delta.reasoning_content || delta.reasoning;
    if (reasoning) this.appendThinking(reasoning);
    if (delta.content) this.appendText(delta.content);
    for (const tc of delta.tool_calls ?? []) this.applyToolCall(tc);
    if (choice.finish_reason) {
      this.finishReason = choice.finish_reason;
      this.msg.rawStopReason = choice.finish_reason;
      this.close();
    }
  }

  /** Close the open block and settle stopReason; a stream without finish_reason was cut off. */
  finish(): void {
    this.close();
    for (const slot of this.tools.values()) setToolArguments(this.toolAt(slot.contentIndex), slot.json);
    if (!this.finishReason && this.expectsFinishReason) throw new Error("stream ended without finish_reason");
    const stop = this.finishReason ? mapFinish(this.finishReason) : "stop";
    const hasTools = this.tools.size > 0;
    // Some servers (Ollama among them) report "stop" for a turn that calls tools.
    this.msg.stopReason = stop === "stop" && hasTools ? "toolUse" : stop;
    if (this.finishReason === "content_filter") this.msg.errorMessage = "The provider stopped the response: content filter";
  }

  private applyUsage(u: NonNullable<ChatCompletionChunk["usage"]>): void {
    // prompt_tokens counts cached and cache-written tokens too.
    const cacheRead = u.prompt_tokens_details?.cached_tokens ?? 0;
    const cacheWrite = u.prompt_tokens_details?.cache_write_tokens ?? 0;
    const usage = this.msg.usage;
    usage.input = Math.max(0, (u.prompt_tokens ?? 0) - cacheRead - cacheWrite);
    usage.cacheRead = cacheRead;
    usage.cacheWrite = cacheWrite;
    usage.output = u.completion_tokens ?? 0;
    const details = u.completion_tokens_details as { reasoning_tokens?: number } | undefined;
    usage.reasoning = details?.reasoning_tokens ?? (u as { reasoning_tokens?: number }).reasoning_tokens ?? 0;
    if (this.reportsCost) {
      usage.cost.totalFromProvider = false; // a later usage chunk replaces an earlier one whole
      applyReportedCost(usage, u as ReportedCost);
    }
  }

  private appendText(text: string): void {
    let block = this.open === undefined ? undefined : this.msg.content[this.open];
    if (block?.type !== "text") {
      this.close();
      block = { type: "text", text: "" };
      this.open = this.msg.content.push(block) - 1;
      this.out.push({ type: "text_start", contentIndex: this.open });
    }
    block.text += text;
    this.out.push({ type: "text_delta", contentIndex: this.open!, delta: text });
  }

  private appendThinking(thinking: string): void {
    let block = this.open === undefined ? undefined : this.msg.content[this.open];
    if (block?.type !== "thinking") {
      this.close();
      block = { type: "thinking", thinking: "" };
      this.open = this.msg.content.push(block) - 1;
      this.out.push({ type: "thinking_start", contentIndex: this.open });
    }
    block.thinking += thinking;
    this.out.push({ type: "thinking_delta", contentIndex: this.open!, delta: thinking });
  }

  private applyToolCall(tc: ChatCompletionChunk.Choice.Delta.ToolCall): void {
    let slot = this.tools.get(tc.index);
    // A new id at a known index is a new call: some servers send every call at index 0.
    if (!slot || (tc.id && tc.id !== slot.id)) {
      this.close();
      const id = tc.id || `call_${this.msg.content.length}`;
      const name = tc.function?.name ?? "";
      const contentIndex = this.msg.content.push({ type: "toolCall", id, name, arguments: {} }) - 1;
      slot = { contentIndex, id, json: "" };
      this.tools.set(tc.index, slot);
      this.open = contentIndex;
      this.out.push({ type: "toolcall_start", contentIndex, id, toolName: name });
    } else if (tc.function?.name && !this.toolAt(slot.contentIndex).name) {
      this.toolAt(slot.contentIndex).name = tc.function.name;
    }
    const args = tc.function?.arguments;
    if (args) {
      slot.json += args;
      this.out.push({ type: "toolcall_delta", contentIndex: slot.contentIndex, delta: args });
    }
  }

  private toolAt(index: number): ToolCall {
    return this.msg.content[index] as ToolCall;
  }

  private close(): void {
    if (this.open === undefined) return;
    const i = this.open;
    const block = this.msg.content[i]!;
    this.open = undefined;
    const end = textBlockEnd(block, i);
    if (end) this.out.push(end);
    else if (block.type === "toolCall") {
      const slot = [...this.tools.values()].find((s) => s.contentIndex === i);
      setToolArguments(block, slot?.json ?? "");
      this.out.push({ type: "toolcall_end", contentIndex: i, toolCall: block });
    }
  }
}

function mapFinish(reason: FinishReason): StopReason {
  switch (reason) {
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "toolUse";
    case "content_filter":
      return "error";
    default:
      return "stop";
  }
}

type Params = ChatCompletionCreateParamsStreaming & Record<string, unknown>;

function toParams(req: LlmRequest, caching: CompletionsCaching, compat: CompletionsCompat): ChatCompletionCreateParamsStreaming {
  const { model } = req;
  const level = clampThinkingLevel(model, req.thinkingLevel);
  const params: Params = { model: model.id, messages: toMessages(req, compat), stream: true };
  if (compat.supportsUsageInStreaming) params.stream_options = { include_usage: true };
  if (compat.supportsStore) params.store = false;
  params[compat.maxTokensField] = model.maxTokens;
  const budget = completionsBudget(model, level, model.maxTokens, req.thinkingBudgets);
  const format = compat.thinkingFormat;
  Object.assign(params, format ? formatReasoning(model, level, { ...compat, thinkingFormat: format }, budget) : completionsReasoning(model, req.thinkingLevel));
  if (compat.thinkingTokenBudgetField && budget !== undefined) params[compat.thinkingTokenBudgetField] = budget;
  if (req.tools.length > 0) {
    params.tools = req.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters, ...(compat.supportsStrictMode ? { strict: false } : {}) },
    }));
    if (compat.zaiToolStream) params.tool_stream = true;
  } else if (compat.requiresToolsWithToolHistory && req.messages.some((m) => m.role === "toolResult" || (m.role === "assistant" && m.content.some((c) => c.type === "toolCall")))) {
    params.tools = [];
  }
  const cacheKey = compat.promptCacheKeyMode === "enabled" ? req.sessionId : compat.promptCacheKeyMode === "disabled" ? undefined : caching.promptCacheKey;
  if (cacheKey) params.prompt_cache_key = cacheKey;
  if (caching.breakpoints || compat.cacheControlFormat === "anthropic") markCompletionsCache(params.messages, params.tools, req.cacheConversation !== false);
  if (compat.vllmPriority !== undefined) params.priority = compat.vllmPriority;
  if (compat.openRouterRouting) params.provider = compat.openRouterRouting;
  const gateway = compat.vercelGatewayRouting;
  if (gateway?.only || gateway?.order) params.providerOptions = { gateway: { ...(gateway.only ? { only: gateway.only } : {}), ...(gateway.order ? { order: gateway.order } : {}) } };
  // Last, so a model's sampling fields win over the named ones, as the reference merges them.
  Object.assign(params, samplingParams(model, level));
  return params;
}

/** The caching headers (completions-cache.ts), or those models.json `sendSessionAffinityHeaders` asks for. */
function sessionHeaders(req: LlmRequest, caching: CompletionsCaching, compat: CompletionsCompat): Record<string, string> | undefined {
  if (compat.sendSessionAffinityHeaders === false) return undefined;
  if (compat.sendSessionAffinityHeaders && req.sessionId) return { ...caching.headers, ...affinityHeaders(compat.sessionAffinityFormat, req.sessionId, "completions") };
  return caching.headers;
}

/** What a server that refuses a user message right after tool results gets in between. */
const TOOL_RESULTS_SEEN = "(tool results received)";

function toMessages(req: LlmRequest, compat: CompletionsCompat): ChatCompletionMessageParam[] {
  const { model } = req;
  const images = model.input.includes("image");
  const out: ChatCompletionMessageParam[] = [];
  if (req.systemPrompt) out.push({ role: compat.developerRole ? "developer" : "system", content: req.systemPrompt });
  const pushUser = (m: ChatCompletionMessageParam) => {
    if (compat.requiresAssistantAfterToolResult && out.at(-1)?.role === "tool") out.push({ role: "assistant", content: TOOL_RESULTS_SEEN });
    out.push(m);
  };
  // Tool messages must directly follow their assistant message: tool-result images go in one user message after them.
  let pendingImages: ChatCompletionContentPartImage[] = [];
  const flushImages = () => {
    if (pendingImages.length === 0) return;
    pushUser({ role: "user", content: [{ type: "text", text: "Images returned by the tool calls above:" }, ...pendingImages] });
    pendingImages = [];
  };
  for (const m of sanitizeHistory(req.messages)) {
    if (m.role !== "toolResult") flushImages();
    if (m.role === "user") {
      pushUser({ role: "user", content: userContent(m.content, images) });
    } else if (m.role === "assistant") {
      const assistant = assistantParam(m, model, compat);
      if (assistant) out.push(assistant);
    } else {
      const texts = m.content.filter((c): c is TextContent => c.type === "text").map((c) => c.text);
      const imgs = m.content.filter((c): c is ImageContent => c.type === "image");
      if (imgs.length > 0 && images) {
        pendingImages.push(...imgs.map(imagePart));
        texts.push("(image attached in the next message)");
      } else if (imgs.length > 0) texts.push(IMAGE_OMITTED);
      out.push({ role: "tool", tool_call_id: callIdOf(m.toolCallId), content: texts.join("\n") || "(empty)", ...(compat.requiresToolResultName ? { name: m.toolName } : {}) });
    }
  }
  flushImages();
  return out;
}

const imagePart = (c: ImageContent): ChatCompletionContentPartImage => ({
  type: "image_url",
  image_url: { url: dataUrl(c.data, c.mimeType) },
});

/** Plain text goes as a string: not every compatible server accepts content parts. */
function userContent(content: string | (TextContent | ImageContent)[], images: boolean): string | (ChatCompletionContentPartText | ChatCompletionContentPartImage)[] {
  if (typeof content === "string") return content || "(empty)";
  if (!images || !content.some((c) => c.type === "image")) {
    return content.map((c) => (c.type === "text" ? c.text : IMAGE_OMITTED)).join("\n") || "(empty)";
  }
  return content.map((c) => (c.type === "text" ? { type: "text", text: c.text } : imagePart(c)));
}

/**
 * Thinking is not replayed (Chat Completions has no field for it that servers agree on) unless
 * models.json asks: `requiresThinkingAsText` sends it as a text part before the answer,
 * `requiresReasoningContentOnAssistantMessages` as `reasoning_content` ("" when there was none).
 */
function assistantParam(m: AssistantMessage, model: Model, compat: CompletionsCompat): ChatCompletionAssistantMessageParam | undefined {
  const text = m.content.map((c) => (c.type === "text" ? c.text : "")).join("");
  const thinking = m.content.flatMap((c) => (c.type === "thinking" && !c.redacted && c.thinking.trim() ? [c.thinking] : [])).join("\n\n");
  const calls = m.content.filter((c): c is ToolCall => c.type === "toolCall");
  const asText = compat.requiresThinkingAsText && thinking !== "";
  if (!text && !asText && calls.length === 0) return undefined;
  const empty = compat.requiresNonNullAssistantContent || compat.requiresAssistantAfterToolResult ? "" : null;
  const param: ChatCompletionAssistantMessageParam & { reasoning_content?: string } = {
    role: "assistant",
    content: asText ? [{ type: "text", text: thinking }, ...(text ? [{ type: "text" as const, text }] : [])] : text || empty,
  };
  if (compat.requiresReasoningContentOnAssistantMessages && model.reasoning) param.reasoning_content = asText ? "" : thinking;
  if (calls.length > 0) {
    param.tool_calls = calls.map((c) => ({
      id: callIdOf(c.id),
      type: "function",
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }
  return param;
}
