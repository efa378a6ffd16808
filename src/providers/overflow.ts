/**
 * Whether a finished response means the request did not fit the model: the provider's
 * context-length error, a success whose input exceeds the window (a provider that overflows
 * silently), or a length stop with no output after an input that filled the window (one that
 * cuts the input to fit). The session compacts on these; extensions get the same answer
 * through pi-ai's `isContextOverflow`. The wording each provider uses is the reference's list.
 */
import type { AssistantMessage } from "./types.ts";

export type OverflowCandidate = Pick<AssistantMessage, "stopReason" | "errorMessage" | "provider" | "usage">;

const OVERFLOW_PATTERNS: readonly RegExp[] = [
  /prompt (?:is )?too long/i, // Anthropic, z.ai
  /prompt exceeds max length/i, // z.ai (CN)
  /request_too_large/i, // Anthropic, a request over the byte limit
  /input is too long for requested model/i, // Bedrock
  /exceeds the context window/i, // OpenAI
  /exceeds (?:the )?(?:model'?s )?maximum context length(?: of [\d,]+ tokens?|\s*\([\d,]+\))/i, // LiteLLM and other proxies
  /context window exceeded/i, // LiteLLM's own check
  /input token count.*exceeds the maximum/i, // Gemini, Vertex
  /maximum prompt length is \d+/i, // xAI
  /reduce the length of the messages/i, // Groq
  /maximum context length is \d+ tokens/i, // OpenRouter, OpenAI-compatible servers
  /exceeds (?:the )?maximum allowed input length of [\d,]+ tokens?/i, // OpenRouter (Poolside)
  /input \(\d+ tokens\) is longer than the model'?s context length \(\d+ tokens\)/i, // Together
  /exceeds the limit of \d+/i, // GitHub Copilot
  /exceeds the available context size/i, // llama.cpp
  /greater than the context length/i, // LM Studio
  /context window exceeds limit/i, // MiniMax
  /exceeded model token limit/i, // Kimi
  /too large for model with \d+ maximum context length/i, // Mistral
  /prompt has [\d,]+ tokens?, but the configured context size is [\d,]+ tokens?/i, // DS4
  /model_context_window_exceeded/i, // z.ai finish reason reported as an error
  /prompt too long; exceeded (?:max )?context length/i, // Ollama
  /range of input length should be/i, // DashScope (Qwen)
  /context[_ ]length[_ ]exceeded/i,
  /too many tokens/i,
  /token limit exceeded/i,
  // A 413 status (as an SDK or a "<provider> API error (413):" prefix puts it), whatever the body says.
  /^(?:[\w -]+ API error \(413\):|413(?:\s|:|$))/i,
];

/**
 * pion's additions, for llama.cpp (providers/llama-cpp.ts): with context shift on, its server
 * refuses an oversized prompt as "input (N tokens) is larger than the max context size (M
 * tokens)", and its error bodies carry the type exceed_context_size_error. Not among
 * `getOverflowPatterns`, which lists the reference's.
 */
const LLAMA_CPP_OVERFLOW = /is larger than the max context size|exceed_context_size_error/i;

/** Cerebras answers an oversized request with a bare 400 or 413. */
const CEREBRAS_OVERFLOW = /^4(?:00|13)\s*(?:status code)?\s*\(no body\)/i;

/**
 * Throttling that mentions tokens ("Too many tokens, please wait") is not an overflow. The
 * first pattern is how the reference's Bedrock adapter words throttling, the second how
 * pion's does ("<status> <exception>: <message>", providers/bedrock.ts).
 */
const NOT_OVERFLOW: readonly RegExp[] = [
  /^(Throttling error|Service unavailable):/i,
  /^(?:429 ThrottlingException|503 ServiceUnavailableException):/,
  /rate limit/i,
  /too many requests/i,
];

/** A copy of the provider wordings read as an overflow (pi-ai's `getOverflowPatterns`). */
export const getOverflowPatterns = (): RegExp[] => [...OVERFLOW_PATTERNS];

/** The provider's own context-length error (a failed response only). */
function isOverflowError(message: Pick<OverflowCandidate, "stopReason" | "errorMessage" | "provider">): boolean {
  const text = message.errorMessage;
  if (message.stopReason !== "error" || !text || NOT_OVERFLOW.some((p) => p.test(text))) return false;
  if (OVERFLOW_PATTERNS.some((p) => p.test(text)) || LLAMA_CPP_OVERFLOW.test(text)) return true;
  return message.provider === "cerebras" && CEREBRAS_OVERFLOW.test(text);
}

/** A prompt this share of the window fills it (a server may cut the input to fit exactly). */
const WINDOW_FILLED = 0.99;

/**
 * Whether `message` means the request did not fit. Without `contextWindow` only the provider's
 * error counts; with it, also a success whose input (fresh plus cache-read) exceeds the window
 * and a length stop with no output after an input filling 99% of it.
 */
export function isContextOverflow(message: OverflowCandidate, contextWindow?: number): boolean {
  if (isOverflowError(message)) return true;
  if (!contextWindow) return false;
  const input = message.usage.input + message.usage.cacheRead;
  if (message.stopReason === "stop") return input > contextWindow;
  return message.stopReason === "length" && message.usage.output === 0 && input >= contextWindow * WINDOW_FILLED;
}

/** A length stop below the output limit the caller meant (`desiredMaxOutput`, before any clamping). */
export const isRecoverableLength = (message: Pick<AssistantMessage, "stopReason" | "usage">, desiredMaxOutput: number): boolean =>
  message.stopReason === "length" && desiredMaxOutput > 0 && message.usage.output < desiredMaxOutput;
