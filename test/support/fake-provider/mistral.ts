/**
 * Scripted replies -> Mistral chat completion chunks, as `api.mistral.ai/v1/chat/completions`
 * streams them: `data:` events whose choice deltas carry text as a string, thinking as a
 * `thinking` content part of text parts, each tool call whole (a nine-character id, its
 * arguments as one JSON string unless `fragments` splits them), and the finish reason together
 * with the usage on the last chunk before `data: [DONE]`. Served under `/mistral/…/chat/completions`
 * (the path is otherwise OpenAI's).
 */
import type { Frame, StreamPlan } from "./encoders.ts";
import { randomId } from "./encoders.ts";

const dataOnly = (data: unknown): Frame => `data: ${JSON.stringify(data)}\n\n`;
const deltasOf = (text: string | string[]): string[] => (typeof text === "string" ? [text] : text);

/** A tool call id of the shape Mistral hands out (and requires back): nine letters or digits. */
export const mistralCallId = (): string => randomId("", 9);

export function encodeMistral(plan: StreamPlan): Frame[] {
  const base = { id: crypto.randomUUID().replaceAll("-", ""), object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model: plan.model };
  const chunk = (delta: Record<string, unknown>, extra: Record<string, unknown> = {}): Frame =>
    dataOnly({ ...base, choices: [{ index: 0, delta, finish_reason: null, ...extra }] });
  const frames: Frame[] = [chunk({ role: "assistant", content: "" })];
  let toolIndex = 0;
  for (const b of plan.blocks) {
    if (b.type === "text") {
      for (const content of deltasOf(b.text)) frames.push(chunk({ content }));
    } else if (b.type === "thinking") {
      for (const text of deltasOf(b.thinking)) frames.push(chunk({ content: [{ type: "thinking", thinking: [{ type: "text", text }] }] }));
    } else if (b.type === "toolCall") {
      const index = toolIndex++;
      const text = typeof b.arguments === "string" ? b.arguments : JSON.stringify(b.arguments);
      const n = Math.max(1, Math.min(b.fragments ?? 1, text.length));
      const size = Math.ceil(text.length / n);
      const id = b.id ?? mistralCallId();
      for (let i = 0; i < n; i++) {
        const fn = { ...(i === 0 ? { name: b.name } : {}), arguments: text.slice(i * size, (i + 1) * size) };
        frames.push(chunk({ tool_calls: [{ ...(i === 0 ? { id } : {}), function: fn, index }] }));
      }
    }
  }
  if (plan.error) {
    frames.push(dataOnly({ object: "error", message: plan.error.message, type: plan.error.errorType ?? "internal_server_error", param: null, code: null }));
    return frames;
  }
  const { input, output, cacheRead } = plan.usage;
  const prompt = input + cacheRead;
  const usage = { prompt_tokens: prompt, completion_tokens: output, total_tokens: prompt + output, ...(cacheRead ? { prompt_tokens_details: { cached_tokens: cacheRead } } : {}) };
  const finish_reason = plan.finishReason ?? { stop: "stop", length: "length", toolUse: "tool_calls" }[plan.stopReason];
  frames.push(dataOnly({ ...base, choices: [{ index: 0, delta: { content: "" }, finish_reason }], usage }));
  frames.push("data: [DONE]\n\n");
  return frames;
}

const errorTypes: Record<number, string> = { 400: "invalid_request_error", 401: "unauthorized", 404: "not_found", 422: "invalid_request_error", 429: "rate_limited", 500: "internal_server_error", 503: "service_unavailable" };

/** Mistral's error body: `{object: "error", message, type, param, code}`. */
export function mistralErrorResponse(status: number, o: { body?: unknown; message?: string; errorType?: string; headers?: Record<string, string> }): Response {
  const message = o.message ?? `fake provider: HTTP ${status}`;
  const body = o.body ?? { object: "error", message, type: o.errorType ?? errorTypes[status] ?? "internal_server_error", param: null, code: null };
  return Response.json(body, { status, headers: o.headers });
}
