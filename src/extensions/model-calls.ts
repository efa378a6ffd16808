/**
 * Model calls from extensions through pion's own providers: pi-ai's `streamSimple` / `stream` /
 * `completeSimple` / `complete`, and `ctx.modelRegistry.stream` / `complete`. A model is one of
 * pion's (from `ctx.modelRegistry` or `ctx.model`'s lookup); the key comes from `options.apiKey`,
 * else from the session's registry (auth.json, models.json, the environment), as a request of the
 * session's own would get it. The stream yields the reference's events (`start`, the deltas,
 * then `done` or `error`) and `result()` resolves with the final assistant message; like every
 * pion stream it never rejects: a failure ends with stopReason "error".
 */
import { streamByApi } from "../providers/index.ts";
import type { AssistantMessage, LlmRequest, Message, Model, ThinkingLevel, ToolSpec } from "../providers/types.ts";

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

interface CallContext {
  systemPrompt?: string;
  messages?: Message[];
  tools?: { name: string; description?: string; parameters?: unknown }[];
}

interface CallOptions {
  apiKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  reasoning?: ThinkingLevel;
  thinkingLevel?: ThinkingLevel;
  sessionId?: string;
}

type Event = Record<string, unknown> & { type: string };

export function streamModel(model: Model, context: CallContext, options: CallOptions = {}) {
  const queue: Event[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const push = (e: Event) => {
    queue.push(e);
    wake?.();
  };
  const result = (async (): Promise<AssistantMessage> => {
    const req: LlmRequest = {
      model,
      ...(await callAuth(model, options)),
      systemPrompt: context.systemPrompt ?? "",
      messages: context.messages ?? [],
      tools: (context.tools ?? []).map((t): ToolSpec => ({ name: t.name, description: t.description ?? "", parameters: (t.parameters ?? { type: "object", properties: {} }) as Record<string, unknown> })),
      thinkingLevel: options.reasoning ?? options.thinkingLevel ?? "off",
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    };
    const stream = streamByApi(req, options.signal ?? new AbortController().signal);
    push({ type: "start" });
    for await (const e of stream) push(e as unknown as Event);
    const message = await stream.result();
    push(message.stopReason === "error" || message.stopReason === "aborted" ? { type: "error", reason: message.stopReason, error: message } : { type: "done", reason: message.stopReason, message });
    return message;
  })().finally(() => {
    finished = true;
    wake?.();
  });
  return {
    result: () => result,
    async *[Symbol.asyncIterator](): AsyncGenerator<Event> {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next;
          continue;
        }
        if (finished) return;
        await new Promise<void>((r) => (wake = r));
        wake = undefined;
      }
    },
  };
}

export const completeModel = (model: Model, context: CallContext, options?: CallOptions): Promise<AssistantMessage> => streamModel(model, context, options).result();

/** pi-ai's names for them. */
export const modelCallExports = { stream: streamModel, streamSimple: streamModel, complete: completeModel, completeSimple: completeModel };
