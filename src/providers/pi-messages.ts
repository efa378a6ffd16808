/**
 * pi's own message protocol (models.json `"api": "pi-messages"`, what pi gateways speak): one POST
 * of `{model, context, options}` to `<baseUrl>/messages`, where `context` is the reference's
 * transcript (the system prompt and tools as a leading system message, then the messages as
 * stored), answered by an SSE stream of the reference's assistant-message events that ends with
 * `done` or `error`. The server does the provider's work; pion relays its events and keeps its
 * usage. An HTTP failure reads `<status> <statusText>: <error.message or body> (<error.code>)`.
 */
import { requestHeaders } from "./compat.ts";
import type { PushStream } from "./event-stream.ts";
import { runProviderStream } from "./lifecycle.ts";
import { sseBatches } from "./sse.ts";
import { transcriptOf } from "./transcript.ts";
import { setToolArguments } from "./transform.ts";
import type { AssistantMessage, AssistantStream, LlmRequest, Model, StopReason, StreamFn, ThinkingLevel, ToolCall, Usage } from "./types.ts";
import { detailedUserAgent } from "./user-agent.ts";

/** The request's `options`, in the reference's key order; undefined ones are left out of the JSON. */
export interface PiMessagesOptions {
  temperature?: number;
  maxTokens?: number;
  reasoning?: ThinkingLevel;
  cacheRetention?: "none" | "short" | "long";
  sessionId?: string;
  toolChoice?: unknown;
}

export interface PiMessagesPayload {
  model: string;
  context: unknown;
  options: PiMessagesOptions;
}

/** What a pi-ai caller (piMessagesApi) may add to a request beyond pion's LlmRequest. */
export interface PiMessagesCall {
  /** The context sent as given; default the request's transcript. */
  context?: unknown;
  options?: Pick<PiMessagesOptions, "temperature" | "maxTokens" | "cacheRetention" | "toolChoice">;
  /** Adds `?debug=1` to the URL. */
  debug?: boolean;
  /** Where `PI_CACHE_RETENTION` is read first (then the process environment). */
  env?: Record<string, string | undefined>;
  /** The lowest headers (a pi-ai identity's User-Agent and attribution); default pion's User-Agent. */
  identityHeaders?: Record<string, string>;
  /** May replace the payload before it is sent. */
  onPayload?: (payload: PiMessagesPayload, model: Model) => unknown;
  onResponse?: (response: { status: number; headers: Record<string, string> }, model: Model) => unknown;
  /** Sees each server event as received, before it is applied. */
  onProviderStreamEvent?: (event: unknown, model: Model) => unknown;
  /** The HTTP client, over the request's. */
  fetch?: typeof fetch;
}

/**
 * The caller's retention; "none" for a request no later one extends (a compaction summary, which
 * the reference sends with "none" too); else only the legacy opt-in is mapped, and with no
 * retention given the server's default applies.
 */
function cacheRetention(req: LlmRequest, call: PiMessagesCall): PiMessagesOptions["cacheRetention"] {
  if (call.options?.cacheRetention) return call.options.cacheRetention;
  if (req.cacheConversation === false) return "none";
  return (call.env?.PI_CACHE_RETENTION ?? process.env.PI_CACHE_RETENTION) === "long" ? "long" : undefined;
}

export function piMessagesPayload(req: LlmRequest, call: PiMessagesCall = {}): PiMessagesPayload {
  return {
    model: req.model.id,
    context: call.context ?? transcriptOf(req),
    options: {
      temperature: call.options?.temperature,
      maxTokens: call.options?.maxTokens,
      reasoning: req.thinkingLevel === "off" ? undefined : req.thinkingLevel,
      cacheRetention: cacheRetention(req, call),
      sessionId: req.sessionId,
      toolChoice: call.options?.toolChoice,
    },
  };
}

/**
 * Lowest first: the client's identity (User-Agent), the key and content headers, the model's headers, then
 * the request's own (auth headers, a caller's); names match case-insensitively and a null value
 * (from a pi-ai caller) removes the header.
 */
export function piMessagesHeaders(req: LlmRequest, call: PiMessagesCall = {}): Headers {
  const out = new Headers();
  const layers: (Record<string, string | null> | undefined)[] = [
    call.identityHeaders ?? { "User-Agent": detailedUserAgent() },
    { authorization: `Bearer ${req.apiKey}`, accept: "text/event-stream", "content-type": "application/json" },
    requestHeaders(req),
    req.authHeaders,
  ];
  for (const layer of layers) {
    for (const [name, value] of Object.entries(layer ?? {})) {
      if (value === null) out.delete(name);
      else out.set(name, value);
    }
  }
  return out;
}

/** The error of a non-2xx answer: the body's `error.message` (else the body) and `error.code`. */
async function responseError(res: Response): Promise<Error> {
  const body = await res.text();
  let error: { message?: unknown; code?: unknown } | undefined;
  try {
    const parsed = JSON.parse(body) as { error?: unknown } | null;
    const e = parsed?.error;
    if (typeof e === "object" && e !== null && !Array.isArray(e)) error = e;
  } catch {
    // not JSON: the body itself is the message
  }
  const message = typeof error?.message === "string" ? error.message : body;
  const code = typeof error?.code === "string" ? ` (${error.code})` : "";
  return Object.assign(new Error(`${res.status} ${res.statusText}: ${message}${code}`), { status: res.status });
}

export function runPiMessages(req: LlmRequest, signal: AbortSignal, call: PiMessagesCall = {}): AssistantStream {
  return runProviderStream(req, signal, async ({ msg, out, signal: sig, touch }) => {
    const { model } = req;
    if (!req.apiKey) throw new Error(`No API key provided for provider "${model.provider}"`);
    const url = new URL(`${model.baseUrl.replace(/\/+$/, "")}/messages`);
    if (call.debug) url.searchParams.set("debug", "1");
    let payload = piMessagesPayload(req, call);
    const replaced = await call.onPayload?.(payload, model);
    if (replaced !== undefined) payload = replaced as PiMessagesPayload;
    touch();
    const res = await (call.fetch ?? req.fetch ?? fetch)(url, { method: "POST", headers: piMessagesHeaders(req, call), body: JSON.stringify(payload), signal: sig });
    touch();
    await call.onResponse?.({ status: res.status, headers: Object.fromEntries(res.headers) }, model);
    if (!res.ok) throw await responseError(res);
    if (!res.body) throw new Error(`${model.provider} response has no body`);
    const state = new PiEventState(msg, out);
    for await (const batch of sseBatches(res.body, touch)) {
      for (const sse of batch) {
        if (!sse.data || sse.data === "[DONE]") continue;
        const event = JSON.parse(sse.data) as unknown;
        await call.onProviderStreamEvent?.(event, model);
        if (state.apply(event)) return;
      }
      await out.backpressure();
      touch();
    }
    throw new Error(`${model.provider} stream ended without a terminal event`);
  });
}

export const streamPiMessages: StreamFn = (req, signal) => runPiMessages(req, signal);

type Wire = Record<string, unknown> & { type: string };
const FINISHED: readonly StopReason[] = ["stop", "length", "toolUse"];
const FAILED: readonly StopReason[] = ["error", "aborted"];
const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The server's events applied to the message being built, re-emitted as pion's deltas. */
class PiEventState {
  /** Streamed argument text of each open tool call, by content index. */
  private args = new Map<number, string>();

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  /** Apply one event; true once it was the terminal one. */
  apply(raw: unknown): boolean {
    if (typeof raw !== "object" || raw === null || typeof (raw as Wire).type !== "string") throw new Error(`Invalid pi-messages event: ${JSON.stringify(raw)}`);
    const ev = raw as Wire;
    const { msg, out } = this;
    const i = "contentIndex" in ev ? this.index(ev) : -1;
    switch (ev.type) {
      case "done":
      case "error":
        this.finish(ev);
        return true;
      case "text_start":
        msg.content[i] = { type: "text", text: "" };
        out.push({ type: "text_start", contentIndex: i });
        break;
      case "thinking_start":
        msg.content[i] = { type: "thinking", thinking: "" };
        out.push({ type: "thinking_start", contentIndex: i });
        break;
      case "toolcall_start": {
        const id = str(ev.id);
        const toolName = str(ev.toolName);
        msg.content[i] = { type: "toolCall", id, name: toolName, arguments: {} };
        this.args.set(i, "");
        out.push({ type: "toolcall_start", contentIndex: i, id, toolName });
        break;
      }
      case "text_delta":
      case "thinking_delta":
      case "toolcall_delta": {
        const delta = str(ev.delta);
        const block = this.block(i, ev.type);
        if (block.type === "text") block.text += delta;
        else if (block.type === "thinking") block.thinking += delta;
        else this.args.set(i, (this.args.get(i) ?? "") + delta);
        out.push({ type: ev.type, contentIndex: i, delta });
        break;
      }
      case "text_end":
      case "thinking_end": {
        const block = this.block(i, ev.type);
        const signature = typeof ev.contentSignature === "string" ? ev.contentSignature : undefined;
        if (block.type === "text") {
          block.text = str(ev.content);
          if (signature !== undefined) block.textSignature = signature;
        } else if (block.type === "thinking") {
          block.thinking = str(ev.content);
          if (signature !== undefined) block.thinkingSignature = signature;
          if (typeof ev.redacted === "boolean") block.redacted = ev.redacted;
        }
        out.push({ type: ev.type, contentIndex: i, content: str(ev.content) });
        break;
      }
      case "toolcall_end": {
        const block = this.block(i, ev.type) as ToolCall;
        const call = ev.toolCall;
        // The server's finished call is authoritative; without one, the streamed text is parsed.
        if (typeof call === "object" && call !== null) Object.assign(block, call, { type: "toolCall" });
        else setToolArguments(block, this.args.get(i) ?? "");
        this.args.delete(i);
        out.push({ type: "toolcall_end", contentIndex: i, toolCall: block });
        break;
      }
    }
    return false;
  }

  /**
   * The event's content index, checked before it keys the content array (an index from the wire
   * could be `__proto__` or a huge number): a `*_start` may add the next block, others need one.
   */
  private index(ev: Wire): number {
    const i = ev.contentIndex;
    const limit = ev.type.endsWith("_start") ? this.msg.content.length : this.msg.content.length - 1;
    if (typeof i !== "number" || !Number.isInteger(i) || i < 0 || i > limit) throw new Error(`Invalid contentIndex ${JSON.stringify(i)} in pi-messages ${ev.type} event`);
    return i;
  }

  private block(i: number, type: string): AssistantMessage["content"][number] {
    const block = this.msg.content[i]!;
    const wanted = type.startsWith("toolcall") ? "toolCall" : type.startsWith("thinking") ? "thinking" : "text";
    if (block.type !== wanted) throw new Error(`pi-messages ${type} event for a ${block.type} block at contentIndex ${i}`);
    return block;
  }

  /** `done` / `error`: the server's stop reason, usage and response fields end the message. */
  private finish(ev: Wire): void {
    const msg = this.msg as AssistantMessage & { responseModel?: string; providerThinkingLevel?: string };
    const reason = ev.reason as StopReason;
    if (!(ev.type === "done" ? FINISHED : FAILED).includes(reason)) throw new Error(`Invalid reason ${JSON.stringify(ev.reason)} in pi-messages ${ev.type} event`);
    msg.stopReason = reason;
    if (ev.type === "error") msg.errorMessage = str(ev.errorMessage) || "The pi-messages server reported an error";
    if (typeof ev.responseId === "string") msg.responseId = ev.responseId;
    if (typeof ev.responseModel === "string") msg.responseModel = ev.responseModel;
    if (typeof ev.providerThinkingLevel === "string") msg.providerThinkingLevel = ev.providerThinkingLevel;
    takeUsage(msg.usage, ev.usage);
  }
}

const count = (v: unknown): number => (typeof v === "number" && Number.isFinite(v) && v >= 0 ? v : 0);

/**
 * The server's token counts; its cost total stands (it knows the upstream price, the model's
 * models.json entry usually does not), while the parts are priced from the model as for any reply.
 */
function takeUsage(usage: Usage, raw: unknown): void {
  if (typeof raw !== "object" || raw === null) return;
  const u = raw as Record<string, unknown>;
  usage.input = count(u.input);
  usage.output = count(u.output);
  usage.cacheRead = count(u.cacheRead);
  usage.cacheWrite = count(u.cacheWrite);
  if (u.reasoning !== undefined) usage.reasoning = count(u.reasoning);
  if (u.cacheWrite1h !== undefined) usage.cacheWrite1h = count(u.cacheWrite1h);
  const total = (u.cost as { total?: unknown } | undefined)?.total;
  if (typeof total === "number" && Number.isFinite(total) && total >= 0) {
    usage.cost.total = total;
    usage.cost.totalFromProvider = true;
  }
}
