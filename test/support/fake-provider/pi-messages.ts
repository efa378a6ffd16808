/**
 * Scripted replies -> a pi-messages server's SSE stream: the reference's assistant-message events
 * (`start`, `text_*`, `thinking_*`, `toolcall_*`), each as `event: <type>` + `data: <JSON>`, ending
 * with `done` (stop reason, usage, response id) or, for a stream error, `error`.
 */
import { deltasOf, fragmentsOf, joined, randomId, sse, type Frame, type StreamPlan } from "./encoders.ts";

const ev = (data: Record<string, unknown> & { type: string }): Frame => sse(data.type, data);

/** The reference's Usage: the plan's tokens; cost parts zero, the total OpenRouter-style `billing.cost` when given. */
function usageOf(plan: StreamPlan): Record<string, unknown> {
  const u = plan.usage;
  const total = typeof u.billing?.cost === "number" ? u.billing.cost : 0;
  return {
    input: u.input,
    output: u.output,
    cacheRead: u.cacheRead,
    cacheWrite: u.cacheWrite,
    totalTokens: u.input + u.output + u.cacheRead + u.cacheWrite,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total },
  };
}

function parsedArguments(text: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function encodePiMessages(plan: StreamPlan): Frame[] {
  const frames: Frame[] = [ev({ type: "start" })];
  plan.blocks.forEach((b, contentIndex) => {
    if (b.type === "text") {
      frames.push(ev({ type: "text_start", contentIndex }));
      for (const delta of deltasOf(b.text)) frames.push(ev({ type: "text_delta", contentIndex, delta }));
      frames.push(ev({ type: "text_end", contentIndex, content: joined(b.text) }));
    } else if (b.type === "thinking") {
      frames.push(ev({ type: "thinking_start", contentIndex }));
      for (const delta of deltasOf(b.thinking)) frames.push(ev({ type: "thinking_delta", contentIndex, delta }));
      frames.push(ev({ type: "thinking_end", contentIndex, content: joined(b.thinking), ...(b.signature ? { contentSignature: b.signature } : {}) }));
    } else if (b.type === "redacted_thinking") {
      frames.push(ev({ type: "thinking_start", contentIndex }), ev({ type: "thinking_end", contentIndex, content: "", contentSignature: b.data, redacted: true }));
    } else {
      const id = b.id ?? randomId("call_", 24);
      frames.push(ev({ type: "toolcall_start", contentIndex, id, toolName: b.name }));
      const parts = fragmentsOf(b);
      for (const delta of parts) frames.push(ev({ type: "toolcall_delta", contentIndex, delta }));
      // Arguments that are not a JSON object go without a finished call: the client parses the streamed text.
      const args = parsedArguments(parts.join(""));
      frames.push(ev({ type: "toolcall_end", contentIndex, ...(args ? { toolCall: { type: "toolCall", id, name: b.name, arguments: args } } : {}) }));
    }
  });
  if (plan.error) {
    frames.push(ev({ type: "error", reason: "error", errorMessage: plan.error.message, usage: usageOf(plan), ...(plan.error.errorType ? { code: plan.error.errorType } : {}) }));
    return frames;
  }
  frames.push(ev({ type: "done", reason: plan.stopReason, usage: usageOf(plan), responseId: randomId("resp_", 24), responseModel: plan.model }));
  return frames;
}

/** A pi-messages server's error body: `{error: {message, code}}` (the code when the script names one). */
export const piMessagesErrorBody = (message: string, code: string | undefined) => ({ error: { message, ...(code ? { code } : {}) } });
