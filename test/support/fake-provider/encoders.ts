/**
 * Provider-neutral scripted replies -> SSE frames in each API's wire format, as the official
 * SDKs parse them (Anthropic `RawMessageStreamEvent`, OpenAI `ChatCompletionChunk`,
 * OpenAI `ResponseStreamEvent`).
 */
import type { FakeBlock, FakeUsage } from "../fake-provider.ts";

/** One SSE event, already encoded (`event: …\ndata: …\n\n`), or one binary event-stream message (Bedrock). */
export type Frame = string | Uint8Array;

export interface StreamPlan {
  model: string;
  /** Chat Completions sends the usage chunk only when the request asked for it. */
  includeUsage: boolean;
  blocks: FakeBlock[];
  usage: Required<Pick<FakeUsage, "input" | "output" | "cacheRead" | "cacheWrite">> & Pick<FakeUsage, "cacheWrite1h" | "billing" | "reasoning">;
  stopReason: "stop" | "length" | "toolUse";
  /** Gemini and Mistral only: the raw finish reason to send (SAFETY, RECITATION, …; error, model_length) instead of the one stopReason implies. */
  finishReason?: string;
  /** Sent after the blocks instead of the normal ending. */
  error?: { message: string; errorType?: string };
}

const ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

/** `prefix` + `length` random base62 characters, like the ids the real APIs hand out. */
export function randomId(prefix: string, length: number): string {
  const bytes = crypto.getRandomValues(new Uint8Array(length));
  return prefix + Array.from(bytes, (b) => ALPHABET[b % ALPHABET.length]).join("");
}

export const sse = (event: string, data: unknown): Frame => `event: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
const dataOnly = (data: unknown): Frame => `data: ${JSON.stringify(data)}\n\n`;
export const deltasOf = (text: string | string[]): string[] => (typeof text === "string" ? [text] : text);
export const joined = (text: string | string[]): string => deltasOf(text).join("");
const argsText = (b: Extract<FakeBlock, { type: "toolCall" }>): string =>
  typeof b.arguments === "string" ? b.arguments : JSON.stringify(b.arguments);

export function fragmentsOf(b: Extract<FakeBlock, { type: "toolCall" }>): string[] {
  const text = argsText(b);
  const n = Math.max(1, Math.min(b.fragments ?? 1, text.length));
  const size = Math.ceil(text.length / n);
  return Array.from({ length: n }, (_, i) => text.slice(i * size, (i + 1) * size)).filter((s, i) => i === 0 || s);
}

/** OpenAI counts every prompt token in prompt_tokens/input_tokens; Anthropic's input_tokens excludes the cache. */
const promptTokens = (u: StreamPlan["usage"]) => u.input + u.cacheRead + u.cacheWrite;

const fakeSignature = () => randomId("EqQBCkgIAxABGAIiQ", 64);
const fakeEncryptedContent = () => randomId("gAAAAAB", 96);

export function encodeAnthropic(plan: StreamPlan): Frame[] {
  const { usage } = plan;
  const cacheUsage = { cache_creation_input_tokens: usage.cacheWrite, cache_read_input_tokens: usage.cacheRead };
  // The API splits cache writes by TTL on message_start only.
  const long = usage.cacheWrite1h ?? 0;
  const cache_creation = { ephemeral_5m_input_tokens: usage.cacheWrite - long, ephemeral_1h_input_tokens: long };
  const frames: Frame[] = [
    sse("message_start", {
      type: "message_start",
      message: {
        id: randomId("msg_01", 22),
        type: "message",
        role: "assistant",
        model: plan.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { input_tokens: usage.input, ...cacheUsage, cache_creation, output_tokens: 1, service_tier: "standard" },
      },
    }),
  ];
  const delta = (index: number, d: Record<string, unknown>) =>
    frames.push(sse("content_block_delta", { type: "content_block_delta", index, delta: d }));

  plan.blocks.forEach((b, index) => {
    if (b.type === "text") {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } }));
      for (const text of deltasOf(b.text)) delta(index, { type: "text_delta", text });
    } else if (b.type === "thinking") {
      const block = { type: "thinking", thinking: "", signature: "" };
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: block }));
      for (const thinking of deltasOf(b.thinking)) delta(index, { type: "thinking_delta", thinking });
      delta(index, { type: "signature_delta", signature: b.signature ?? fakeSignature() });
    } else if (b.type === "redacted_thinking") {
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: { type: "redacted_thinking", data: b.data } }));
    } else {
      const block = { type: "tool_use", id: b.id ?? randomId("toolu_01", 22), name: b.name, input: {} };
      frames.push(sse("content_block_start", { type: "content_block_start", index, content_block: block }));
      for (const partial_json of fragmentsOf(b)) delta(index, { type: "input_json_delta", partial_json });
    }
    frames.push(sse("content_block_stop", { type: "content_block_stop", index }));
  });

  if (plan.error) {
    const error = { type: plan.error.errorType ?? "overloaded_error", message: plan.error.message };
    return [...frames, sse("error", { type: "error", error })];
  }
  const stop_reason = { stop: "end_turn", length: "max_tokens", toolUse: "tool_use" }[plan.stopReason];
  frames.push(
    sse("message_delta", {
      type: "message_delta",
      delta: { stop_reason, stop_sequence: null },
      usage: { input_tokens: usage.input, ...cacheUsage, output_tokens: usage.output },
    }),
    sse("message_stop", { type: "message_stop" }),
  );
  return frames;
}

export function encodeCompletions(plan: StreamPlan): Frame[] {
  const base = {
    id: randomId("chatcmpl-", 29),
    object: "chat.completion.chunk",
    created: Math.floor(Date.now() / 1000),
    model: plan.model,
    service_tier: "default",
    system_fingerprint: "fp_fake0001",
    ...(plan.includeUsage ? { usage: null } : {}),
  };
  const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null): Frame =>
    dataOnly({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason }] });

  const frames: Frame[] = [chunk({ role: "assistant", content: "", refusal: null })];
  let toolIndex = 0;
  for (const b of plan.blocks) {
    if (b.type === "text") {
      for (const content of deltasOf(b.text)) frames.push(chunk({ content }));
    } else if (b.type === "thinking") {
      for (const reasoning_content of deltasOf(b.thinking)) frames.push(chunk({ reasoning_content }));
    } else if (b.type !== "redacted_thinking") {
      const index = toolIndex++;
      const id = b.id ?? randomId("call_", 24);
      frames.push(chunk({ tool_calls: [{ index, id, type: "function", function: { name: b.name, arguments: "" } }] }));
      for (const args of fragmentsOf(b)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: args } }] }));
    }
  }

  if (plan.error) {
    const type = plan.error.errorType ?? "server_error";
    return [...frames, dataOnly({ error: { message: plan.error.message, type, param: null, code: type } })];
  }
  frames.push(chunk({}, { stop: "stop", length: "length", toolUse: "tool_calls" }[plan.stopReason]));
  if (plan.includeUsage) {
    const { output, cacheRead, cacheWrite } = plan.usage;
    const prompt = promptTokens(plan.usage);
    const usage = {
      prompt_tokens: prompt,
      completion_tokens: output,
      total_tokens: prompt + output,
      prompt_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite, audio_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: plan.usage.reasoning ?? 0, audio_tokens: 0, accepted_prediction_tokens: 0, rejected_prediction_tokens: 0 },
      ...plan.usage.billing,
    };
    frames.push(dataOnly({ ...base, choices: [], usage }));
  }
  frames.push("data: [DONE]\n\n");
  return frames;
}

/** Ends with `response.completed`, `response.incomplete` (stopReason "length") or `response.failed`. */
/** `completedType`: the terminal event's name (the ChatGPT backend may send `response.done`). */
export function encodeResponses(plan: StreamPlan, completedType = "response.completed"): Frame[] {
  const frames: Frame[] = [];
  let sequence_number = 0;
  const ev = (type: string, fields: Record<string, unknown>) =>
    frames.push(sse(type, { type, sequence_number: sequence_number++, ...fields }));
  const id = randomId("resp_", 48);
  const created_at = Math.floor(Date.now() / 1000);
  const response = (status: string, output: unknown[], extra: Record<string, unknown> = {}) => ({
    id,
    object: "response",
    created_at,
    status,
    background: false,
    error: null,
    incomplete_details: null,
    instructions: null,
    max_output_tokens: null,
    model: plan.model,
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: false,
    temperature: 1,
    text: { format: { type: "text" }, verbosity: "medium" },
    tool_choice: "auto",
    tools: [],
    top_p: 1,
    truncation: "disabled",
    usage: null,
    metadata: {},
    ...extra,
  });

  ev("response.created", { response: response("in_progress", []) });
  ev("response.in_progress", { response: response("in_progress", []) });
  const output: unknown[] = [];
  plan.blocks.forEach((b, output_index) => {
    const added = (item: Record<string, unknown>) => ev("response.output_item.added", { output_index, item });
    const done = (item: Record<string, unknown>) => {
      output.push(item);
      ev("response.output_item.done", { output_index, item });
    };
    if (b.type === "text") {
      const item_id = randomId("msg_", 48);
      const text = joined(b.text);
      const at = { item_id, output_index, content_index: 0 };
      const part = (t: string) => ({ type: "output_text", annotations: [], logprobs: [], text: t });
      added({ id: item_id, type: "message", status: "in_progress", content: [], role: "assistant" });
      ev("response.content_part.added", { ...at, part: part("") });
      for (const delta of deltasOf(b.text)) ev("response.output_text.delta", { ...at, delta, logprobs: [] });
      ev("response.output_text.done", { ...at, text, logprobs: [] });
      ev("response.content_part.done", { ...at, part: part(text) });
      done({ id: item_id, type: "message", status: "completed", content: [part(text)], role: "assistant" });
    } else if (b.type === "thinking") {
      const item_id = randomId("rs_", 48);
      const text = joined(b.thinking);
      const encrypted_content = b.signature ?? fakeEncryptedContent();
      const at = { item_id, output_index, summary_index: 0 };
      added({ id: item_id, type: "reasoning", encrypted_content, summary: [] });
      ev("response.reasoning_summary_part.added", { ...at, part: { type: "summary_text", text: "" } });
      for (const delta of deltasOf(b.thinking)) ev("response.reasoning_summary_text.delta", { ...at, delta });
      ev("response.reasoning_summary_text.done", { ...at, text });
      ev("response.reasoning_summary_part.done", { ...at, part: { type: "summary_text", text } });
      done({ id: item_id, type: "reasoning", encrypted_content, summary: [{ type: "summary_text", text }] });
    } else if (b.type === "toolCall") {
      const item_id = randomId("fc_", 48);
      const call = { id: item_id, type: "function_call", call_id: b.id ?? randomId("call_", 24), name: b.name };
      added({ ...call, status: "in_progress", arguments: "" });
      for (const delta of fragmentsOf(b)) ev("response.function_call_arguments.delta", { item_id, output_index, delta });
      ev("response.function_call_arguments.done", { item_id, output_index, arguments: argsText(b) });
      done({ ...call, status: "completed", arguments: argsText(b) });
    }
  });

  if (plan.error) {
    const error = { code: plan.error.errorType ?? "server_error", message: plan.error.message };
    ev("response.failed", { response: response("failed", output, { error }) });
    return frames;
  }
  const { output: out, cacheRead, cacheWrite } = plan.usage;
  const usage = {
    input_tokens: promptTokens(plan.usage),
    input_tokens_details: { cached_tokens: cacheRead, cache_write_tokens: cacheWrite },
    output_tokens: out,
    output_tokens_details: { reasoning_tokens: plan.usage.reasoning ?? 0 },
    total_tokens: promptTokens(plan.usage) + out,
  };
  if (plan.stopReason === "length") {
    const incomplete_details = { reason: "max_output_tokens" };
    ev("response.incomplete", { response: response("incomplete", output, { incomplete_details, usage }) });
  } else {
    ev(completedType, { response: response("completed", output, { usage }) });
  }
  return frames;
}
