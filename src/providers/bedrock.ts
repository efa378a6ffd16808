import type { ConverseStreamOutput, TokenUsage } from "@aws-sdk/client-bedrock-runtime";
import { bedrockInput } from "./bedrock-request.ts";
import { textBlockEnd, type PushStream } from "./event-stream.ts";
import { runProviderStream } from "./lifecycle.ts";
import { setToolArguments } from "./transform.ts";
import type { AssistantMessage, StopReason, StreamFn, ThinkingContent, ToolCall } from "./types.ts";

/**
 * Amazon Bedrock's Converse stream through `@aws-sdk/client-bedrock-runtime` (loaded on the first
 * request). Credentials come from the SDK's own chain (keys, profile, bearer token, ECS, IRSA);
 * the region from AWS_REGION / AWS_DEFAULT_REGION, else the SDK's profile. A base URL that is not
 * an amazonaws.com one replaces the endpoint (a VPC endpoint, a proxy, the tests' fake).
 */
export const streamBedrock: StreamFn = (req, signal) =>
  runProviderStream(req, signal, async ({ msg, out, signal, touch }) => {
    const { BedrockRuntimeClient, ConverseStreamCommand, NodeHttpHandler } = await import("./bedrock-sdk.ts");
    touch();
    const custom = req.model.baseUrl && !/\.amazonaws\.com(\/|$)/.test(req.model.baseUrl) ? { endpoint: req.model.baseUrl } : {};
    // HTTP/1.1: the client's default HTTP/2 handler is for the bidirectional API; Converse streams over either.
    const make = (region?: string) => new BedrockRuntimeClient({ ...(region ? { region } : {}), ...custom, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    const envRegion = process.env.AWS_REGION || process.env.AWS_DEFAULT_REGION;
    let client = make(envRegion);
    if (!envRegion) {
      // The SDK reads the profile's region; without one, the base URL's (the catalog's is us-east-1).
      const fromProfile = await client.config.region().catch(() => undefined);
      if (!fromProfile) {
        client.destroy();
        client = make(regionOf(req.model.baseUrl) ?? "us-east-1");
      }
    }
    try {
      const res = await client.send(new ConverseStreamCommand(bedrockInput(req)), { abortSignal: signal });
      const state = new EventState(msg, out);
      for await (const ev of res.stream ?? []) {
        touch();
        state.apply(ev);
        await out.backpressure();
      }
      state.finish();
    } catch (err) {
      throw readableError(err);
    } finally {
      client.destroy();
    }
  });

const regionOf = (url: string): string | undefined => /bedrock-runtime(?:-fips)?\.([a-z0-9-]+)\.amazonaws\.com/.exec(url)?.[1];

/** Statuses for the exceptions that arrive inside a 200 stream, so retry reads them as the HTTP ones. */
const STREAM_STATUS: Record<string, number> = {
  ThrottlingException: 429,
  ServiceUnavailableException: 503,
  ModelStreamErrorException: 503,
  InternalServerException: 500,
  ModelNotReadyException: 503,
  ModelTimeoutException: 408,
};

/** "<status> <ExceptionName>: <message>": the shape retry and overflow detection read. */
export function readableError(err: unknown): unknown {
  if (!(err instanceof Error) || err.name === "AbortError") return err;
  if (err.name === "CredentialsProviderError") return new Error(`AWS credentials: ${err.message} (AWS_PROFILE, AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY, AWS_BEARER_TOKEN_BEDROCK, …)`);
  const meta = (err as { $metadata?: { httpStatusCode?: number } }).$metadata;
  const http = meta?.httpStatusCode;
  const status = http && http >= 400 ? http : STREAM_STATUS[err.name];
  if (!status) return err;
  return new Error(`${status} ${err.name}: ${err.message}`);
}

interface Slot {
  index: number;
  json: string;
}

class EventState {
  /** Converse's contentBlockIndex -> our content index. */
  private slots = new Map<number, Slot>();
  private stop: string | undefined;

  constructor(
    private msg: AssistantMessage,
    private out: PushStream,
  ) {}

  apply(ev: ConverseStreamOutput): void {
    if (ev.contentBlockStart) {
      const tool = ev.contentBlockStart.start?.toolUse;
      if (tool) {
        const call: ToolCall = { type: "toolCall", id: tool.toolUseId ?? "", name: tool.name ?? "", arguments: {} };
        const index = this.msg.content.push(call) - 1;
        this.slots.set(ev.contentBlockStart.contentBlockIndex ?? 0, { index, json: "" });
        this.out.push({ type: "toolcall_start", contentIndex: index, id: call.id, toolName: call.name });
      }
    } else if (ev.contentBlockDelta) {
      const delta = ev.contentBlockDelta.delta;
      if (delta) this.applyDelta(ev.contentBlockDelta.contentBlockIndex ?? 0, delta);
    } else if (ev.contentBlockStop) {
      this.close(ev.contentBlockStop.contentBlockIndex ?? 0);
    } else if (ev.messageStop) {
      this.stop = ev.messageStop.stopReason;
      this.msg.rawStopReason = this.stop;
    } else if (ev.metadata?.usage) {
      this.applyUsage(ev.metadata.usage);
    }
  }

  private applyDelta(block: number, delta: NonNullable<NonNullable<ConverseStreamOutput["contentBlockDelta"]>["delta"]>): void {
    let slot = this.slots.get(block);
    if (delta.toolUse) {
      if (!slot) return;
      slot.json += delta.toolUse.input ?? "";
      this.out.push({ type: "toolcall_delta", contentIndex: slot.index, delta: delta.toolUse.input ?? "" });
      return;
    }
    const reasoning = delta.reasoningContent;
    const kind = reasoning ? "thinking" : delta.text !== undefined ? "text" : undefined;
    if (!kind) return;
    if (!slot) {
      const index = this.msg.content.push(kind === "thinking" ? { type: "thinking", thinking: "" } : { type: "text", text: "" }) - 1;
      slot = { index, json: "" };
      this.slots.set(block, slot);
      this.out.push({ type: kind === "thinking" ? "thinking_start" : "text_start", contentIndex: index });
    }
    const content = this.msg.content[slot.index]!;
    if (content.type === "text" && delta.text) {
      content.text += delta.text;
      this.out.push({ type: "text_delta", contentIndex: slot.index, delta: delta.text });
    } else if (content.type === "thinking" && reasoning) {
      if (reasoning.text) {
        content.thinking += reasoning.text;
        this.out.push({ type: "thinking_delta", contentIndex: slot.index, delta: reasoning.text });
      }
      if (reasoning.signature) content.thinkingSignature = (content.thinkingSignature ?? "") + reasoning.signature;
      if (reasoning.redactedContent) redact(content, reasoning.redactedContent);
    }
  }

  private close(block: number): void {
    const slot = this.slots.get(block);
    if (!slot) return;
    this.slots.delete(block);
    const c = this.msg.content[slot.index]!;
    const end = textBlockEnd(c, slot.index);
    if (end) this.out.push(end);
    else if (c.type === "toolCall") {
      setToolArguments(c, slot.json);
      this.out.push({ type: "toolcall_end", contentIndex: slot.index, toolCall: c });
    }
  }

  private applyUsage(u: TokenUsage): void {
    const usage = this.msg.usage;
    usage.input = u.inputTokens ?? 0;
    usage.output = u.outputTokens ?? 0;
    usage.cacheRead = u.cacheReadInputTokens ?? 0;
    usage.cacheWrite = u.cacheWriteInputTokens ?? 0;
    usage.totalTokens = u.totalTokens ?? usage.input + usage.output + usage.cacheRead + usage.cacheWrite;
  }

  finish(): void {
    for (const block of [...this.slots.keys()]) this.close(block);
    if (!this.stop) throw new Error("stream ended without messageStop");
    const stop = mapStop(this.stop);
    this.msg.stopReason = stop === "stop" && this.msg.content.some((c) => c.type === "toolCall") ? "toolUse" : stop;
    if (stop === "error") this.msg.errorMessage = `Bedrock stopped the response: ${this.stop}`;
  }
}

function redact(content: ThinkingContent, bytes: Uint8Array): void {
  content.redacted = true;
  content.thinkingSignature = Buffer.from(bytes).toString("base64");
}

function mapStop(reason: string): StopReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
      return "stop";
    case "tool_use":
      return "toolUse";
    case "max_tokens":
    case "model_context_window_exceeded":
      return "length";
    default:
      return "error";
  }
}
