import type OpenAI from "openai";
import type { ReasoningEffort } from "openai/resources/shared";
import { emptyAssistant, priceUsage, PushStream } from "./event-stream.ts";
import { describeProviderError } from "./errors.ts";
import { idleWatchdog, linkedController } from "./transform.ts";
import type { AssistantMessage, AssistantStream, LlmRequest, Model, ThinkingLevel } from "./types.ts";

export const IMAGE_OMITTED = "[image omitted: this model does not accept images]";

export interface StreamContext {
  client: OpenAI;
  msg: AssistantMessage;
  out: PushStream;
  signal: AbortSignal;
  /** Call on every received event: feeds the idle watchdog. */
  touch(): void;
}

/**
 * The lifecycle both OpenAI adapters share: client, idle watchdog, and the StreamFn
 * contract that failure is data. `consume` fills `msg` and must throw when the stream
 * ends before its finish event; the returned stream never rejects.
 */
export function runOpenAIStream(
  req: LlmRequest,
  signal: AbortSignal,
  consume: (ctx: StreamContext) => Promise<void>,
): AssistantStream {
  const out = new PushStream();
  const msg = emptyAssistant(req.model);
  const controller = linkedController(signal);
  const watchdog = idleWatchdog(controller, req.idleTimeoutMs);
  void (async () => {
    try {
      // Loaded on first use: the SDK costs start-up time that sessions on other APIs never need.
      const { default: OpenAISdk } = await import("openai");
      watchdog.touch();
      const client = new OpenAISdk({
        // The SDK refuses to start without a key; keyless local servers ignore the placeholder.
        apiKey: req.apiKey || "no-key",
        baseURL: openaiBaseUrl(req.model.baseUrl),
        maxRetries: 0,
        defaultHeaders: req.model.headers,
        // Otherwise the SDK reads OPENAI_ORG_ID / OPENAI_PROJECT_ID and sends them to any compatible server.
        organization: null,
        project: null,
      });
      await consume({ client, msg, out, signal: controller.signal, touch: watchdog.touch });
    } catch (err) {
      msg.stopReason = signal.aborted ? "aborted" : "error";
      if (signal.aborted) msg.errorMessage = "The operation was aborted.";
      else msg.errorMessage = watchdog.fired() ? String(controller.signal.reason?.message) : describeProviderError(err);
    } finally {
      watchdog.stop();
      priceUsage(msg.usage, req.model);
      out.end(msg);
    }
  })();
  return out;
}

/** The base URL as configured, except that a bare origin ("http://localhost:11434") gets "/v1". */
export function openaiBaseUrl(baseUrl: string): string {
  const trimmed = baseUrl.replace(/\/+$/, "");
  try {
    return new URL(trimmed).pathname === "/" ? `${trimmed}/v1` : trimmed;
  } catch {
    return trimmed;
  }
}

/** xhigh and max become "high" unless the model declares them. */
export function reasoningEffort(model: Model, level: Exclude<ThinkingLevel, "off">): ReasoningEffort {
  if (level === "xhigh" || level === "max") return model.thinkingLevels?.includes(level) ? "xhigh" : "high";
  return level;
}

/** Our tool-call ids from the Responses API are `${call_id}|${item id}`; the call id is what the model pairs on. */
export const callIdOf = (toolCallId: string): string => toolCallId.split("|")[0]!;

export const dataUrl = (data: string, mimeType: string): string => `data:${mimeType};base64,${data}`;
