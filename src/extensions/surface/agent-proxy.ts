/**
 * pi-agent-core's `streamProxy`: a stream function for apps whose model calls go through a
 * server of their own. It POSTs `{ model, context, options }` to `<proxyUrl>/api/stream` with the
 * app's bearer token and reads back server-sent events of the reference's proxy shape (the
 * assistant events without `partial`, `done` / `error` carrying usage), rebuilding the assistant
 * message as they arrive (a tool call's arguments read as far as they have come). Like every
 * stream function it never rejects: an HTTP error, a dropped connection or an abort ends the
 * stream with an `error` event. The stream is pi-ai's AssistantMessageEventStream, as the
 * reference's: its final message gets `durationMs`.
 */
import { emptyAssistant } from "../../providers/event-stream.ts";
import { sseBatches } from "../../providers/sse.ts";
import type { AssistantMessage, Model, ToolCall } from "../../providers/types.ts";
import { errorMessage } from "../../util/errors.ts";
import type { RefEvent } from "./agent-core.ts";
import { AssistantMessageEventStream } from "./ai-utils-stream.ts";
import { ToolCallArgumentsStream } from "./ai-utils-streaming-json.ts";

type Rec = Record<string, unknown>;

/** The options a proxy request carries (the rest stay local: the signal, the token, the URL). */
const FORWARDED = ["temperature", "samplingParams", "maxTokens", "reasoning", "cacheRetention", "sessionId", "disableContinuation", "headers", "metadata", "transport", "thinkingBudgets", "maxRetryDelayMs"];

/** Apply one proxy event to `partial`; the reference event to pass on, if any. */
function apply(e: Rec & { type: string }, partial: AssistantMessage & Rec, args: Map<number, ToolCallArgumentsStream>): RefEvent | undefined {
  const i = e.contentIndex as number;
  const block = partial.content[i] as unknown as (Rec & { type: string }) | undefined;
  const wrong = (kind: string) => new Error(`Received ${e.type} for non-${kind} content`);
  switch (e.type) {
    case "start":
      return { type: "start", partial };
    case "text_start":
      partial.content[i] = { type: "text", text: "" };
      return { type: e.type, contentIndex: i, partial };
    case "thinking_start":
      partial.content[i] = { type: "thinking", thinking: "" };
      return { type: e.type, contentIndex: i, partial };
    case "toolcall_start":
      partial.content[i] = { type: "toolCall", id: String(e.id), name: String(e.toolName), arguments: {} };
      args.set(i, new ToolCallArgumentsStream());
      return { type: e.type, contentIndex: i, partial };
    case "text_delta":
      if (block?.type !== "text") throw wrong("text");
      block.text += String(e.delta);
      return { type: e.type, contentIndex: i, delta: e.delta, partial };
    case "thinking_delta":
      if (block?.type !== "thinking") throw wrong("thinking");
      block.thinking += String(e.delta);
      return { type: e.type, contentIndex: i, delta: e.delta, partial };
    case "toolcall_delta": {
      const stream = args.get(i);
      if (block?.type !== "toolCall" || !stream) throw wrong("toolCall");
      // A new block, with the arguments read so far.
      partial.content[i] = { ...(block as unknown as ToolCall), arguments: stream.append(String(e.delta)) };
      return { type: e.type, contentIndex: i, delta: e.delta, partial };
    }
    case "text_end":
      if (block?.type !== "text") throw wrong("text");
      block.textSignature = e.contentSignature;
      return { type: e.type, contentIndex: i, content: block.text, partial };
    case "thinking_end":
      if (block?.type !== "thinking") throw wrong("thinking");
      block.thinkingSignature = e.contentSignature;
      return { type: e.type, contentIndex: i, content: block.thinking, partial };
    case "toolcall_end":
      if (block?.type !== "toolCall") return undefined;
      Object.assign(block, e.toolCall as ToolCall);
      args.delete(i);
      return { type: e.type, contentIndex: i, toolCall: block, partial };
    case "done":
    case "error":
      partial.stopReason = e.reason as AssistantMessage["stopReason"];
      if (e.type === "error") partial.errorMessage = e.errorMessage as string | undefined;
      partial.usage = e.usage as AssistantMessage["usage"];
      if (e.providerThinkingLevel !== undefined) partial.providerThinkingLevel = e.providerThinkingLevel;
      return e.type === "done" ? { type: "done", reason: e.reason, message: partial } : { type: "error", reason: e.reason, error: partial };
    default:
      return undefined;
  }
}

export function streamProxy(model: Model, context: unknown, options: Rec & { proxyUrl: string; authToken: string; signal?: AbortSignal }): AssistantMessageEventStream {
  const stream = new AssistantMessageEventStream();
  const partial = { ...emptyAssistant(model), stopReason: "pending" } as unknown as AssistantMessage & Rec;
  const signal = options.signal;
  const fail = (message: string) => {
    partial.stopReason = signal?.aborted ? "aborted" : "error";
    partial.errorMessage = message;
    stream.push({ type: "error", reason: partial.stopReason, error: partial });
  };
  void (async () => {
    const forwarded = Object.fromEntries(FORWARDED.map((k) => [k, options[k]]));
    const res = await fetch(`${options.proxyUrl}/api/stream`, {
      method: "POST",
      headers: { Authorization: `Bearer ${options.authToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ model, context, options: forwarded }),
      ...(signal ? { signal } : {}),
    });
    if (!res.ok) {
      const body = (await res.json().catch(() => undefined)) as { error?: unknown } | undefined;
      throw new Error(`The proxy refused the request: ${body?.error ? String(body.error) : `${res.status} ${res.statusText}`}`);
    }
    const args = new Map<number, ToolCallArgumentsStream>();
    let ended = false;
    for await (const batch of sseBatches(res.body!)) {
      if (signal?.aborted) throw new Error("The request was aborted");
      for (const ev of batch) {
        if (!ev.data.trim()) continue;
        const out = apply(JSON.parse(ev.data) as Rec & { type: string }, partial, args);
        if (!out) continue;
        if (out.type === "done" || out.type === "error") ended = true;
        stream.push(out);
      }
    }
    if (signal?.aborted) throw new Error("The request was aborted");
    if (!ended) fail("The proxy closed the connection before the reply was complete");
  })().catch((err: unknown) => fail(errorMessage(err)));
  return stream;
}
