/**
 * Model calls from extensions through pion's own providers: pi-ai's `streamSimple` / `stream` /
 * `completeSimple` / `complete`, and `ctx.modelRegistry.stream` / `complete`. A model is one of
 * pion's (from `ctx.modelRegistry` or `ctx.model`'s lookup); the key comes from `options.apiKey`,
 * else from the session's registry (auth.json, models.json, the environment), as a request of the
 * session's own would get it. The stream yields the reference's events (`start`, the deltas,
 * each with the message so far as `partial`, then `done` or `error`) and `result()` resolves
 * with the final assistant message; like every pion stream it never rejects: a failure ends
 * with stopReason "error".
 */
import { streamByApi } from "../providers/index.ts";
import { emptyAssistant } from "../providers/event-stream.ts";
import type { AssistantMessage, AssistantMessageEvent, LlmRequest, Message, Model, StreamFn, ThinkingLevel, ToolSpec } from "../providers/types.ts";

type Auth = (provider: string) => Promise<{ apiKey?: string; headers?: Record<string, string> } | undefined>;

let sessionAuth: Auth = async () => undefined;

/** Where keys come from when a call names none (the loader sets the session's registry). */
export function setModelAuth(auth: Auth): void {
  sessionAuth = auth;
}

/** The session's auth for a provider (pi-agent-core's Agent asks too). */
export const sessionAuthFor = (provider: string) => sessionAuth(provider);

export interface CallContext {
  systemPrompt?: string;
  messages?: Message[];
  tools?: { name: string; description?: string; parameters?: unknown }[];
}

export interface CallOptions {
  apiKey?: string;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  reasoning?: ThinkingLevel;
  thinkingLevel?: ThinkingLevel;
  sessionId?: string;
}

type Event = Record<string, unknown> & { type: string };

/** One model call; `via` is the provider route (default: the model's API, as the session's requests go). */
export function streamModel(model: Model, context: CallContext, options: CallOptions = {}, via: StreamFn = streamByApi) {
  const queue: Event[] = [];
  let wake: (() => void) | undefined;
  let finished = false;
  const push = (e: Event) => {
    queue.push(e);
    wake?.();
  };
  const result = (async (): Promise<AssistantMessage> => {
    const auth = options.apiKey ? { apiKey: options.apiKey } : ((await sessionAuth(model.provider)) ?? {});
    const req: LlmRequest = {
      model,
      ...(auth.apiKey ? { apiKey: auth.apiKey } : {}),
      ...(auth.headers || options.headers ? { authHeaders: { ...auth.headers, ...options.headers } } : {}),
      systemPrompt: context.systemPrompt ?? "",
      messages: context.messages ?? [],
      tools: (context.tools ?? []).map((t): ToolSpec => ({ name: t.name, description: t.description ?? "", parameters: (t.parameters ?? { type: "object", properties: {} }) as Record<string, unknown> })),
      thinkingLevel: options.reasoning ?? options.thinkingLevel ?? "off",
      ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    };
    const stream = via(req, options.signal ?? new AbortController().signal);
    // Each event carries the message so far (`partial`), as the reference's streams' events do.
    const partial = { ...emptyAssistant(model), stopReason: "pending" };
    push({ type: "start", partial: { ...partial } });
    const rawArgs = new Map<number, string>();
    for await (const e of stream) {
      grow(partial.content, e, rawArgs);
      push({ ...e, partial: { ...partial } });
    }
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

/** Apply one delta event to the content of a message being streamed (tool arguments parsed as far as they go). */
function grow(content: AssistantMessage["content"], e: AssistantMessageEvent, rawArgs: Map<number, string>): void {
  const i = e.contentIndex;
  const block = content[i];
  switch (e.type) {
    case "text_start":
      content[i] = { type: "text", text: "" };
      break;
    case "thinking_start":
      content[i] = { type: "thinking", thinking: "" };
      break;
    case "toolcall_start":
      content[i] = { type: "toolCall", id: e.id, name: e.toolName, arguments: {} };
      rawArgs.set(i, "");
      break;
    case "text_delta":
      if (block?.type === "text") block.text += e.delta;
      break;
    case "thinking_delta":
      if (block?.type === "thinking") block.thinking += e.delta;
      break;
    case "toolcall_delta":
      if (block?.type === "toolCall") {
        const text = (rawArgs.get(i) ?? "") + e.delta;
        rawArgs.set(i, text);
        block.arguments = partialArguments(text, block.arguments);
      }
      break;
    case "text_end":
      content[i] = { type: "text", text: e.content };
      break;
    case "thinking_end":
      content[i] = { ...(block?.type === "thinking" ? block : {}), type: "thinking", thinking: e.content };
      break;
    case "toolcall_end":
      content[i] = e.toolCall;
      break;
  }
}

type Partial = { value: unknown; done: boolean } | undefined;

/**
 * The value of JSON text that may stop anywhere: what has arrived, with an unfinished string cut
 * where it stops, an unfinished `true`/`false`/`null` completed, and a key without its value (or
 * with a number cut after its point) left out. Undefined when no value has begun.
 */
function parsePrefix(text: string): unknown {
  let i = 0;
  const ws = () => {
    while (i < text.length && " \t\r\n".includes(text[i]!)) i++;
  };
  const str = (): Partial => {
    let out = "";
    for (i++; i < text.length; i++) {
      const c = text[i]!;
      if (c === '"') return i++, { value: out, done: true };
      if (c !== "\\") {
        out += c;
        continue;
      }
      const esc = text.slice(i, i + (text[i + 1] === "u" ? 6 : 2));
      if (esc.length < (text[i + 1] === "u" ? 6 : 2)) break;
      out += JSON.parse(`"${esc}"`);
      i += esc.length - 1;
    }
    return { value: out, done: false };
  };
  const value = (): Partial => {
    ws();
    const c = text[i];
    if (c === undefined) return undefined;
    if (c === '"') return str();
    if (c === "{" || c === "[") {
      const isObj = c === "{";
      const out: Record<string, unknown> | unknown[] = isObj ? {} : [];
      i++;
      for (;;) {
        ws();
        if (i >= text.length) return { value: out, done: false };
        if (text[i] === (isObj ? "}" : "]")) return i++, { value: out, done: true };
        let key = "";
        if (isObj) {
          const k = str();
          ws();
          if (!k?.done || text[i] !== ":") return { value: out, done: false };
          i++;
          key = k.value as string;
        }
        const v = value();
        if (!v) return { value: out, done: false };
        if (isObj) (out as Record<string, unknown>)[key] = v.value;
        else (out as unknown[]).push(v.value);
        if (!v.done) return { value: out, done: false };
        ws();
        if (text[i] === ",") i++;
      }
    }
    const m = /^-?\d*(\.\d*)?([eE][-+]?\d*)?/.exec(text.slice(i))![0];
    // A number cut after its point (or a lone minus) has no value yet; one cut in its exponent is its mantissa.
    if (m && m !== "-" && !m.endsWith(".")) {
      i += m.length;
      const n = Number.parseFloat(m);
      return Number.isNaN(n) ? undefined : { value: n, done: i < text.length };
    }
    for (const [word, v] of [["true", true], ["false", false], ["null", null]] as const) {
      const rest = text.slice(i, i + word.length);
      if (word.startsWith(rest) && rest.length > 0) return (i += rest.length), { value: v, done: rest === word };
    }
    return undefined;
  };
  return value()?.value;
}

/** The arguments in a tool call's JSON text so far (`last` until the text holds an object). */
export function partialArguments(text: string, last: Record<string, unknown>): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    v = parsePrefix(text);
  }
  return v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : last;
}

export const completeModel = (model: Model, context: CallContext, options?: CallOptions): Promise<AssistantMessage> => streamModel(model, context, options).result();

/** pi-ai's names for them. */
export const modelCallExports = { stream: streamModel, streamSimple: streamModel, complete: completeModel, completeSimple: completeModel };
