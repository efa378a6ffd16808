import { priceUsage } from "./cost.ts";
import { emptyAssistant, PushStream } from "./event-stream.ts";
import { describeRequestError } from "./errors.ts";
import { idleWatchdog, linkedController } from "./transform.ts";
import type { AssistantMessage, AssistantStream, LlmRequest } from "./types.ts";

export interface RunContext {
  msg: AssistantMessage;
  out: PushStream;
  /** Aborted by the caller's signal or by the idle watchdog. */
  signal: AbortSignal;
  /** Call when the request is sent and on every received event: feeds the idle watchdog. */
  touch(): void;
}

/**
 * The StreamFn contract every adapter shares: once started the stream never rejects;
 * `run` fills `msg` and throws on failure (including a stream that ends before its
 * finish event), which becomes stopReason "error" with the provider's message, or
 * "aborted" when the caller aborted. Usage is priced in every case.
 */
export function runProviderStream(req: LlmRequest, signal: AbortSignal, run: (ctx: RunContext) => Promise<void>): AssistantStream {
  const out = new PushStream();
  const msg = emptyAssistant(req.model);
  const controller = linkedController(signal);
  const watchdog = idleWatchdog(controller, req.idleTimeoutMs);
  void (async () => {
    try {
      await run({ msg, out, signal: controller.signal, touch: watchdog.touch });
    } catch (err) {
      msg.stopReason = signal.aborted ? "aborted" : "error";
      if (signal.aborted) msg.errorMessage = "The operation was aborted.";
      else msg.errorMessage = watchdog.fired() ? String(controller.signal.reason?.message) : describeRequestError(err, req.model.baseUrl);
    } finally {
      watchdog.stop();
      priceUsage(msg.usage, req.model);
      out.end(msg);
    }
  })();
  return out;
}
