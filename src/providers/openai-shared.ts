import type OpenAI from "openai";
import { requestHeaders } from "./compat.ts";
import type { PushStream } from "./event-stream.ts";
import { runProviderStream } from "./lifecycle.ts";
import { sdkLogger } from "./sdk-warnings.ts";
import type { AssistantMessage, AssistantStream, LlmRequest } from "./types.ts";

export const IMAGE_OMITTED = "[image omitted: this model does not accept images]";

export interface StreamContext {
  client: OpenAI;
  msg: AssistantMessage;
  out: PushStream;
  signal: AbortSignal;
  /** Call on every received event: feeds the idle watchdog. */
  touch(): void;
}

/** Both OpenAI adapters: the shared provider lifecycle with an OpenAI client. */
export function runOpenAIStream(
  req: LlmRequest,
  signal: AbortSignal,
  consume: (ctx: StreamContext) => Promise<void>,
  /** Another client of the SDK (Azure's), made from the loaded module; default: the OpenAI client. */
  makeClient?: (sdk: typeof import("openai"), headers: Record<string, string>) => OpenAI,
): AssistantStream {
  return runProviderStream(req, signal, async (ctx) => {
    countReasoningApart(ctx.msg);
    // Loaded on first use: the SDK costs start-up time that sessions on other APIs never need.
    const sdk = await import("openai");
    ctx.touch();
    const headers = { ...requestHeaders(req), ...req.authHeaders };
    if (makeClient) return consume({ ...ctx, client: makeClient(sdk, headers) });
    const client = new sdk.default({
      // The SDK refuses to start without a key; keyless local servers ignore the placeholder.
      apiKey: req.apiKey || "no-key",
      baseURL: openaiBaseUrl(req.model.baseUrl),
      maxRetries: 0,
      defaultHeaders: headers,
      ...(req.fetch ? { fetch: req.fetch } : {}),
      // Otherwise the SDK reads OPENAI_ORG_ID / OPENAI_PROJECT_ID and sends them to any compatible server.
      organization: null,
      project: null,
      logger: sdkLogger,
    });
    await consume({ ...ctx, client });
  });
}

/** The usage of an OpenAI reply counts reasoning tokens apart, in the reference's key order. */
export function countReasoningApart(msg: AssistantMessage): void {
  const { input, output, cacheRead, cacheWrite, ...rest } = msg.usage;
  msg.usage = { input, output, cacheRead, cacheWrite, reasoning: 0, ...rest };
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

/** Our tool-call ids from the Responses API are `${call_id}|${item id}`; the call id is what the model pairs on. */
export const callIdOf = (toolCallId: string): string => toolCallId.split("|")[0]!;

export const dataUrl = (data: string, mimeType: string): string => `data:${mimeType};base64,${data}`;
