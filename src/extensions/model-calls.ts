/**
 * Model calls from extensions through pion's own providers: pi-ai's `streamSimple` / `stream` /
 * `completeSimple` / `complete`, and `ctx.modelRegistry.stream` / `complete`. A model is one of
 * pion's (from `ctx.modelRegistry` or `ctx.model`'s lookup); the key comes from `options.apiKey`,
 * else from the session's registry (auth.json, models.json, the environment), as a request of the
 * session's own would get it. The stream yields the reference's events (`start`, the deltas, each
 * with the message so far as `partial`, then `done` or `error`) and `result()` resolves with the
 * final assistant message; like every pion stream it never rejects: a failure ends with
 * stopReason "error".
 */
import { describeProviderError } from "../providers/errors.ts";
import { emptyAssistant } from "../providers/event-stream.ts";
import { streamByApi } from "../providers/index.ts";
import type { AssistantMessage, LlmRequest, Message, Model, StreamFn, ThinkingLevel, ToolSpec } from "../providers/types.ts";
import { normalizeContext } from "../providers/transcript.ts";
import { hookedFetch } from "./provider-fetch.ts";
import { requestParts } from "./surface/agent-transcript.ts";
import { AssistantMessageEventStream, PartialAssistant } from "./surface/ai-utils-stream.ts";

type Auth = (provider: string) => Promise<{ apiKey?: string; headers?: Record<string, string> } | undefined>;

let sessionAuth: Auth = async () => undefined;

/** Where keys come from when a call names none (the loader sets the session's registry). */
export function setModelAuth(auth: Auth): void {
  sessionAuth = auth;
}

/** The session's auth for a provider (pi-agent-core's Agent asks too). */
export const sessionAuthFor = (provider: string) => sessionAuth(provider);

/** The key and headers of a call: `options.apiKey`, else the session's for the model's provider; `options.headers` on top. */
export async function callAuth(model: Model, options: { apiKey?: string; headers?: Record<string, string> }): Promise<Pick<LlmRequest, "apiKey" | "authHeaders">> {
  const auth = options.apiKey ? { apiKey: options.apiKey } : ((await sessionAuth(model.provider)) ?? {});
  return {
    ...(auth.apiKey ? { apiKey: auth.apiKey } : {}),
    ...(auth.headers || options.headers ? { authHeaders: { ...auth.headers, ...options.headers } } : {}),
  };
}

export interface CallContext {
  systemPrompt?: string;
  messages?: Message[];
  tools?: { name: string; description?: string; parameters?: unknown }[];
}

/** Tool declarations as pion's providers take them (no description is an empty one, no schema an empty object's). */
export const toolSpecs = (tools: NonNullable<CallContext["tools"]>): ToolSpec[] =>
  tools.map((t) => ({ name: t.name, description: t.description ?? "", parameters: (t.parameters ?? { type: "object", properties: {} }) as Record<string, unknown> }));

export interface CallOptions {
  apiKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  reasoning?: ThinkingLevel;
  thinkingLevel?: ThinkingLevel;
  sessionId?: string;
  /** pi-ai's hook on the provider payload: a returned value replaces it (an in-process session's `before_provider_request`). */
  onPayload?: (payload: unknown, model: Model) => unknown;
  /** pi-ai's hook on the HTTP response, before its body is read (an in-process session's `after_provider_response`). */
  onResponse?: (response: { status: number; headers: Record<string, string> }, model: Model) => unknown;
}

/** The request's `fetch` with the call's `onPayload` / `onResponse` around it; none when neither is given. */
function callFetch(model: Model, o: CallOptions): Pick<LlmRequest, "fetch"> {
  const { onPayload, onResponse } = o;
  if (!onPayload && !onResponse) return {};
  return {
    fetch: hookedFetch({
      ...(onPayload ? { payload: async (payload: unknown) => onPayload(payload, model) } : {}),
      ...(onResponse ? { response: async (response: { status: number; headers: Record<string, string> }) => void (await onResponse(response, model)) } : {}),
    }),
  };
}

/**
 * One model call as the reference's event stream (`instanceof AssistantMessageEventStream` holds),
 * fed from pion's provider stream; `via` is the provider route (default: the model's API, as the
 * session's requests go). A failure before the request starts (the key lookup) ends it with an error message.
 */
export function streamModel(model: Model, context: CallContext, options: CallOptions = {}, via: StreamFn = streamByApi): AssistantMessageEventStream {
  const out = new AssistantMessageEventStream();
  void (async () => {
    // pi-ai's context may carry the prompt and tools as system messages too (a transcript): replayed into one of each.
    const parts = requestParts(normalizeContext({ systemPrompt: context.systemPrompt, tools: context.tools, messages: context.messages ?? [] }).messages);
    const req: LlmRequest = {
      model,
      ...(await callAuth(model, options)),
      systemPrompt: parts.systemPrompt,
      messages: parts.messages,
      tools: toolSpecs(parts.tools),
      thinkingLevel: options.reasoning ?? options.thinkingLevel ?? "off",
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
      ...callFetch(model, options),
    };
    const stream = via(req, options.signal ?? new AbortController().signal);
    const partial = new PartialAssistant({ ...emptyAssistant(model), stopReason: "pending" as AssistantMessage["stopReason"] });
    out.push({ type: "start", partial: partial.message });
    for await (const e of stream) out.push({ ...e, partial: partial.apply(e) });
    return stream.result();
  })().then(
    (message) => out.push(message.stopReason === "error" || message.stopReason === "aborted" ? { type: "error", reason: message.stopReason, error: message } : { type: "done", reason: message.stopReason, message }),
    (err: unknown) => {
      const message = emptyAssistant(model);
      message.stopReason = "error";
      message.errorMessage = describeProviderError(err);
      out.push({ type: "error", reason: "error", error: message });
    },
  );
  return out;
}

export const completeModel = (model: Model, context: CallContext, options?: CallOptions): Promise<AssistantMessage> => streamModel(model, context, options).result();

/** pi-ai's names for them. */
export const modelCallExports = { stream: streamModel, streamSimple: streamModel, complete: completeModel, completeSimple: completeModel };
