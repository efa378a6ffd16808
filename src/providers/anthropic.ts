import type Anthropic from "@anthropic-ai/sdk";
import type {
  ContentBlockParam,
  MessageCreateParamsStreaming,
  MessageParam,
  RawMessageStreamEvent,
  ToolResultBlockParam,
} from "@anthropic-ai/sdk/resources/messages/messages";
import { isAnthropicOAuthToken, oauthHeaders, withClaudeCodeIdentity } from "./anthropic-oauth.ts";
import { EPHEMERAL, markConversation } from "./cache-points.ts";
import { requestHeaders } from "./compat.ts";
import { textBlockEnd, type PushStream } from "./event-stream.ts";
import { runProviderStream } from "./lifecycle.ts";
import { anthropicReasoning } from "./reasoning-params.ts";
import { sdkLogger, withSdkWarnings } from "./sdk-warnings.ts";
import { sseBatches } from "./sse.ts";
import { sanitizeHistory, setToolArguments } from "./transform.ts";
import type { AssistantMessage, AssistantStream, ImageContent, LlmRequest, Message, Model, StopReason, StreamFn, TextContent, ThinkingContent } from "./types.ts";

export const streamAnthropic: StreamFn = (req, signal) => {
  // A subscription's OAuth token goes out as a Bearer token; so does a key in authHeaders.
  const oauth = isAnthropicOAuthToken(req.apiKey);
  const apiKey = oauth ? undefined : req.apiKey;
  return runAnthropic(req, signal, oauth, async () => {
    // Loaded on first use: the SDK costs start-up time that sessions on other APIs never need.
    const { default: Anthropic } = await import("@anthropic-ai/sdk");
    return new Anthropic({
      apiKey: apiKey ?? "",
      baseURL: req.model.baseUrl.replace(/\/v1\/?$/, ""),
      maxRetries: 0,
      logger: sdkLogger,
      ...(req.fetch ? { fetch: req.fetch } : {}),
      // x-api-key as well: Anthropic-compatible proxies often read only that header.
      defaultHeaders: {
        ...(apiKey ? { "x-api-key": apiKey } : {}),
        ...(oauth ? oauthHeaders(req.apiKey!) : {}),
        ...affinity(req),
        ...requestHeaders(req),
        ...req.authHeaders,
      },
    });
  });
};

/** What the stream needs of a client: the Messages API's create (Anthropic's own client, or a cloud's). */
export interface MessagesClient {
  messages: Pick<Anthropic["messages"], "create">;
}

/**
 * One Messages API request through `makeClient`'s client, its SSE body read by pion. `identity`:
 * an OAuth login's request, which carries Claude Code's identity.
 */
export function runAnthropic(req: LlmRequest, signal: AbortSignal, identity: boolean, makeClient: () => Promise<MessagesClient>): AssistantStream {
  return runProviderStream(req, signal, async ({ msg, out, signal: sig, touch }) => {
    const client = await makeClient();
    touch();
    // The SDK sends the request and turns HTTP errors into its APIError; the event stream is
    // read in batches by pion's SSE reader, which waits for the loop (backpressure) instead of
    // queueing a long reply's events ahead of it.
    // The SDK's own deprecation warning for a model pion already reported as deprecated is dropped.
    const ownNotice = req.model.status === "deprecated" ? `The model '${req.model.id}' is deprecated` : undefined;
    const call = withSdkWarnings(
      () => client.messages.create(identity ? withClaudeCodeIdentity(toParams(req)) : toParams(req), { signal: sig }),
      (m) => ownNotice !== undefined && m.startsWith(ownNotice),
    );
    const res = await call.asResponse();
    touch();
    if (!res.body) throw new Error("empty response body");
    const state = new BlockState(msg, out);
    for await (const batch of sseBatches(res.body, touch)) {
      for (const sse of batch) {
        if (sse.event === "ping" || !sse.data) continue;
        // In-stream errors read like the SDK's own: the provider's error body as JSON.
        if (sse.event === "error") throw new Error(sse.data);
        state.apply(JSON.parse(sse.data) as RawMessageStreamEvent);
      }
      await out.backpressure();
      touch(); // waiting for our own consumer is not the provider stalling
    }
    if (!state.sawStop) throw new Error("stream ended before message_stop");
  });
}

class BlockState {
  private partialJson = new Map<number, string>();
  /** Anthropic block index -> index in msg.content */
  private index = new Map<number, number>();
  sawStop = false;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  apply(ev: RawMessageStreamEvent): void {
    const msg = this.msg;
    switch (ev.type) {
      case "message_start": {
        msg.responseId = ev.message.id;
        const u = ev.message.usage;
        msg.usage.input = u.input_tokens ?? 0;
        msg.usage.output = u.output_tokens ?? 0;
        msg.usage.cacheRead = u.cache_read_input_tokens ?? 0;
        msg.usage.cacheWrite = u.cache_creation_input_tokens ?? 0;
        msg.usage.cacheWrite1h = u.cache_creation?.ephemeral_1h_input_tokens ?? 0;
        break;
      }
      case "content_block_start": {
        const b = ev.content_block;
        const i = msg.content.length;
        this.index.set(ev.index, i);
        if (b.type === "text") {
          msg.content.push({ type: "text", text: "" });
          this.out.push({ type: "text_start", contentIndex: i });
        } else if (b.type === "thinking") {
          msg.content.push({ type: "thinking", thinking: "", thinkingSignature: "" });
          this.out.push({ type: "thinking_start", contentIndex: i });
        } else if (b.type === "redacted_thinking") {
          msg.content.push({ type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: b.data, redacted: true });
          this.out.push({ type: "thinking_start", contentIndex: i });
        } else if (b.type === "tool_use") {
          msg.content.push({ type: "toolCall", id: b.id, name: b.name, arguments: {} });
          this.partialJson.set(i, "");
          this.out.push({ type: "toolcall_start", contentIndex: i, id: b.id, toolName: b.name });
        } else {
          this.index.delete(ev.index);
        }
        break;
      }
      case "content_block_delta": {
        const i = this.index.get(ev.index);
        const block = i === undefined ? undefined : msg.content[i];
        if (i === undefined || !block) break;
        const d = ev.delta;
        if (d.type === "text_delta" && block.type === "text") {
          block.text += d.text;
          this.out.push({ type: "text_delta", contentIndex: i, delta: d.text });
        } else if (d.type === "thinking_delta" && block.type === "thinking") {
          block.thinking += d.thinking;
          this.out.push({ type: "thinking_delta", contentIndex: i, delta: d.thinking });
        } else if (d.type === "signature_delta" && block.type === "thinking") {
          block.thinkingSignature = (block.thinkingSignature ?? "") + d.signature;
        } else if (d.type === "input_json_delta" && block.type === "toolCall") {
          this.partialJson.set(i, (this.partialJson.get(i) ?? "") + d.partial_json);
          this.out.push({ type: "toolcall_delta", contentIndex: i, delta: d.partial_json });
        }
        break;
      }
      case "content_block_stop": {
        const i = this.index.get(ev.index);
        const block = i === undefined ? undefined : msg.content[i];
        if (i === undefined || !block) break;
        const end = textBlockEnd(block, i);
        if (end) this.out.push(end);
        else if (block.type === "toolCall") {
          setToolArguments(block, this.partialJson.get(i) ?? "");
          this.out.push({ type: "toolcall_end", contentIndex: i, toolCall: block });
        }
        break;
      }
      case "message_delta": {
        if (ev.delta.stop_reason) {
          msg.stopReason = mapStop(ev.delta.stop_reason);
          msg.rawStopReason = ev.delta.stop_reason;
        }
        const u = ev.usage;
        if (u.input_tokens != null) msg.usage.input = u.input_tokens;
        if (u.output_tokens != null) msg.usage.output = u.output_tokens;
        if (u.cache_read_input_tokens != null) msg.usage.cacheRead = u.cache_read_input_tokens;
        if (u.cache_creation_input_tokens != null) msg.usage.cacheWrite = u.cache_creation_input_tokens;
        // Typed on message_start only, but proxies (Vercel's AI Gateway) repeat the TTL split here.
        const long = (u as { cache_creation?: { ephemeral_1h_input_tokens?: number | null } | null }).cache_creation?.ephemeral_1h_input_tokens;
        if (long != null) msg.usage.cacheWrite1h = long;
        break;
      }
      case "message_stop":
        this.sawStop = true;
        break;
    }
  }
}

/** models.json `sendSessionAffinityHeaders`: the session id as `x-session-affinity`, or OpenRouter's `x-session-id`. */
function affinity(req: LlmRequest): Record<string, string> {
  const c = req.model.compat;
  if (!c?.sendSessionAffinityHeaders || !req.sessionId) return {};
  return { [c.sessionAffinityFormat === "openrouter" ? "x-session-id" : "x-session-affinity"]: req.sessionId };
}

function mapStop(reason: string): StopReason {
  switch (reason) {
    case "max_tokens":
      return "length";
    case "tool_use":
      return "toolUse";
    case "refusal":
      return "error";
    default:
      return "stop";
  }
}

function toParams(req: LlmRequest): MessageCreateParamsStreaming {
  const { model } = req;
  const params: MessageCreateParamsStreaming = {
    model: model.id,
    messages: toMessages(sanitizeHistory(req.messages), model),
    stream: true,
    ...anthropicReasoning(model, req.thinkingLevel, req.thinkingBudgets),
  };
  const toolMarks = model.compat?.supportsCacheControlOnTools !== false;
  // Breakpoints: the system prompt, the last tool, and where markConversation says (four at most).
  if (req.cacheConversation !== false) markConversation(params.messages, markLastBlock);
  if (req.systemPrompt) params.system = [{ type: "text", text: req.systemPrompt, cache_control: EPHEMERAL }];
  if (req.tools.length > 0) {
    params.tools = req.tools.map((t, i) => ({
      name: t.name,
      description: t.description,
      input_schema: t.parameters as { type: "object" },
      ...(toolMarks && i === req.tools.length - 1 ? { cache_control: EPHEMERAL } : {}),
    }));
  }
  if (req.sessionId) params.metadata = { user_id: req.sessionId };
  return params;
}

/**
 * Always blocks, never a bare string: the message that carries a cache breakpoint needs them, and a
 * message whose shape changed from one request to the next would not match its cached prefix.
 */
function userBlocks(content: string | (TextContent | ImageContent)[], images: boolean): ContentBlockParam[] {
  if (typeof content === "string") return [{ type: "text", text: content || "(empty)" }];
  const blocks: ContentBlockParam[] = [];
  for (const c of content) {
    if (c.type === "text") {
      if (c.text) blocks.push({ type: "text", text: c.text });
    } else if (images) {
      blocks.push({ type: "image", source: { type: "base64", media_type: c.mimeType as "image/png", data: c.data } });
    } else blocks.push({ type: "text", text: "[image omitted: this model does not accept images]" });
  }
  return blocks.length > 0 ? blocks : [{ type: "text", text: "(empty)" }];
}

/** A breakpoint on the last block of `m` that can carry one: thinking blocks and empty text cannot. */
function markLastBlock(m: MessageParam): boolean {
  if (typeof m.content === "string") return false; // never built: every message goes as blocks
  for (let i = m.content.length - 1; i >= 0; i--) {
    const b = m.content[i]!;
    if (b.type === "thinking" || b.type === "redacted_thinking" || (b.type === "text" && !b.text)) continue;
    (b as { cache_control?: typeof EPHEMERAL }).cache_control = EPHEMERAL;
    return true;
  }
  return false;
}

/**
 * A thinking block goes back exactly as it arrived (the API checks its signature), and only to the
 * provider and model that signed it; redacted thinking stays redacted. For any other source,
 * readable thinking goes as text and redacted thinking, unreadable, is dropped.
 */
function thinkingBlock(c: ThinkingContent, m: AssistantMessage, model: Model): ContentBlockParam | undefined {
  const native = m.api === model.api && m.provider === model.provider && m.model === model.id;
  const signature = native ? c.thinkingSignature : undefined;
  if (c.redacted) return signature ? { type: "redacted_thinking", data: signature } : undefined;
  if (signature) return { type: "thinking", thinking: c.thinking, signature };
  return c.thinking ? { type: "text", text: c.thinking } : undefined;
}

function toMessages(history: Message[], model: Model): MessageParam[] {
  const images = model.input.includes("image");
  const out: MessageParam[] = [];
  for (const m of history) {
    if (m.role === "user") {
      out.push({ role: "user", content: userBlocks(m.content, images) });
    } else if (m.role === "assistant") {
      const blocks: ContentBlockParam[] = [];
      for (const c of m.content) {
        if (c.type === "text") {
          if (c.text) blocks.push({ type: "text", text: c.text });
        } else if (c.type === "thinking") {
          const block = thinkingBlock(c, m, model);
          if (block) blocks.push(block);
        } else blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.arguments });
      }
      if (blocks.length > 0) out.push({ role: "assistant", content: blocks });
    } else {
      const result: ToolResultBlockParam = {
        type: "tool_result",
        tool_use_id: m.toolCallId,
        content: userBlocks(m.content, images) as ToolResultBlockParam["content"],
        is_error: m.isError,
      };
      const prev = out[out.length - 1];
      // Consecutive tool results go back in one user message, as the API expects.
      if (prev && prev.role === "user" && Array.isArray(prev.content) && prev.content.every((b) => b.type === "tool_result")) {
        prev.content.push(result);
      } else out.push({ role: "user", content: [result] });
    }
  }
  return out;
}
