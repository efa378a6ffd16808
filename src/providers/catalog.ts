import type { Api, ThinkingLevel } from "./types.ts";

export interface CatalogModel {
  id: string;
  name?: string;
  api?: Exclude<Api, "scripted">;
  reasoning?: boolean;
  input?: ("text" | "image")[];
  contextWindow?: number;
  maxTokens?: number;
  cost?: { input: number; output: number; cacheRead: number; cacheWrite: number };
  thinkingLevels?: ThinkingLevel[];
}

export interface ProviderDef {
  id: string;
  api: Api;
  baseUrl: string;
  /** Environment variable holding the key. */
  envKey?: string;
  /** Local servers that need no key. */
  keyless?: boolean;
  headers?: Record<string, string>;
  models: CatalogModel[];
}

const price = (input: number, output: number, cacheRead = 0, cacheWrite = 0) => ({ input, output, cacheRead, cacheWrite });
const TI: ("text" | "image")[] = ["text", "image"];

/** Built-in providers and a short list of current models; models.json adds or overrides. */
export const BUILTIN_PROVIDERS: ProviderDef[] = [
  {
    id: "anthropic",
    api: "anthropic-messages",
    baseUrl: "https://api.anthropic.com",
    envKey: "ANTHROPIC_API_KEY",
    models: [
      { id: "claude-sonnet-4-5", name: "Claude Sonnet 4.5", reasoning: true, input: TI, contextWindow: 200000, maxTokens: 64000, cost: price(3, 15, 0.3, 3.75) },
      { id: "claude-opus-4-1", name: "Claude Opus 4.1", reasoning: true, input: TI, contextWindow: 200000, maxTokens: 32000, cost: price(15, 75, 1.5, 18.75) },
      { id: "claude-haiku-4-5", name: "Claude Haiku 4.5", reasoning: true, input: TI, contextWindow: 200000, maxTokens: 64000, cost: price(1, 5, 0.1, 1.25) },
      { id: "claude-sonnet-4-20250514", name: "Claude Sonnet 4", reasoning: true, input: TI, contextWindow: 200000, maxTokens: 64000, cost: price(3, 15, 0.3, 3.75) },
    ],
  },
  {
    id: "openai",
    api: "openai-responses",
    baseUrl: "https://api.openai.com/v1",
    envKey: "OPENAI_API_KEY",
    models: [
      { id: "gpt-5", name: "GPT-5", reasoning: true, input: TI, contextWindow: 400000, maxTokens: 128000, cost: price(1.25, 10, 0.125) },
      { id: "gpt-5-mini", name: "GPT-5 mini", reasoning: true, input: TI, contextWindow: 400000, maxTokens: 128000, cost: price(0.25, 2, 0.025) },
      { id: "gpt-4.1", name: "GPT-4.1", input: TI, contextWindow: 1047576, maxTokens: 32768, cost: price(2, 8, 0.5) },
      { id: "gpt-4o-mini", name: "GPT-4o mini", api: "openai-completions", input: TI, contextWindow: 128000, maxTokens: 16384, cost: price(0.15, 0.6, 0.075) },
    ],
  },
  {
    id: "openrouter",
    api: "openai-completions",
    baseUrl: "https://openrouter.ai/api/v1",
    envKey: "OPENROUTER_API_KEY",
    models: [{ id: "anthropic/claude-sonnet-4.5", name: "Claude Sonnet 4.5 (OpenRouter)", reasoning: true, input: TI, contextWindow: 200000, maxTokens: 64000, cost: price(3, 15, 0.3, 3.75) }],
  },
  {
    id: "groq",
    api: "openai-completions",
    baseUrl: "https://api.groq.com/openai/v1",
    envKey: "GROQ_API_KEY",
    models: [{ id: "openai/gpt-oss-120b", name: "GPT OSS 120B (Groq)", reasoning: true, contextWindow: 131072, maxTokens: 65536, cost: price(0.15, 0.75) }],
  },
  {
    id: "deepseek",
    api: "openai-completions",
    baseUrl: "https://api.deepseek.com/v1",
    envKey: "DEEPSEEK_API_KEY",
    models: [
      { id: "deepseek-chat", name: "DeepSeek Chat", contextWindow: 128000, maxTokens: 8192, cost: price(0.28, 0.42, 0.028) },
      { id: "deepseek-reasoner", name: "DeepSeek Reasoner", reasoning: true, contextWindow: 128000, maxTokens: 65536, cost: price(0.28, 0.42, 0.028) },
    ],
  },
  {
    id: "xai",
    api: "openai-completions",
    baseUrl: "https://api.x.ai/v1",
    envKey: "XAI_API_KEY",
    models: [{ id: "grok-4", name: "Grok 4", reasoning: true, input: TI, contextWindow: 256000, maxTokens: 64000, cost: price(3, 15, 0.75) }],
  },
  {
    id: "mistral",
    api: "openai-completions",
    baseUrl: "https://api.mistral.ai/v1",
    envKey: "MISTRAL_API_KEY",
    models: [{ id: "mistral-large-latest", name: "Mistral Large", input: TI, contextWindow: 128000, maxTokens: 32768, cost: price(0.5, 1.5) }],
  },
  {
    id: "cerebras",
    api: "openai-completions",
    baseUrl: "https://api.cerebras.ai/v1",
    envKey: "CEREBRAS_API_KEY",
    models: [{ id: "gpt-oss-120b", name: "GPT OSS 120B (Cerebras)", reasoning: true, contextWindow: 131072, maxTokens: 32768, cost: price(0.35, 0.75) }],
  },
  {
    id: "google",
    api: "openai-completions",
    baseUrl: "https://generativelanguage.googleapis.com/v1beta/openai",
    envKey: "GEMINI_API_KEY",
    models: [{ id: "gemini-2.5-pro", name: "Gemini 2.5 Pro", reasoning: true, input: TI, contextWindow: 1048576, maxTokens: 65536, cost: price(1.25, 10, 0.31) }],
  },
];
