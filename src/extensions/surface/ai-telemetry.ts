/**
 * pi-ai's request telemetry: `AI_TELEMETRY_SCHEMA` (the span, event and metric vocabulary, as the
 * reference names and types it) and the observer `Models` requests report to when the caller
 * passes a parent span in `options.telemetry` (pi-telemetry's `TelemetrySpan` contract: a
 * `startSpan(options, callback)` whose callback gets a span with `addEvent`, `setAttributes`,
 * `setStatus`, and optionally `metrics` with `counter`/`histogram` instruments).
 *
 * One request is one `pi.ai.request` span (a deferred poll one `pi.ai.poll`) that starts before
 * auth and ends with the final message: its start attributes name the model, its end attributes
 * carry the stop reason, usage, cost and response id; `pi.ai.first_chunk` marks the first event
 * and `pi.ai.block` each finished block by kind, index and length. No text, reasoning or
 * argument ever goes into telemetry; an error's message is cut to 500 characters. Without
 * `options.telemetry` nothing is observed at all.
 */
import type { AssistantMessage, Model } from "../../providers/types.ts";

type Attr = { type: "string" | "number"; description: string; required?: boolean; values?: readonly string[]; cardinality?: "high" };

const provider: Attr = { type: "string", description: "The model's provider id.", required: true };
const model: Attr = { type: "string", description: "The id of the model asked for.", required: true };
const stop: Attr = {
  type: "string",
  description: "How the response ended (pi-ai's stop reason).",
  values: ["pending", "stop", "length", "toolUse", "error", "aborted", "deferred"],
};

const request = {
  description: "One model request as the caller sees it, auth and provider set-up included.",
  parents: { kind: "any" },
  startAttributes: {
    provider,
    api: { type: "string", description: "The API the request speaks.", required: true },
    model,
    reasoning: { type: "string", description: "The reasoning level asked for, when given as a level name.", required: false },
  },
  endAttributes: {
    stop,
    "usage.input": { type: "number", description: "Input tokens not read from the cache." },
    "usage.output": { type: "number", description: "Output tokens." },
    "usage.cache_read": { type: "number", description: "Input tokens read from the cache." },
    "usage.cache_write": { type: "number", description: "Input tokens written to the cache." },
    "cost.total": { type: "number", description: "What the request cost, in US dollars." },
    "response.id": { type: "string", description: "The provider's id for the response.", cardinality: "high" },
  },
  events: {
    "pi.ai.first_chunk": { description: "The first stream event reached the caller.", attributes: {} },
    "pi.ai.block": {
      description: "A content block finished; only its kind and size are recorded, never its content.",
      attributes: {
        type: { type: "string", description: "What kind of block.", values: ["text", "thinking", "tool_call"], required: true },
        index: { type: "number", description: "The block's position in the message.", required: true },
        chars: { type: "number", description: "Its length in UTF-16 code units.", required: true },
        tool: { type: "string", description: "The tool called (tool-call blocks only).", required: false },
      },
    },
  },
  status: {
    default: "ok",
    errorWhen: "The stop reason is error: error name provider_error, message the first 500 characters of the error message. An aborted request stays ok.",
  },
} as const;

/** pi-ai's telemetry vocabulary (version 1): what `Models` requests report. */
export const AI_TELEMETRY_SCHEMA = {
  version: 1,
  spans: {
    "pi.ai.request": request,
    "pi.ai.poll": { ...request, description: "One poll of a deferred response (not the deferred request as a whole)." },
  },
  metrics: {
    "pi.ai.request.duration": {
      kind: "histogram",
      description: "How long a request or poll took.",
      unit: "ms",
      attributes: { provider, model, stop: { ...stop, required: true } },
    },
    "pi.ai.first_chunk.duration": {
      kind: "histogram",
      description: "How long until the first stream event.",
      unit: "ms",
      attributes: { provider, model },
    },
    "pi.ai.tokens": {
      kind: "counter",
      description: "Tokens the provider reported; pending and deferred polls add none.",
      unit: "token",
      attributes: {
        provider,
        model,
        kind: { type: "string", description: "Which count.", values: ["input", "output", "cache_read", "cache_write"], required: true },
      },
    },
    "pi.ai.cost": {
      kind: "counter",
      description: "What requests cost; pending and deferred polls add none.",
      unit: "USD",
      attributes: { provider, model },
    },
  },
} as const;

type Attributes = Record<string, string | number | undefined>;
type Span = {
  addEvent(name: string, attributes?: Attributes): void;
  setAttributes(attributes: Attributes): void;
  setStatus(status: { status: "ok" } | { status: "error"; error?: { name: string; message: string } }): void;
};
type Counter = { add(value: number, attributes?: Attributes, context?: unknown): void };
type Histogram = { record(value: number, attributes?: Attributes, context?: unknown): void };
type MetricsAdapter = { counter(name: string, definition?: unknown): Counter; histogram(name: string, definition?: unknown): Histogram };
/** A parent span (or any telemetry context) as a caller passes it in `options.telemetry`. */
export type TelemetryParent = { metrics?: MetricsAdapter; startSpan(options: { name: string; attributes?: Attributes }, callback: (span: Span) => unknown): unknown };

type Instruments = { requestDuration: Histogram; firstChunkDuration: Histogram; tokens: Counter; cost: Counter };
const NO_INSTRUMENTS: Instruments = { requestDuration: { record() {} }, firstChunkDuration: { record() {} }, tokens: { add() {} }, cost: { add() {} } };
const instruments = new WeakMap<MetricsAdapter, Instruments>();

/** Each metrics adapter's instruments, made once (with the schema's definition, as typed metrics pass it). */
function instrumentsOf(adapter: MetricsAdapter | undefined): Instruments {
  if (!adapter) return NO_INSTRUMENTS;
  let found = instruments.get(adapter);
  if (!found) {
    const def = (name: keyof typeof AI_TELEMETRY_SCHEMA.metrics) => AI_TELEMETRY_SCHEMA.metrics[name];
    found = {
      requestDuration: adapter.histogram("pi.ai.request.duration", def("pi.ai.request.duration")),
      firstChunkDuration: adapter.histogram("pi.ai.first_chunk.duration", def("pi.ai.first_chunk.duration")),
      tokens: adapter.counter("pi.ai.tokens", def("pi.ai.tokens")),
      cost: adapter.counter("pi.ai.cost", def("pi.ai.cost")),
    };
    instruments.set(adapter, found);
  }
  return found;
}

type StreamEvent = Record<string, unknown> & { type: string };
export interface RequestObserver {
  onEvent(e: StreamEvent): void;
  onResult(m: AssistantMessage | undefined): void;
}

/**
 * The observer of one `Models` request (a poll when `poll`), or undefined when the call passed no
 * `options.telemetry`. The span is started now and held open until `onResult`; an adapter that
 * hands over the span late gets what happened before it replayed in order.
 */
export function observeModelRequest(requested: Pick<Model, "provider" | "id" | "api">, call: object | undefined, poll: boolean): RequestObserver | undefined {
  const options = call as { telemetry?: unknown; reasoning?: unknown } | undefined;
  const parent = options?.telemetry as TelemetryParent | undefined;
  if (!parent || typeof parent.startSpan !== "function") return undefined;
  const started = performance.now();
  const base = { provider: requested.provider, model: requested.id };
  const { requestDuration, firstChunkDuration, tokens, cost } = instrumentsOf(parent.metrics);

  let span: Span | undefined;
  const waiting: ((s: Span) => void)[] = [];
  const withSpan = (fn: (s: Span) => void) => (span ? fn(span) : waiting.push(fn));
  let settle!: () => void;
  const settled = new Promise<void>((resolve) => (settle = resolve));
  const startAttributes: Attributes = { ...base, api: requested.api, ...(typeof options?.reasoning === "string" ? { reasoning: options.reasoning } : {}) };
  void Promise.resolve(
    parent.startSpan({ name: poll ? "pi.ai.poll" : "pi.ai.request", attributes: startAttributes }, (s) => {
      span = s;
      for (const fn of waiting.splice(0)) fn(s);
      return settled;
    }),
  ).catch(() => undefined);

  let first = true;
  const toolChars = new Map<number, number>();
  return {
    onEvent(e) {
      if (first) {
        first = false;
        const ms = performance.now() - started;
        withSpan((s) => {
          s.addEvent("pi.ai.first_chunk");
          firstChunkDuration.record(ms, base, s);
        });
      }
      const index = e.contentIndex as number;
      if (e.type === "toolcall_delta") {
        toolChars.set(index, (toolChars.get(index) ?? 0) + String(e.delta ?? "").length);
      } else if (e.type === "text_end" || e.type === "thinking_end") {
        const block = { type: e.type === "text_end" ? "text" : "thinking", index, chars: String(e.content ?? "").length };
        withSpan((s) => s.addEvent("pi.ai.block", block));
      } else if (e.type === "toolcall_end") {
        const block = { type: "tool_call", index, chars: toolChars.get(index) ?? 0, tool: (e.toolCall as { name?: string } | undefined)?.name };
        toolChars.delete(index);
        withSpan((s) => s.addEvent("pi.ai.block", block));
      }
    },
    onResult(m) {
      if (m) {
        const ms = performance.now() - started;
        withSpan((s) => {
          s.setAttributes({
            stop: m.stopReason,
            "usage.input": m.usage.input,
            "usage.output": m.usage.output,
            "usage.cache_read": m.usage.cacheRead,
            "usage.cache_write": m.usage.cacheWrite,
            "cost.total": m.usage.cost.total,
            "response.id": m.responseId,
          });
          if (m.stopReason === "error") s.setStatus({ status: "error", error: { name: "provider_error", message: (m.errorMessage ?? "").slice(0, 500) } });
          requestDuration.record(ms, { ...base, stop: m.stopReason }, s);
        });
        const stopReason = m.stopReason as string;
        if (!poll || (stopReason !== "pending" && stopReason !== "deferred")) {
          tokens.add(m.usage.input, { ...base, kind: "input" });
          tokens.add(m.usage.output, { ...base, kind: "output" });
          tokens.add(m.usage.cacheRead, { ...base, kind: "cache_read" });
          tokens.add(m.usage.cacheWrite, { ...base, kind: "cache_write" });
          cost.add(m.usage.cost.total, base);
        }
      }
      withSpan(() => settle());
    },
  };
}
