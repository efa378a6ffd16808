/**
 * Scripted replies -> Bedrock ConverseStream's `application/vnd.amazon.eventstream` body: binary
 * messages (total length, headers length, prelude CRC32, headers, JSON payload, message CRC32),
 * each an event named by its `:event-type` header. The AWS SDK checks both CRCs.
 */
import type { StreamPlan } from "./encoders.ts";

const enc = new TextEncoder();

function header(name: string, value: string): Uint8Array {
  const n = enc.encode(name);
  const v = enc.encode(value);
  const out = new Uint8Array(1 + n.length + 1 + 2 + v.length);
  const view = new DataView(out.buffer);
  out[0] = n.length;
  out.set(n, 1);
  out[1 + n.length] = 7; // string
  view.setUint16(2 + n.length, v.length);
  out.set(v, 4 + n.length);
  return out;
}

/** One event-stream message with string headers and a JSON payload. */
export function eventMessage(headers: Record<string, string>, payload: unknown): Uint8Array {
  const hs = Object.entries(headers).map(([k, v]) => header(k, v));
  const headersLength = hs.reduce((n, h) => n + h.length, 0);
  const body = enc.encode(JSON.stringify(payload));
  const total = 12 + headersLength + body.length + 4;
  const out = new Uint8Array(total);
  const view = new DataView(out.buffer);
  view.setUint32(0, total);
  view.setUint32(4, headersLength);
  view.setUint32(8, Bun.hash.crc32(out.subarray(0, 8)));
  let at = 12;
  for (const h of hs) {
    out.set(h, at);
    at += h.length;
  }
  out.set(body, at);
  view.setUint32(total - 4, Bun.hash.crc32(out.subarray(0, total - 4)));
  return out;
}

const event = (type: string, payload: unknown) => eventMessage({ ":event-type": type, ":content-type": "application/json", ":message-type": "event" }, payload);

const deltasOf = (text: string | string[]): string[] => (typeof text === "string" ? [text] : text);

export function encodeBedrock(plan: StreamPlan): Uint8Array[] {
  const frames: Uint8Array[] = [event("messageStart", { p: "abc", role: "assistant" })];
  plan.blocks.forEach((b, i) => {
    const contentBlockIndex = i;
    if (b.type === "text") {
      for (const d of deltasOf(b.text)) frames.push(event("contentBlockDelta", { contentBlockIndex, delta: { text: d }, p: "x" }));
    } else if (b.type === "thinking") {
      for (const d of deltasOf(b.thinking)) frames.push(event("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { text: d } }, p: "x" }));
      if (b.signature) frames.push(event("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { signature: b.signature } }, p: "x" }));
    } else if (b.type === "redacted_thinking") {
      frames.push(event("contentBlockDelta", { contentBlockIndex, delta: { reasoningContent: { redactedContent: b.data } }, p: "x" }));
    } else {
      frames.push(event("contentBlockStart", { contentBlockIndex, start: { toolUse: { toolUseId: b.id ?? `tooluse_${i}`, name: b.name } }, p: "x" }));
      const text = typeof b.arguments === "string" ? b.arguments : JSON.stringify(b.arguments);
      frames.push(event("contentBlockDelta", { contentBlockIndex, delta: { toolUse: { input: text } }, p: "x" }));
    }
    frames.push(event("contentBlockStop", { contentBlockIndex, p: "x" }));
  });
  if (plan.error) {
    const type = plan.error.errorType ?? "modelStreamErrorException";
    frames.push(eventMessage({ ":exception-type": type, ":content-type": "application/json", ":message-type": "exception" }, { message: plan.error.message }));
    return frames;
  }
  const stopReason = plan.finishReason ?? { stop: "end_turn", length: "max_tokens", toolUse: "tool_use" }[plan.stopReason];
  frames.push(event("messageStop", { stopReason, p: "x" }));
  const { usage } = plan;
  frames.push(
    event("metadata", {
      usage: {
        inputTokens: usage.input,
        outputTokens: usage.output,
        cacheReadInputTokens: usage.cacheRead,
        cacheWriteInputTokens: usage.cacheWrite,
        totalTokens: usage.input + usage.output + usage.cacheRead + usage.cacheWrite,
      },
      metrics: { latencyMs: 12 },
      p: "x",
    }),
  );
  return frames;
}

/** HTTP errors as Bedrock's REST-JSON protocol sends them: the exception's name in `x-amzn-errortype`. */
export function bedrockErrorResponse(status: number, message: string, errorType?: string, headers?: Record<string, string>): Response {
  const type = errorType ?? BEDROCK_ERRORS[status] ?? "InternalServerException";
  return Response.json({ message }, { status, headers: { "x-amzn-errortype": `${type}:http://internal.amazon.com/coral/com.amazon.bedrock/`, "x-amzn-requestid": crypto.randomUUID(), ...headers } });
}

const BEDROCK_ERRORS: Record<number, string> = {
  400: "ValidationException",
  403: "AccessDeniedException",
  404: "ResourceNotFoundException",
  408: "ModelTimeoutException",
  424: "ModelErrorException",
  429: "ThrottlingException",
  500: "InternalServerException",
  503: "ServiceUnavailableException",
};
