import type { AssistantMessage, AssistantMessageEvent, AssistantStream, Cost, LlmRequest, Model, Usage } from "./types.ts";

/**
 * A push-driven AssistantStream: the producer calls push()/end(), consumers iterate. The event
 * and result types are parameters so the reference's event shapes (pi-ai's streams, for
 * extensions) use the same queue.
 */
export class PushStream<E = AssistantMessageEvent, R = AssistantMessage> {
  private queue: E[] = [];
  private head = 0;
  private waiting: ((r: IteratorResult<E>) => void) | null = null;
  private drained: (() => void) | null = null;
  private done = false;
  private final: Promise<R>;
  private resolveFinal!: (m: R) => void;

  constructor() {
    this.final = new Promise((r) => (this.resolveFinal = r));
  }

  push(ev: E): void {
    if (this.done) return;
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      w({ value: ev, done: false });
    } else this.queue.push(ev);
  }

  end(message: R): void {
    if (this.done) return;
    this.done = true;
    if (this.drained) {
      const d = this.drained;
      this.drained = null;
      d();
    }
    this.resolveFinal(message);
    const w = this.waiting;
    if (w) {
      this.waiting = null;
      w({ value: undefined, done: true });
    }
  }

  result(): Promise<R> {
    return this.final;
  }

  /**
   * Producer-side backpressure: resolves once the consumer has taken all but `low` of the
   * queued events. A provider that reads a fast local stream awaits it between network
   * chunks, so events do not pile up in memory ahead of a slower consumer.
   */
  async backpressure(high = 512): Promise<void> {
    while (this.queue.length - this.head > high && !this.done) {
      await new Promise<void>((r) => (this.drained = r));
    }
  }

  [Symbol.asyncIterator](): AsyncIterator<E> {
    return {
      next: () => {
        if (this.head < this.queue.length) {
          const ev = this.queue[this.head++]!;
          if (this.head === this.queue.length) {
            this.queue = [];
            this.head = 0;
          }
          if (this.drained && this.queue.length - this.head <= 64) {
            const d = this.drained;
            this.drained = null;
            d();
          }
          return Promise.resolve({ value: ev, done: false });
        }
        if (this.drained) {
          const d = this.drained;
          this.drained = null;
          d();
        }
        if (this.done) return Promise.resolve({ value: undefined, done: true });
        return new Promise((r) => (this.waiting = r));
      },
    };
  }
}

export const zeroCost = (): Cost => ({ input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 });

export const emptyUsage = (): Usage => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: zeroCost(),
});

export function emptyAssistant(model: Model): AssistantMessage {
  return {
    role: "assistant",
    content: [],
    api: model.api,
    provider: model.provider,
    model: model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
}

/**
 * Add one model call's usage (tokens and cost) to a running total that started as `emptyUsage()`.
 * `cacheWrite1h` is summed once either side has it; the total is provider-reported
 * (`totalFromProvider`) only when every usage added was, and says nothing until one is added.
 */
export function addUsage(total: Usage, u: Usage): void {
  total.input += u.input;
  total.output += u.output;
  total.cacheRead += u.cacheRead;
  total.cacheWrite += u.cacheWrite;
  total.totalTokens += u.totalTokens;
  if (u.reasoning !== undefined || total.reasoning !== undefined) total.reasoning = (total.reasoning ?? 0) + (u.reasoning ?? 0);
  total.cost.input += u.cost.input;
  total.cost.output += u.cost.output;
  total.cost.cacheRead += u.cost.cacheRead;
  total.cost.cacheWrite += u.cost.cacheWrite;
  total.cost.total += u.cost.total;
  total.cost.totalFromProvider = (total.cost.totalFromProvider ?? true) && u.cost.totalFromProvider === true;
  if (total.cacheWrite1h !== undefined || u.cacheWrite1h !== undefined) total.cacheWrite1h = (total.cacheWrite1h ?? 0) + (u.cacheWrite1h ?? 0);
}

/** A stream that is over before it starts: one assistant message with stopReason "error" and `message`. */
export function failedStream(req: LlmRequest, message: string): AssistantStream {
  const out = new PushStream();
  const msg = emptyAssistant(req.model);
  msg.stopReason = "error";
  msg.errorMessage = message;
  out.end(msg);
  return out;
}

/**
 * A stream that is made later (`make` resolves with it): its events and result are the made
 * stream's, read straight from it (its backpressure holds); a rejection is a failed stream.
 */
export function laterStream(req: LlmRequest, make: Promise<AssistantStream>, failure: (err: unknown) => string): AssistantStream {
  const made = make.catch((err: unknown) => failedStream(req, failure(err)));
  return {
    [Symbol.asyncIterator]() {
      let it: AsyncIterator<AssistantMessageEvent> | undefined;
      return {
        next: () => (it ? it.next() : made.then((s) => (it = s[Symbol.asyncIterator]()).next())),
      };
    },
    result: () => made.then((s) => s.result()),
  };
}

/** The `*_end` event of a finished text or thinking block; undefined for a tool call, whose arguments each adapter assembles itself. */
export function textBlockEnd(block: AssistantMessage["content"][number], contentIndex: number): AssistantMessageEvent | undefined {
  if (block.type === "text") return { type: "text_end", contentIndex, content: block.text };
  if (block.type === "thinking") return { type: "thinking_end", contentIndex, content: block.thinking };
  return undefined;
}
