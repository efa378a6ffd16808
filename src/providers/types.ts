import type { Compat } from "./compat.ts";

/**
 * Provider-neutral message and stream types. These are the wire spellings of the
 * spec's message types (role "user" / "assistant" / "toolResult"), so the session can
 * persist and emit them unchanged.
 */

export interface TextContent {
  type: "text";
  text: string;
  textSignature?: string;
}

export interface ThinkingContent {
  type: "thinking";
  thinking: string;
  /** Anthropic signature or OpenAI encrypted reasoning item, kept for replay. */
  thinkingSignature?: string;
  redacted?: boolean;
}

export interface ImageContent {
  type: "image";
  data: string;
  mimeType: string;
}

export interface ToolCall {
  type: "toolCall";
  id: string;
  name: string;
  arguments: Record<string, unknown>;
  /** Set when the streamed arguments were not a JSON object (`arguments` is then empty): the tool does not run. */
  argumentsError?: string;
  /** Gemini's signature on the function call part, sent back unchanged to the model that made it. */
  thoughtSignature?: string;
}

export interface Cost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  total: number;
  /**
   * True when `total` is the provider's own billed figure (OpenRouter's `usage.cost`) rather than
   * the sum of the catalog-priced parts above; set whenever a reply is priced. A sum of usages is
   * provider-reported only when every part is.
   */
  totalFromProvider?: boolean;
}

export interface Usage {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /**
   * Reasoning tokens, a part of `output` (OpenAI's completion_tokens_details / output_tokens_details
   * `reasoning_tokens`): OpenAI replies always carry it (0 when none), after cacheWrite as the
   * reference's do; other APIs leave it out.
   */
  reasoning?: number;
  totalTokens: number;
  cost: Cost;
  /**
   * Anthropic's one-hour cache writes (`cache_creation.ephemeral_1h_input_tokens`), a part of
   * `cacheWrite` priced apart. Anthropic replies always carry it (0 when none); other APIs leave it out.
   */
  cacheWrite1h?: number;
}

export type StopReason = "stop" | "length" | "toolUse" | "error" | "aborted";

/**
 * The wire APIs, plus "pi-virtual": a virtual model, which the session routes to a physical
 * model for each request (it never reaches an adapter), spelled as the reference spells it.
 */
export type Api = "anthropic-messages" | "openai-completions" | "openai-responses" | "google-generative-ai" | "bedrock-converse-stream" | "azure-openai-responses" | "google-vertex" | "anthropic-vertex" | "mistral-conversations" | "openai-codex-responses" | "pi-messages" | "scripted" | "pi-virtual";

export interface UserMessage {
  role: "user";
  content: string | (TextContent | ImageContent)[];
  timestamp: number;
}

export interface AssistantMessage {
  role: "assistant";
  content: (TextContent | ThinkingContent | ToolCall)[];
  api: Api;
  provider: string;
  model: string;
  responseId?: string;
  usage: Usage;
  stopReason: StopReason;
  errorMessage?: string;
  /** The provider's own stop reason (e.g. Anthropic's "end_turn"). */
  rawStopReason?: string;
  /** How long the model call took. */
  durationMs?: number;
  /** The thinking level the request was made with. */
  thinkingLevel?: ThinkingLevel;
  timestamp: number;
}

export interface ToolResultMessage {
  role: "toolResult";
  toolCallId: string;
  toolName: string;
  content: (TextContent | ImageContent)[];
  details?: unknown;
  isError: boolean;
  /** How long the tool ran. */
  durationMs?: number;
  timestamp: number;
}

/** What a provider can be sent. */
export type Message = UserMessage | AssistantMessage | ToolResultMessage;

/** A higher price that applies once a request's input exceeds `contextOver` tokens (models.dev `cost.tiers`). */
export interface CostTier {
  contextOver: number;
  input: number;
  output: number;
  cacheRead?: number;
  cacheWrite?: number;
}

export interface ModelCost {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** Ascending by `contextOver`; the highest tier the request's input exceeds sets the price. */
  tiers?: CostTier[];
}

/** How a model's reasoning is controlled (models.dev `reasoning_options`); a model may list several. */
export type ReasoningOption =
  | { type: "effort"; values: string[] }
  | { type: "budget_tokens"; min?: number; max?: number }
  | { type: "toggle" };

/** Where a model's entry came from: the embedded catalog, `pion models refresh`, or `models.json`. */
export type ModelSource = "built-in" | "refreshed" | "models.json";

export interface Model {
  id: string;
  name: string;
  api: Api;
  provider: string;
  baseUrl: string;
  reasoning: boolean;
  input: ("text" | "image")[];
  cost: ModelCost;
  contextWindow: number;
  maxTokens: number;
  headers?: Record<string, string>;
  /** Thinking levels beyond "high" that this model accepts; for a virtual model, exactly the levels it offers. */
  thinkingLevels?: ThinkingLevel[];
  /** The catalog's reasoning controls, for adapters that choose request parameters per model. */
  reasoningOptions?: ReasoningOption[];
  family?: string;
  /** YYYY-MM-DD or YYYY-MM. */
  releaseDate?: string;
  status?: "deprecated" | "alpha" | "beta";
  /** False for catalog models that cannot call tools. */
  toolCall?: boolean;
  source?: ModelSource;
  /** models.json `compat`, the provider's merged with the model's (compat.ts reads it). */
  compat?: Compat;
  /** The value sent for each level (models.json `thinkingLevelMap`); null: the level is not offered. */
  thinkingLevelMap?: Partial<Record<ThinkingLevel, string | null>>;
  /** Fields merged into every OpenAI-shaped request body, then those of the effective thinking level. */
  samplingParams?: Record<string, unknown>;
  samplingParamsByThinkingLevel?: Partial<Record<ThinkingLevel, Record<string, unknown>>>;
  /** models.json `inputLimits` (pion acts on `images.resize`, for images sent with a prompt) and `promptCache` (kept as given). */
  inputLimits?: Record<string, unknown>;
  promptCache?: { short?: number; long?: number };
  /** Send the key as `Authorization: Bearer` too (models.json `authHeader`). */
  authHeader?: boolean;
}

/** settings.json `thinkingBudgets`: token budgets replacing pion's defaults for these levels. */
export type ThinkingBudgets = Partial<Record<"minimal" | "low" | "medium" | "high", number>>;

export type ThinkingLevel = "off" | "minimal" | "low" | "medium" | "high" | "xhigh" | "max";

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface LlmRequest {
  model: Model;
  apiKey?: string;
  /** Headers that authenticate the request instead of (or beside) the key: `Authorization: Bearer …`. */
  authHeaders?: Record<string, string>;
  systemPrompt: string;
  messages: Message[];
  tools: ToolSpec[];
  thinkingLevel: ThinkingLevel;
  sessionId?: string;
  /**
   * False for a request that no later one repeats and extends (a compaction summary): providers
   * then cache only its fixed prefix (system prompt, tools). A breakpoint on the rest would be
   * billed as a cache write (1.25× on Anthropic) and never read.
   */
  cacheConversation?: boolean;
  /** Idle timeout of the HTTP stream in ms (no bytes for this long fails the request). */
  idleTimeoutMs?: number;
  /** settings.json `thinkingBudgets`. */
  thinkingBudgets?: ThinkingBudgets;
  /** The HTTP client for the request (extensions' provider hooks wrap it); default the global fetch. */
  fetch?: typeof fetch;
}

/** Delta-only events of one assistant message, as they go on the wire in message_update. */
export type AssistantMessageEvent =
  | { type: "text_start"; contentIndex: number }
  | { type: "text_delta"; contentIndex: number; delta: string }
  | { type: "text_end"; contentIndex: number; content: string }
  | { type: "thinking_start"; contentIndex: number }
  | { type: "thinking_delta"; contentIndex: number; delta: string }
  | { type: "thinking_end"; contentIndex: number; content: string }
  | { type: "toolcall_start"; contentIndex: number; id: string; toolName: string }
  | { type: "toolcall_delta"; contentIndex: number; delta: string }
  | { type: "toolcall_end"; contentIndex: number; toolCall: ToolCall };

/**
 * One streamed assistant message. Iterate for deltas; `result` resolves with the final
 * message once the stream is over. Never rejects: failures end with stopReason "error".
 */
export interface AssistantStream extends AsyncIterable<AssistantMessageEvent> {
  result(): Promise<AssistantMessage>;
}

export type StreamFn = (req: LlmRequest, signal: AbortSignal) => AssistantStream;
