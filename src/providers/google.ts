import type { GenerateContentResponse, Part } from "@google/genai";
import { requestHeaders } from "./compat.ts";
import { textBlockEnd, type PushStream } from "./event-stream.ts";
import { googleRequest } from "./google-request.ts";
import { runProviderStream } from "./lifecycle.ts";
import type { AssistantMessage, AssistantStream, LlmRequest, StopReason, StreamFn, ToolCall } from "./types.ts";

type GenAiModule = typeof import("@google/genai");
type GenAiOptions = ConstructorParameters<GenAiModule["GoogleGenAI"]>[0];

/**
 * Gemini through Google's own SDK (`@google/genai`, loaded on the first request): the Gemini
 * API with an API key (`x-goog-api-key`). docs/cloud-providers.md keeps the wire facts.
 */
export const streamGoogle: StreamFn = (req, signal) =>
  streamGenAi(req, signal, (headers) => ({
    apiKey: req.apiKey ?? "",
    // The configured base URL already names the version ("…/v1beta").
    httpOptions: { baseUrl: req.model.baseUrl, apiVersion: "", headers },
  }));

/** One request through a GoogleGenAI client made with `options` (the Gemini API's or Vertex AI's). */
export function streamGenAi(req: LlmRequest, signal: AbortSignal, options: (headers: Record<string, string>) => GenAiOptions): AssistantStream {
  return runProviderStream(req, signal, async ({ msg, out, signal, touch }) => {
    const { GoogleGenAI } = await import("@google/genai");
    touch();
    try {
      const client = new GoogleGenAI(options({ ...requestHeaders(req), ...req.authHeaders }));
      const stream = await client.models.generateContentStream(googleRequest(req, signal));
      await consumeGoogle(stream, msg, out, touch);
    } catch (err) {
      throw readableError(err);
    }
  });
}

/**
 * The SDK's ApiError carries the HTTP status and the body as JSON text: read it as
 * "<status> <message>", the shape retry and overflow detection read.
 */
export function readableError(err: unknown): unknown {
  const status = (err as { status?: unknown } | null)?.status;
  if (!(err instanceof Error) || typeof status !== "number") return err;
  let text = err.message;
  try {
    // A mid-stream error reads "got status: …. {json}"; an HTTP one is the JSON alone.
    const body = JSON.parse(err.message.slice(err.message.indexOf("{"))) as { error?: { message?: unknown; status?: unknown } };
    if (typeof body.error?.message === "string") text = typeof body.error.status === "string" ? `${body.error.status}: ${body.error.message}` : body.error.message;
  } catch {
    // not JSON: keep the text
  }
  return new Error(`${status} ${text}`);
}

/** Gemini's streamed responses -> content blocks; throws when the stream ends without a finish reason. */
export async function consumeGoogle(stream: AsyncIterable<GenerateContentResponse>, msg: AssistantMessage, out: PushStream, touch: () => void): Promise<void> {
  const state = new PartState(msg, out);
  for await (const chunk of stream) {
    touch();
    state.apply(chunk);
    await out.backpressure();
  }
  state.finish();
}

class PartState {
  private open: number | undefined;
  private reason: string | undefined;
  private calls = 0;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  apply(chunk: GenerateContentResponse): void {
    if (chunk.responseId) this.msg.responseId ??= chunk.responseId;
    const u = chunk.usageMetadata;
    if (u) {
      // promptTokenCount includes the cached part; thoughts are billed as output.
      const cached = u.cachedContentTokenCount ?? 0;
      this.msg.usage.input = Math.max(0, (u.promptTokenCount ?? 0) - cached);
      this.msg.usage.cacheRead = cached;
      this.msg.usage.output = (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0);
      this.msg.usage.totalTokens = u.totalTokenCount ?? this.msg.usage.input + cached + this.msg.usage.output;
    }
    const candidate = chunk.candidates?.[0];
    for (const part of candidate?.content?.parts ?? []) this.applyPart(part);
    if (candidate?.finishReason) {
      this.reason = candidate.finishReason;
      this.msg.rawStopReason = candidate.finishReason;
    }
    const blocked = chunk.promptFeedback?.blockReason;
    if (blocked) {
      this.reason = blocked;
      this.msg.rawStopReason = blocked;
    }
  }

  finish(): void {
    this.close();
    if (!this.reason) throw new Error("stream ended without finishReason");
    const stop = mapFinish(this.reason);
    this.msg.stopReason = stop === "stop" && this.calls > 0 ? "toolUse" : stop;
    if (stop === "error") this.msg.errorMessage = `Gemini stopped the response: ${finishText(this.reason)}`;
  }

  private applyPart(part: Part): void {
    if (part.functionCall) {
      this.close();
      const call: ToolCall = {
        type: "toolCall",
        // Gemini 2.5 sends no id: one is made up, unique within the reply.
        id: part.functionCall.id || `call_${this.msg.timestamp.toString(36)}_${this.calls}`,
        name: part.functionCall.name ?? "",
        arguments: part.functionCall.args ?? {},
      };
      if (part.thoughtSignature) call.thoughtSignature = part.thoughtSignature;
      this.calls++;
      const i = this.msg.content.push(call) - 1;
      this.out.push({ type: "toolcall_start", contentIndex: i, id: call.id, toolName: call.name });
      this.out.push({ type: "toolcall_delta", contentIndex: i, delta: JSON.stringify(call.arguments) });
      this.out.push({ type: "toolcall_end", contentIndex: i, toolCall: call });
      return;
    }
    if (!part.text && !part.thoughtSignature) return;
    const kind = part.thought ? "thinking" : "text";
    let block = this.open === undefined ? undefined : this.msg.content[this.open];
    if (block?.type !== kind) {
      this.close();
      block = kind === "thinking" ? { type: "thinking", thinking: "" } : { type: "text", text: "" };
      this.open = this.msg.content.push(block) - 1;
      this.out.push({ type: kind === "thinking" ? "thinking_start" : "text_start", contentIndex: this.open });
    }
    const i = this.open!;
    const text = part.text ?? "";
    // A signature comes once, on some delta of the part: keep it, never overwrite it with nothing.
    if (block.type === "thinking") {
      if (part.thoughtSignature) block.thinkingSignature = part.thoughtSignature;
      block.thinking += text;
      if (text) this.out.push({ type: "thinking_delta", contentIndex: i, delta: text });
    } else if (block.type === "text") {
      if (part.thoughtSignature) block.textSignature = part.thoughtSignature;
      block.text += text;
      if (text) this.out.push({ type: "text_delta", contentIndex: i, delta: text });
    }
  }

  private close(): void {
    if (this.open === undefined) return;
    const i = this.open;
    const block = this.msg.content[i]!;
    this.open = undefined;
    const end = textBlockEnd(block, i);
    if (end) this.out.push(end);
  }
}

function mapFinish(reason: string): StopReason {
  if (reason === "STOP") return "stop";
  if (reason === "MAX_TOKENS") return "length";
  return "error";
}

const FINISH_TEXT: Record<string, string> = {
  SAFETY: "the reply was blocked by safety filters",
  RECITATION: "the reply was blocked for reciting copyrighted material",
  BLOCKLIST: "the reply contained blocked terms",
  PROHIBITED_CONTENT: "the reply was blocked as prohibited content",
  SPII: "the reply contained sensitive personal information",
  MALFORMED_FUNCTION_CALL: "the model produced a malformed function call",
  UNEXPECTED_TOOL_CALL: "the model called a tool that was not offered",
  TOO_MANY_TOOL_CALLS: "the model made too many tool calls",
  OTHER: "an unspecified reason",
};

const finishText = (reason: string): string => `${FINISH_TEXT[reason] ?? "unexpected finish reason"} (${reason})`;
