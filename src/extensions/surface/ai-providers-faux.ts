/**
 * pi-ai's faux provider: an in-memory test model that replies with scripted assistant messages
 * (or functions of the request), streamed in chunks of a few "tokens" with the reference's
 * events, and usage estimated at four characters a token (with a simulated prompt cache per
 * session). No network, no keys. Deferred responses (`options.deferred`) are kept for
 * `fetchDeferred` / `cancelDeferred`.
 */
import type { AssistantMessage, Model, TextContent, ThinkingContent, ToolCall, Usage } from "../../providers/types.ts";
import { errorMessage } from "../../util/errors.ts";
import { ToolCallArgumentsStream } from "./ai-utils-streaming-json.ts";
import { TimedStream } from "./ai-providers-streams.ts";

type Block = TextContent | ThinkingContent | ToolCall;
/** A message as the reference's transcripts have them (a `system` role included). */
type AnyMessage = { role: string; content?: unknown; toolName?: string; sections?: Record<string, string | null>; toolsAdded?: unknown[]; toolsRemoved?: unknown[] };
type Context = { messages?: AnyMessage[] };
type Options = { signal?: AbortSignal; sessionId?: string; cacheRetention?: string; deferred?: unknown; onResponse?: (r: { status: number; headers: Record<string, string> }, m: Model) => unknown };
/** The reference's stop reasons include "pending" (mid-stream) and "deferred". */
type Reply = Omit<AssistantMessage, "stopReason"> & { stopReason: string; deferred?: Handle };
type Handle = { provider: string; modelId: string; api: string; id: string; pollAfterMs?: number };

export interface FauxState {
  callCount: number;
  deferredFetchCount: number;
  cancelledDeferred: Handle[];
}
export type FauxStep = Reply | ((context: Context, options: Options | undefined, state: FauxState, model: Model) => Reply | Promise<Reply>);
export interface FauxOptions {
  api?: string;
  provider?: string;
  models?: { id: string; name?: string; reasoning?: boolean; input?: ("text" | "image")[]; inputLimits?: Record<string, unknown>; cost?: Model["cost"]; contextWindow?: number; maxTokens?: number }[];
  deferred?: { pendingFetches?: number; pollAfterMs?: number };
  tokensPerSecond?: number;
  tokenSize?: { min?: number; max?: number };
}

const zeroUsage = (): Usage => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const randomId = (prefix: string) => `${prefix}:${Date.now()}:${Math.random().toString(36).slice(2)}`;

export const fauxText = (text: string): TextContent => ({ type: "text", text });
export const fauxThinking = (thinking: string): ThinkingContent => ({ type: "thinking", thinking });
export const fauxToolCall = (name: string, args: Record<string, unknown>, options: { id?: string } = {}): ToolCall => ({ type: "toolCall", id: options.id ?? randomId("tool"), name, arguments: args });

/** A scripted reply: text, one block or several, stopping with "stop" unless told otherwise. */
export function fauxAssistantMessage(content: string | Block | Block[], options: { stopReason?: string; deferred?: Handle; errorMessage?: string; responseId?: string; timestamp?: number } = {}): Reply {
  return {
    role: "assistant",
    content: typeof content === "string" ? [fauxText(content)] : Array.isArray(content) ? content : [content],
    api: "faux" as Model["api"],
    provider: "faux",
    model: "faux-1",
    usage: zeroUsage(),
    stopReason: options.stopReason ?? "stop",
    ...(options.deferred === undefined ? {} : { deferred: options.deferred }),
    ...(options.errorMessage === undefined ? {} : { errorMessage: options.errorMessage }),
    ...(options.responseId === undefined ? {} : { responseId: options.responseId }),
    timestamp: options.timestamp ?? Date.now(),
  } as Reply;
}

const tokensOf = (text: string) => Math.ceil(text.length / 4);

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((b: { type: string; text?: string; mimeType?: string; data?: string }) => (b.type === "text" ? b.text! : `[image:${b.mimeType}:${b.data?.length ?? 0}]`)).join("\n");
}

const blocksText = (blocks: Block[]) => blocks.map((b) => (b.type === "text" ? b.text : b.type === "thinking" ? b.thinking : `${b.name}:${JSON.stringify(b.arguments)}`)).join("\n");

function messageText(m: AnyMessage): string {
  switch (m.role) {
    case "system": {
      const text = [contentText(m.content), ...Object.values(m.sections ?? {}).filter((s): s is string => s !== null)].filter((p) => p.length > 0).join("\n\n");
      return [text, ...(m.toolsRemoved ?? []).map((t) => `tool-:${JSON.stringify(t)}`), ...(m.toolsAdded ?? []).map((t) => `tool+:${JSON.stringify(t)}`)].filter((p) => p.length > 0).join("\n");
    }
    case "user":
      return contentText(m.content);
    case "assistant":
      return blocksText((m.content ?? []) as Block[]);
    default:
      return [m.toolName ?? "", ...((m.content ?? []) as unknown[]).map((b) => contentText([b]))].join("\n");
  }
}

/** Length of the first `count` prompt parts joined with blank lines. */
const joinedLength = (parts: string[], count = parts.length) => parts.slice(0, count).reduce((n, p) => n + p.length, count > 0 ? (count - 1) * 2 : 0);

function sharedPrefix(a: string, b: string): number {
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return i;
}

/** How much of `current`'s joined prompt the previous one shares: whole equal parts, then characters. */
function cachedChars(previous: string[], current: string[]): number {
  let i = 0;
  while (i < previous.length && i < current.length && previous[i] === current[i]) i++;
  const rest = (parts: string[]) => (i === parts.length ? "" : (i > 0 ? "\n\n" : "") + parts.slice(i).join("\n\n"));
  return joinedLength(previous, i) + sharedPrefix(rest(previous), rest(current));
}

function withUsage(message: Reply, context: Context, options: Options | undefined, cache: Map<string, string[]>): Reply {
  const prompt = (context.messages ?? []).map((m) => `${m.role}:${messageText(m)}`);
  const promptTokens = Math.ceil(joinedLength(prompt) / 4);
  const output = tokensOf(blocksText(message.content));
  let input = promptTokens;
  let cacheRead = 0;
  let cacheWrite = 0;
  const session = options?.sessionId;
  if (session && options?.cacheRetention !== "none") {
    const previous = cache.get(session);
    cacheRead = previous ? Math.ceil(cachedChars(previous, prompt) / 4) : 0;
    cacheWrite = Math.max(0, promptTokens - cacheRead);
    // Every prompt token is then read from or written to the simulated cache.
    input = 0;
    cache.set(session, prompt);
  }
  return { ...message, usage: { ...zeroUsage(), input, output, cacheRead, cacheWrite, totalTokens: input + output + cacheRead + cacheWrite } };
}

function chunks(text: string, min: number, max: number): string[] {
  const out: string[] = [];
  for (let i = 0; i < text.length; ) {
    const size = Math.max(1, (min + Math.floor(Math.random() * (max - min + 1))) * 4);
    out.push(text.slice(i, i + size));
    i += size;
  }
  return out.length > 0 ? out : [""];
}

function failure(err: unknown, api: string, provider: string, modelId: string): Reply {
  return { role: "assistant", content: [], api: api as Model["api"], provider, model: modelId, usage: zeroUsage(), stopReason: "error", errorMessage: errorMessage(err), timestamp: Date.now() } as Reply;
}

const deferredMessage = (model: Model, handle: Handle): Reply =>
  ({ role: "assistant", content: [], api: model.api, provider: model.provider, model: model.id, usage: zeroUsage(), stopReason: "deferred", deferred: handle, timestamp: Date.now() }) as Reply;

type Out = TimedStream<Reply>;

const pace = (chunk: string, tokensPerSecond?: number) =>
  new Promise<void>((r) => (tokensPerSecond && tokensPerSecond > 0 ? setTimeout(r, (tokensOf(chunk) / tokensPerSecond) * 1000) : queueMicrotask(r)));

/** Stream `message` block by block in chunks; an abort ends it with an "aborted" error event. */
async function play(out: Out, message: Reply, min: number, max: number, tokensPerSecond: number | undefined, signal?: AbortSignal): Promise<void> {
  const partial = { ...message, content: [] as Block[], stopReason: "pending" } as Reply;
  const snapshot = () => ({ ...partial });
  const aborted = () => {
    if (!signal?.aborted) return false;
    const m = { ...partial, stopReason: "aborted", errorMessage: "Request was aborted", timestamp: Date.now() } as Reply;
    out.push({ type: "error", reason: "aborted", error: m });
    out.end(m);
    return true;
  };
  if (aborted()) return;
  out.push({ type: "start", partial: snapshot() });
  for (let i = 0; i < message.content.length; i++) {
    if (aborted()) return;
    const block = message.content[i]!;
    if (block.type === "text" || block.type === "thinking") {
      const kind = block.type;
      const full = kind === "text" ? (block as TextContent).text : (block as ThinkingContent).thinking;
      const growing = (kind === "text" ? { type: "text", text: "" } : { type: "thinking", thinking: "" }) as TextContent | ThinkingContent;
      partial.content = [...partial.content, growing];
      out.push({ type: `${kind}_start`, contentIndex: i, partial: snapshot() });
      for (const piece of chunks(full, min, max)) {
        await pace(piece, tokensPerSecond);
        if (aborted()) return;
        if (growing.type === "text") growing.text += piece;
        else growing.thinking += piece;
        out.push({ type: `${kind}_delta`, contentIndex: i, delta: piece, partial: snapshot() });
      }
      out.push({ type: `${kind}_end`, contentIndex: i, content: full, partial: snapshot() });
      continue;
    }
    const call = block as ToolCall;
    const growing: ToolCall = { type: "toolCall", id: call.id, name: call.name, arguments: {} };
    partial.content = [...partial.content, growing];
    out.push({ type: "toolcall_start", contentIndex: i, partial: snapshot() });
    const args = new ToolCallArgumentsStream();
    for (const piece of chunks(JSON.stringify(call.arguments), min, max)) {
      await pace(piece, tokensPerSecond);
      if (aborted()) return;
      growing.arguments = args.append(piece);
      out.push({ type: "toolcall_delta", contentIndex: i, delta: piece, partial: snapshot() });
    }
    growing.arguments = call.arguments;
    out.push({ type: "toolcall_end", contentIndex: i, toolCall: call, partial: snapshot() });
  }
  if (message.stopReason === "pending") throw new Error("Faux response ended without a stop reason");
  if (message.stopReason === "error" || message.stopReason === "aborted") out.push({ type: "error", reason: message.stopReason, error: message });
  else out.push({ type: "done", reason: message.stopReason, message });
  out.end(message);
}

/** The faux provider's parts: its API id, models, streams and script controls. */
export function createFauxCore(options: FauxOptions = {}) {
  const api = options.api ?? randomId("faux");
  const provider = options.provider ?? "faux";
  const min = Math.max(1, Math.min(options.tokenSize?.min ?? 3, options.tokenSize?.max ?? 5));
  const max = Math.max(min, options.tokenSize?.max ?? 5);
  const tps = options.tokensPerSecond;
  let pending: FauxStep[] = [];
  const state: FauxState = { callCount: 0, deferredFetchCount: 0, cancelledDeferred: [] };
  const promptCache = new Map<string, string[]>();
  const deferred = new Map<string, { handle: Handle; step: FauxStep; context: Context; options: Options; model: Model; pendingFetches: number; cancelled: boolean; final?: Reply }>();
  const defs = options.models?.length
    ? options.models
    : [{ id: "faux-1", name: "Faux Model", reasoning: false, input: ["text", "image"] as ("text" | "image")[], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 16384 }];
  const models = defs.map((d) => ({
    id: d.id,
    name: d.name ?? d.id,
    api: api as Model["api"],
    provider,
    baseUrl: "http://localhost:0",
    reasoning: d.reasoning ?? false,
    input: d.input ?? ["text", "image"],
    inputLimits: d.inputLimits,
    cost: d.cost ?? { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: d.contextWindow ?? 128000,
    maxTokens: d.maxTokens ?? 16384,
  })) as [Model, ...Model[]];

  const resolve = async (step: FauxStep, context: Context, opts: Options | undefined, model: Model): Promise<Reply> => {
    const reply = typeof step === "function" ? await step(context, opts, state, model) : step;
    const copy = structuredClone(reply);
    const placed = { ...copy, api: api as Model["api"], provider, model: model.id, timestamp: copy.timestamp ?? Date.now(), usage: copy.usage ?? zeroUsage() };
    return withUsage(placed, context, opts, promptCache);
  };
  const fail = (out: Out, err: unknown, model: Model, context?: Context, opts?: Options) => {
    let m = failure(err, api, provider, model.id);
    if (context) m = withUsage(m, context, opts, promptCache);
    out.push({ type: "error", reason: "error", error: m });
    out.end(m);
  };

  const stream = (model: Model, context: Context, opts?: Options): Out => {
    const out: Out = new TimedStream();
    const step = pending.shift();
    state.callCount++;
    queueMicrotask(async () => {
      try {
        await opts?.onResponse?.({ status: 200, headers: {} }, model);
        if (!step) return fail(out, new Error("No more faux responses queued"), model, context, opts);
        if (opts?.deferred) {
          const handle: Handle = { provider: model.provider, modelId: model.id, api: model.api, id: randomId("deferred"), ...(options.deferred?.pollAfterMs !== undefined ? { pollAfterMs: options.deferred.pollAfterMs } : {}) };
          deferred.set(handle.id, { handle, step, context, options: opts, model, pendingFetches: Math.max(0, Math.floor(options.deferred?.pendingFetches ?? 0)), cancelled: false });
          return await play(out, deferredMessage(model, handle), min, max, tps, opts.signal);
        }
        await play(out, await resolve(step, context, opts, model), min, max, tps, opts?.signal);
      } catch (err) {
        fail(out, err, model);
      }
    });
    return out;
  };

  const fetchDeferred = (model: Model, handle: Handle, opts?: Options): Out => {
    const out: Out = new TimedStream();
    state.deferredFetchCount++;
    queueMicrotask(async () => {
      try {
        await opts?.onResponse?.({ status: 200, headers: {} }, model);
        const entry = deferred.get(handle.id);
        const h = entry?.handle;
        if (!entry || h!.provider !== handle.provider || h!.modelId !== handle.modelId || h!.api !== handle.api) throw new Error(`Unknown faux deferred response: ${handle.id}`);
        if (entry.cancelled) throw new Error(`Faux deferred response was cancelled: ${handle.id}`);
        if (entry.pendingFetches > 0) {
          entry.pendingFetches--;
          return await play(out, deferredMessage(model, entry.handle), min, max, tps, opts?.signal);
        }
        if (!entry.final) {
          // The submission's own request controls do not apply to the later fetch.
          const { deferred: _d, signal: _s, onResponse: _o, ...submission } = entry.options;
          try {
            entry.final = await resolve(entry.step, entry.context, submission, entry.model);
          } catch (err) {
            entry.final = failure(err, api, provider, entry.model.id);
          }
        }
        await play(out, entry.final, min, max, tps, opts?.signal);
      } catch (err) {
        fail(out, err, model);
      }
    });
    return out;
  };

  const cancelDeferred = async (model: Model, handle: Handle, opts?: Options): Promise<void> => {
    state.cancelledDeferred.push(structuredClone(handle));
    const entry = deferred.get(handle.id);
    if (entry) entry.cancelled = true;
    await opts?.onResponse?.({ status: 200, headers: {} }, model);
  };

  function getModel(): Model;
  function getModel(id: string): Model | undefined;
  function getModel(id?: string): Model | undefined {
    return id ? models.find((m) => m.id === id) : models[0];
  }

  return {
    api,
    provider,
    models,
    stream,
    streamSimple: (model: Model, context: Context, opts?: Options) => stream(model, context, opts),
    fetchDeferred,
    cancelDeferred,
    getModel,
    state,
    setResponses: (steps: FauxStep[]) => void (pending = [...steps]),
    appendResponses: (steps: FauxStep[]) => void pending.push(...steps),
    getPendingResponseCount: () => pending.length,
  };
}

/** What a faux registration hands its test: the API, models and script controls of its core. */
export function fauxControls(core: ReturnType<typeof createFauxCore>) {
  const { api, models, getModel, state, setResponses, appendResponses, getPendingResponseCount } = core;
  return { api, models, getModel, state, setResponses, appendResponses, getPendingResponseCount };
}
