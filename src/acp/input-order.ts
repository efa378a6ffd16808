/**
 * The editor's input in the order and to the end it was sent. The SDK's connection handles
 * messages concurrently and closes at once when stdin ends; over it, two rules hold:
 *
 * - `initialize` is answered before the messages after it are handled, so a client that
 *   writes `session/new` without waiting for the answer is not refused as uninitialized.
 * - When the editor closes pion's stdin, the connection ends only after every request read
 *   before then was answered (a prompt runs to its end, as in RPC mode). Nothing pion asks
 *   the editor can be answered any more: each request pion sends then (or had sent and still
 *   waits on: a permission, a file read) gets an error response at once, so a run that needs
 *   one goes on without it instead of waiting forever.
 */
import type * as acp from "@agentclientprotocol/sdk";

type Id = acp.AnyRequest["id"];

/** The JSON-RPC error answered in the editor's place once its input has ended. */
const INPUT_CLOSED = { code: -32603, message: "The client closed pion's input: it can no longer answer requests" };

const keyOf = (id: Id) => JSON.stringify(id);
const isId = (id: unknown): id is Id => id === null || typeof id === "string" || (typeof id === "number" && Number.isFinite(id));
/** A request as the SDK tells one (anything else it answers at once with an `id: null` error). */
const isRequest = (m: acp.AnyMessage): m is acp.AnyRequest =>
  m.jsonrpc === "2.0" && "method" in m && typeof m.method === "string" && "id" in m && isId(m.id);
const isResponse = (m: acp.AnyMessage): m is acp.AnyResponse => !("method" in m) && "id" in m && isId(m.id);

/** `stream` (the SDK's ndJsonStream over stdio) under the two rules above. */
export function orderInput(stream: acp.Stream): acp.Stream {
  /** Requests the editor sent that pion has not answered yet, by id (an editor may reuse one). */
  const unanswered = new Map<string, number>();
  /** Requests pion sent that the editor has not answered yet. */
  const asked = new Map<string, Id>();
  /** Called when pion answers the request of that id (the `initialize` input waits on). */
  const onAnswer = new Map<string, () => void>();
  let inbound!: ReadableStreamDefaultController<acp.AnyMessage>;
  let cancelInput = (_reason: unknown): Promise<void> => Promise.resolve();
  let ended = false;
  let closed = false;

  const answered = (key: string): void => {
    const n = unanswered.get(key) ?? 0;
    if (n > 1) unanswered.set(key, n - 1);
    else unanswered.delete(key);
    onAnswer.get(key)?.();
    onAnswer.delete(key);
    if (ended && !closed && unanswered.size === 0) {
      closed = true;
      inbound.close();
    }
  };
  const answerForEditor = (id: Id) => inbound.enqueue({ jsonrpc: "2.0", id, error: INPUT_CLOSED });

  const readable = new ReadableStream<acp.AnyMessage>({
    async start(controller) {
      inbound = controller;
      const reader = stream.readable.getReader();
      cancelInput = (reason) => reader.cancel(reason);
      try {
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          if (isResponse(value)) asked.delete(keyOf(value.id));
          if (!isRequest(value)) {
            controller.enqueue(value);
            continue;
          }
          const key = keyOf(value.id);
          unanswered.set(key, (unanswered.get(key) ?? 0) + 1);
          const answer = value.method === "initialize" ? new Promise<void>((r) => onAnswer.set(key, r)) : undefined;
          controller.enqueue(value);
          await answer;
        }
      } catch (err) {
        closed = true;
        controller.error(err);
        return;
      } finally {
        reader.releaseLock();
      }
      ended = true;
      for (const id of asked.values()) answerForEditor(id);
      asked.clear();
      if (unanswered.size === 0) {
        closed = true;
        controller.close();
      }
    },
    cancel: (reason) => cancelInput(reason),
  });

  const out = stream.writable.getWriter();
  const writable = new WritableStream<acp.AnyMessage>({
    async write(message) {
      if (isRequest(message)) {
        if (ended) {
          if (!closed) answerForEditor(message.id);
          return;
        }
        asked.set(keyOf(message.id), message.id);
      }
      await out.write(message);
      if (isResponse(message)) answered(keyOf(message.id));
    },
    close: () => out.close(),
    abort: (reason) => out.abort(reason),
  });

  return { readable, writable };
}
