/**
 * pi-ai's per-API stream functions for extensions, on pion's providers: each `*Api()` object and
 * `stream*` alias calls pion's own adapter for that API through model-calls.ts (keys from the
 * call's options, else the session's), and `lazyStream` / `lazyApi` wrap a stream that is made
 * later. The other way round, `fromReferenceStream` turns an extension's stream function (the
 * reference's events) into a pion StreamFn, so `streamByApi` can send requests to it.
 */
import { streamModel, type CallContext, type CallOptions } from "../model-calls.ts";
import { streamBuiltIn } from "../../providers/index.ts";
import { emptyAssistant, laterStream, PushStream } from "../../providers/event-stream.ts";
import type { PiMessagesCall } from "../../providers/pi-messages.ts";
import type { Api, AssistantMessage, LlmRequest, Message, Model, StreamFn, ToolCall } from "../../providers/types.ts";
import { transcriptOf, type SystemMessage, type Transcript } from "../../providers/transcript.ts";
import { errorMessage } from "../../util/errors.ts";
import { getIdentityHeaders, type ClientIdentity } from "./ai-providers-identity.ts";

/** One of the reference's stream events: the deltas pion streams, plus `start`, `done` and `error`. */
export type ReferenceEvent = Record<string, unknown> & { type: string };
export type ReferenceStream = AsyncIterable<ReferenceEvent> & { result?: () => Promise<AssistantMessage> };
export type ReferenceStreamFn = (model: Model, context: CallContext, options?: CallOptions) => ReferenceStream;
export interface ReferenceStreams {
  stream: ReferenceStreamFn;
  streamSimple: ReferenceStreamFn;
}

/**
 * A stream of the reference's events that times its response as the reference's streams do: the
 * final message (of `done`, `error` or `end`) gets `durationMs` from the stream's creation, unless
 * it has one or began before the stream (a scripted or forwarded message).
 */
export class TimedStream<R extends { durationMs?: number; timestamp: number } = AssistantMessage> extends PushStream<ReferenceEvent, R> {
  private readonly startedAt = Date.now();
  private readonly startedMs = performance.now();
  private ended = false;

  override push(e: ReferenceEvent): void {
    if (e.type === "done") this.time(e.message as R);
    else if (e.type === "error") this.time(e.error as R);
    super.push(e);
  }

  override end(message: R): void {
    if (message !== undefined) this.time(message);
    this.ended = true;
    super.end(message);
  }

  private time(m: R): void {
    if (this.ended || m.durationMs !== undefined || m.timestamp < this.startedAt) return;
    m.durationMs = Math.max(0, Math.round(performance.now() - this.startedMs));
  }
}

/** An assistant message that ended before it began: setup failed (or was aborted). */
function setupFailure(model: Model, err: unknown, startedAt: number, reason: "error" | "aborted"): AssistantMessage {
  const msg = emptyAssistant(model);
  msg.stopReason = reason;
  msg.errorMessage = errorMessage(err);
  msg.timestamp = startedAt;
  return msg;
}

/**
 * A stream returned at once while `setup` (loading a module, resolving auth) makes the real one:
 * its events are forwarded; a setup failure ends it with one `error` event. `observer` sees each
 * event and the final message once.
 */
export function lazyStream(
  model: Model,
  setup: () => Promise<ReferenceStream>,
  observer?: { onEvent?: (e: ReferenceEvent) => void; onResult?: (m: AssistantMessage) => void },
  signal?: AbortSignal,
): TimedStream {
  const startedAt = Date.now();
  const out = new TimedStream();
  let observed = false;
  const finish = (m: AssistantMessage) => {
    out.end(m);
    if (observed) return;
    observed = true;
    observer?.onResult?.(m);
  };
  void (async () => {
    let inner: ReferenceStream;
    try {
      inner = await setup();
    } catch (err) {
      const reason = signal?.aborted ? "aborted" : "error";
      const message = setupFailure(model, err, startedAt, reason);
      const event = { type: "error", reason, error: message };
      out.push(event);
      observer?.onEvent?.(event);
      finish(message);
      return;
    }
    let last: AssistantMessage | undefined;
    for await (const e of inner) {
      out.push(e);
      observer?.onEvent?.(e);
      if (e.type === "done") last = e.message as AssistantMessage;
      else if (e.type === "error") last = e.error as AssistantMessage;
    }
    if (typeof inner.result === "function") last = await inner.result();
    finish(last!);
  })();
  return out;
}

/** An API whose implementation (`{stream, streamSimple}`, optionally deferred fetch/cancel) loads on its first request. */
export function lazyApi(
  load: () => Promise<Partial<ReferenceStreams> & Record<string, unknown>>,
  capabilities?: { fetchDeferred?: boolean; cancelDeferred?: boolean },
): Record<string, unknown> {
  const api: Record<string, unknown> = {
    stream: (model: Model, context: CallContext, options?: CallOptions) => lazyStream(model, async () => (await load()).stream!(model, context, options), undefined, options?.signal),
    streamSimple: (model: Model, context: CallContext, options?: CallOptions) => lazyStream(model, async () => (await load()).streamSimple!(model, context, options), undefined, options?.signal),
  };
  if (capabilities?.fetchDeferred) {
    api.fetchDeferred = (model: Model, handle: unknown, options?: CallOptions) =>
      lazyStream(model, async () => {
        const impl = await load();
        if (typeof impl.fetchDeferred !== "function") throw new Error("API does not support deferred responses");
        return (impl.fetchDeferred as (m: Model, h: unknown, o?: CallOptions) => ReferenceStream)(model, handle, options);
      }, undefined, options?.signal);
  }
  if (capabilities?.cancelDeferred) {
    api.cancelDeferred = async (model: Model, handle: unknown, options?: CallOptions) => {
      const impl = await load();
      if (typeof impl.cancelDeferred !== "function") throw new Error("API cannot cancel deferred responses");
      await (impl.cancelDeferred as (m: Model, h: unknown, o?: CallOptions) => Promise<void>)(model, handle, options);
    };
  }
  return api;
}

/** pion's adapter for `api`, whatever the model says (the reference's `streamAnthropic` is Anthropic's code for any model). */
const onApi = (api: Api): StreamFn => (req, signal) => streamBuiltIn({ ...req, model: { ...req.model, api } }, signal);

/**
 * What pion's adapters take, from a transcript or a plain context: a leading system message
 * becomes the system prompt (its sections after it) and tools. pion has no place for a system
 * message later in the conversation: those are left out.
 */
function plainContext(context: CallContext | Transcript): CallContext {
  const messages = (context.messages ?? []) as (Message | SystemMessage)[];
  const first = messages[0];
  if (first?.role !== "system") return { ...context, messages: messages as Message[] };
  const text = typeof first.content === "string" ? first.content : first.content.map((b) => b.text ?? "").join("");
  const parts = [text, ...Object.values(first.sections ?? {}).filter((v): v is string => v !== null)].filter((p) => p.length > 0);
  return {
    systemPrompt: parts.join("\n\n"),
    messages: messages.filter((m): m is Message => m.role !== "system"),
    ...(first.toolsAdded ? { tools: first.toolsAdded } : {}),
  };
}

function builtInStreams(api: Api): ReferenceStreams {
  const via = onApi(api);
  const call: ReferenceStreamFn = (model, context, options) => streamModel(model, plainContext(context), options, via);
  return { stream: call, streamSimple: call };
}

let bedrockModule: ReferenceStreams | undefined;

/** Use `module` for Bedrock requests instead of pion's own adapter (the reference's hook for bundled builds). */
export function setBedrockProviderModule(module: ReferenceStreams): void {
  bedrockModule = module;
}

function bedrockStreams(): ReferenceStreams {
  const own = builtInStreams("bedrock-converse-stream");
  return {
    stream: (model, context, options) => (bedrockModule ?? own).stream(model, context, options),
    streamSimple: (model, context, options) => (bedrockModule ?? own).streamSimple(model, context, options),
  };
}

type PiMessagesOptions = CallOptions & NonNullable<PiMessagesCall["options"]> & Pick<PiMessagesCall, "debug" | "env" | "onPayload" | "onResponse" | "onProviderStreamEvent" | "fetch"> & { identity?: ClientIdentity };

/**
 * pi-ai's `piMessagesApi()`: the context goes to the server as given (a transcript, or a raw
 * Context as the reference's own sends it), with the call's sampling options, `debug`, identity,
 * `fetch` and payload/response/event hooks; the adapter loads with the first call.
 */
function piMessagesStreams(): ReferenceStreams {
  const call: ReferenceStreamFn = (model, context, options = {}) => {
    const o = options as PiMessagesOptions;
    const extra: PiMessagesCall = {
      context,
      options: { temperature: o.temperature, maxTokens: o.maxTokens, cacheRetention: o.cacheRetention, toolChoice: o.toolChoice },
      identityHeaders: getIdentityHeaders(model, o.identity),
      ...(o.debug !== undefined ? { debug: o.debug } : {}),
      ...(o.env ? { env: o.env } : {}),
      ...(o.onPayload ? { onPayload: o.onPayload } : {}),
      ...(o.onResponse ? { onResponse: o.onResponse } : {}),
      ...(o.onProviderStreamEvent ? { onProviderStreamEvent: o.onProviderStreamEvent } : {}),
      ...(o.fetch ? { fetch: o.fetch } : {}),
    };
    const via: StreamFn = (req, signal) =>
      laterStream(req, import("../../providers/pi-messages.ts").then((m) => m.runPiMessages(req, signal, extra)), (err) => `The pi-messages adapter did not load: ${errorMessage(err)}`);
    // The adapter runs the hooks itself, on its own request.
    const { onPayload: _p, onResponse: _r, ...rest } = o;
    return streamModel(model, plainContext(context), rest, via);
  };
  return { stream: call, streamSimple: call };
}

/** The reference's factory names for the APIs pion implements. */
export const BUILT_IN_APIS = {
  "anthropic-messages": () => builtInStreams("anthropic-messages"),
  "openai-completions": () => builtInStreams("openai-completions"),
  "openai-responses": () => builtInStreams("openai-responses"),
  "azure-openai-responses": () => builtInStreams("azure-openai-responses"),
  "google-generative-ai": () => builtInStreams("google-generative-ai"),
  "google-vertex": () => builtInStreams("google-vertex"),
  "mistral-conversations": () => builtInStreams("mistral-conversations"),
  "openai-codex-responses": () => builtInStreams("openai-codex-responses"),
  "bedrock-converse-stream": bedrockStreams,
  "pi-messages": piMessagesStreams,
} as const;

/** `anthropicMessagesApi`, `streamAnthropic`, `streamSimpleAnthropic`, … for pion's APIs. */
export function apiStreamExports(): Record<string, unknown> {
  const out: Record<string, unknown> = { setBedrockProviderModule, bedrockConverseStreamApi: BUILT_IN_APIS["bedrock-converse-stream"], piMessagesApi: BUILT_IN_APIS["pi-messages"] };
  const aliases: [string, keyof typeof BUILT_IN_APIS, string][] = [
    ["anthropicMessagesApi", "anthropic-messages", "Anthropic"],
    ["openAICompletionsApi", "openai-completions", "OpenAICompletions"],
    ["openAIResponsesApi", "openai-responses", "OpenAIResponses"],
    ["azureOpenAIResponsesApi", "azure-openai-responses", "AzureOpenAIResponses"],
    ["googleGenerativeAIApi", "google-generative-ai", "Google"],
    ["googleVertexApi", "google-vertex", "GoogleVertex"],
    ["mistralConversationsApi", "mistral-conversations", "Mistral"],
    ["openAICodexResponsesApi", "openai-codex-responses", "OpenAICodexResponses"],
  ];
  for (const [factory, api, suffix] of aliases) {
    out[factory] = BUILT_IN_APIS[api];
    const streams = BUILT_IN_APIS[api]();
    out[`stream${suffix}`] = streams.stream;
    out[`streamSimple${suffix}`] = streams.streamSimple;
  }
  return out;
}

/** What an extension's stream function is called with for a pion request. */
function referenceCall(req: LlmRequest, signal: AbortSignal): [Model, CallContext, CallOptions] {
  const options: CallOptions = { signal };
  if (req.apiKey) options.apiKey = req.apiKey;
  if (req.authHeaders) options.headers = req.authHeaders;
  if (req.thinkingLevel !== "off") options.reasoning = req.thinkingLevel;
  if (req.sessionId) options.sessionId = req.sessionId;
  return [req.model, transcriptOf(req) as CallContext, options];
}

/**
 * A pion StreamFn over an extension's stream function (the reference's events, with `partial`):
 * the deltas go through as pion's, the final message is the stream's result. A throw or a
 * broken stream ends the message with stopReason "error", as every pion stream does.
 */
export function fromReferenceStream(fn: ReferenceStreamFn): StreamFn {
  return (req, signal) => {
    const out = new PushStream();
    void (async () => {
      let final: AssistantMessage | undefined;
      try {
        const s = fn(...referenceCall(req, signal));
        for await (const e of s) {
          const i = e.contentIndex as number;
          switch (e.type) {
            case "text_start":
            case "thinking_start":
              out.push({ type: e.type, contentIndex: i });
              break;
            case "text_delta":
            case "thinking_delta":
            case "toolcall_delta":
              out.push({ type: e.type, contentIndex: i, delta: String(e.delta ?? "") });
              break;
            case "text_end":
            case "thinking_end":
              out.push({ type: e.type, contentIndex: i, content: String(e.content ?? "") });
              break;
            case "toolcall_start": {
              const block = ((e.partial as AssistantMessage | undefined)?.content[i] ?? {}) as Partial<ToolCall>;
              out.push({ type: "toolcall_start", contentIndex: i, id: String(e.id ?? block.id ?? ""), toolName: String(e.toolName ?? block.name ?? "") });
              break;
            }
            case "toolcall_end":
              out.push({ type: "toolcall_end", contentIndex: i, toolCall: e.toolCall as ToolCall });
              break;
            case "done":
              final = e.message as AssistantMessage;
              break;
            case "error":
              final = e.error as AssistantMessage;
              break;
          }
        }
        if (typeof s.result === "function") final = await s.result();
      } catch (err) {
        final = { ...emptyAssistant(req.model), stopReason: signal.aborted ? "aborted" : "error", errorMessage: errorMessage(err) };
      }
      out.end(final ?? { ...emptyAssistant(req.model), stopReason: "error", errorMessage: `The ${req.model.api} stream ended without a message` });
    })();
    return out;
  };
}
