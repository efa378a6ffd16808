/**
 * pi-ai's push streams for extensions: `EventStream<T, R>` (a producer calls `push` and `end`,
 * any number of consumers iterate, `result()` resolves with R) and its assistant-message form,
 * which is what a custom provider's `streamSimple` returns and what pion's own model calls
 * (model-calls.ts) hand to extensions. Both satisfy pion's `AssistantStream` shape, so pion
 * consumes them like a stream of its own providers.
 *
 * Semantics, as the reference's: an event that `isComplete` accepts settles `result()` with
 * `extractResult(event)` and is still delivered; every push after it is dropped. `end(result)`
 * stops the stream (settling `result()` only when given one); iterators then drain what is
 * queued and finish. Each event goes to one consumer: the longest-waiting, else the queue.
 */
import type { AssistantMessage, AssistantMessageEvent } from "../../providers/types.ts";
import { ToolCallArgumentsStream } from "./ai-utils-streaming-json.ts";

type Waiter<T> = (r: IteratorResult<T>) => void;

export class EventStream<T, R = T> implements AsyncIterable<T> {
  private queue: T[] = [];
  private head = 0;
  private waiting: Waiter<T>[] = [];
  protected done = false;
  private final: Promise<R>;
  private settle!: (r: R) => void;

  constructor(
    private readonly isComplete: (event: T) => boolean,
    private readonly extractResult: (event: T) => R,
  ) {
    this.final = new Promise<R>((resolve) => (this.settle = resolve));
  }

  push(event: T): void {
    if (this.done) return;
    if (this.isComplete(event)) {
      this.done = true;
      this.settle(this.extractResult(event));
    }
    const waiter = this.waiting.shift();
    if (waiter) waiter({ value: event, done: false });
    else this.queue.push(event);
  }

  end(result?: R): void {
    this.done = true;
    if (result !== undefined) this.settle(result);
    for (const waiter of this.waiting.splice(0)) waiter({ value: undefined, done: true });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<T> {
    for (;;) {
      if (this.head < this.queue.length) {
        const event = this.queue[this.head++]!;
        if (this.head === this.queue.length) {
          this.queue = [];
          this.head = 0;
        }
        yield event;
      } else if (this.done) return;
      else {
        const next = await new Promise<IteratorResult<T>>((resolve) => this.waiting.push(resolve));
        if (next.done) return;
        yield next.value;
      }
    }
  }

  result(): Promise<R> {
    return this.final;
  }
}

/** The events of one assistant response: pion's deltas plus the reference's `start`, `done` and `error`. */
export type AssistantEvent = { type: string; message?: AssistantMessage; error?: AssistantMessage } & Record<string, unknown>;

type Timed = AssistantMessage & { durationMs?: number };

/**
 * The stream of one assistant response. The final message (of `done`, `error` or `end(message)`)
 * gets `durationMs`, monotonic milliseconds since the stream was made, unless it already has
 * one or its `timestamp` is older than the stream (a response that began elsewhere).
 */
export class AssistantMessageEventStream extends EventStream<AssistantEvent, AssistantMessage> {
  readonly #createdAt = Date.now();
  readonly #createdAtMonotonic = performance.now();

  constructor() {
    super(
      (e) => e.type === "done" || e.type === "error",
      (e) => {
        if (e.type === "done") return e.message!;
        if (e.type === "error") return e.error!;
        throw new Error("Unexpected event type for final result");
      },
    );
  }

  override push(event: AssistantEvent): void {
    if (event.type === "done" && event.message) this.#time(event.message);
    else if (event.type === "error" && event.error) this.#time(event.error);
    super.push(event);
  }

  override end(result?: AssistantMessage): void {
    if (result !== undefined) this.#time(result);
    super.end(result);
  }

  #time(message: Timed): void {
    if (this.done || message.durationMs !== undefined || message.timestamp < this.#createdAt) return;
    message.durationMs = Math.max(0, Math.round(performance.now() - this.#createdAtMonotonic));
  }
}

export const createAssistantMessageEventStream = (): AssistantMessageEventStream => new AssistantMessageEventStream();

/**
 * The reference's `partial` of an assistant stream, rebuilt from pion's delta events: `apply`
 * returns the message so far as a new object (earlier ones stay as they were), a tool call's
 * arguments read as far as they have come.
 */
export class PartialAssistant {
  readonly #args = new Map<number, ToolCallArgumentsStream>();

  constructor(public message: AssistantMessage) {}

  apply(e: AssistantMessageEvent): AssistantMessage {
    const content = [...this.message.content];
    const i = e.contentIndex;
    const b = content[i];
    switch (e.type) {
      case "text_start":
        content[i] = { type: "text", text: "" };
        break;
      case "thinking_start":
        content[i] = { type: "thinking", thinking: "" };
        break;
      case "toolcall_start":
        content[i] = { type: "toolCall", id: e.id, name: e.toolName, arguments: {} };
        this.#args.set(i, new ToolCallArgumentsStream());
        break;
      case "text_delta":
        if (b?.type === "text") content[i] = { ...b, text: b.text + e.delta };
        break;
      case "thinking_delta":
        if (b?.type === "thinking") content[i] = { ...b, thinking: b.thinking + e.delta };
        break;
      case "toolcall_delta": {
        const args = this.#args.get(i);
        if (b?.type !== "toolCall" || !args) break;
        content[i] = { ...b, arguments: args.append(e.delta) };
        break;
      }
      case "text_end":
        content[i] = { ...(b?.type === "text" ? b : { type: "text" as const }), text: e.content };
        break;
      case "thinking_end":
        content[i] = { ...(b?.type === "thinking" ? b : { type: "thinking" as const }), thinking: e.content };
        break;
      case "toolcall_end":
        this.#args.delete(i);
        content[i] = e.toolCall;
        break;
    }
    this.message = { ...this.message, content };
    return this.message;
  }
}
