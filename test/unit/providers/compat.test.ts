import { describe, expect, test } from "bun:test";
import { completionsCompat, mergeCompat, type Compat } from "../../../src/providers/compat.ts";
import { streamAnthropic } from "../../../src/providers/anthropic.ts";
import { streamOpenAICompletions } from "../../../src/providers/openai-completions.ts";
import { streamOpenAIResponses } from "../../../src/providers/openai-responses.ts";
import type { Api, LlmRequest, Model, StreamFn } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { rawSse, readTool, request, run, testModel, toolHistory } from "./helpers.ts";

type Body = Record<string, unknown> & { messages?: Record<string, unknown>[]; tools?: Record<string, unknown>[] };
interface Case {
  name: string;
  api?: Api;
  model?: Partial<Model>;
  compat?: Compat;
  req?: Partial<LlmRequest>;
  check: (body: Body, headers: Record<string, string>) => void;
}

const fns: Record<string, StreamFn> = {
  "openai-completions": streamOpenAICompletions,
  "openai-responses": streamOpenAIResponses,
  "anthropic-messages": streamAnthropic,
};
const thinking = { thinkingLevel: "high" as const };
const history = { messages: toolHistory(), tools: [readTool] };
const withThinking = {
  messages: toolHistory({ content: [{ type: "thinking", thinking: "pondering" }, { type: "text", text: "Reading it." }, { type: "toolCall", id: "call_abc", name: "read", arguments: { path: "a.ts" } }] }),
  tools: [readTool],
};
const assistantOf = (b: Body) => b.messages!.find((m) => m.role === "assistant")!;

// One row per compat flag or models.json field: the request the fake provider recorded shows it.
const cases: Case[] = [
  { name: "default: max_completion_tokens, include_usage, no store", check: (b) => expect(b).toMatchObject({ max_completion_tokens: 4096, stream_options: { include_usage: true } }) },
  { name: "maxTokensField max_tokens", compat: { maxTokensField: "max_tokens" }, check: (b) => expect([b.max_tokens, b.max_completion_tokens]).toEqual([4096, undefined]) },
  { name: "maxTokensField auto-detected for DeepSeek", model: { provider: "deepseek" }, check: (b) => expect(b.max_tokens).toBe(4096) },
  { name: "supportsUsageInStreaming false", compat: { supportsUsageInStreaming: false }, check: (b) => expect(b.stream_options).toBeUndefined() },
  { name: "supportsStore", compat: { supportsStore: true }, check: (b) => expect(b.store).toBe(false) },
  { name: "supportsDeveloperRole true", model: { reasoning: true, provider: "local" }, compat: { supportsDeveloperRole: true }, check: (b) => expect(b.messages![0]!.role).toBe("developer") },
  { name: "supportsDeveloperRole false on OpenAI", model: { reasoning: true }, compat: { supportsDeveloperRole: false }, check: (b) => expect(b.messages![0]!.role).toBe("system") },
  { name: "supportsReasoningEffort false", model: { reasoning: true }, compat: { supportsReasoningEffort: false }, req: thinking, check: (b) => expect(b.reasoning_effort).toBeUndefined() },
  { name: "requiresToolResultName", compat: { requiresToolResultName: true }, req: history, check: (b) => expect(b.messages!.find((m) => m.role === "tool")).toMatchObject({ name: "read" }) },
  {
    name: "requiresAssistantAfterToolResult",
    compat: { requiresAssistantAfterToolResult: true },
    req: { messages: toolHistory().slice(0, 3).concat(toolHistory().slice(3)), tools: [readTool] },
    check: (b) => expect(b.messages!.map((m) => m.role)).toEqual(["system", "user", "assistant", "tool", "assistant", "user"]),
  },
  {
    name: "requiresNonNullAssistantContent",
    compat: { requiresNonNullAssistantContent: true },
    req: { messages: toolHistory({ content: [{ type: "toolCall", id: "call_abc", name: "read", arguments: {} }] }), tools: [readTool] },
    check: (b) => expect(assistantOf(b).content).toBe(""),
  },
  {
    name: "requiresToolsWithToolHistory",
    compat: { requiresToolsWithToolHistory: true },
    req: { messages: toolHistory(), tools: [] },
    check: (b) => expect(b.tools).toEqual([]),
  },
  { name: "requiresThinkingAsText", compat: { requiresThinkingAsText: true }, req: withThinking, check: (b) => expect(assistantOf(b).content).toEqual([{ type: "text", text: "pondering" }, { type: "text", text: "Reading it." }]) },
  { name: "requiresReasoningContentOnAssistantMessages", model: { reasoning: true }, compat: { requiresReasoningContentOnAssistantMessages: true }, req: withThinking, check: (b) => expect(assistantOf(b).reasoning_content).toBe("pondering") },
  { name: "thinkingFormat openrouter", model: { reasoning: true }, compat: { thinkingFormat: "openrouter" }, req: thinking, check: (b) => expect([b.reasoning, b.reasoning_effort]).toEqual([{ effort: "high" }, undefined]) },
  { name: "thinkingFormat openrouter, off", model: { reasoning: true }, compat: { thinkingFormat: "openrouter" }, check: (b) => expect(b.reasoning).toEqual({ effort: "none" }) },
  { name: "thinkingFormat deepseek", model: { reasoning: true }, compat: { thinkingFormat: "deepseek" }, req: thinking, check: (b) => expect(b).toMatchObject({ thinking: { type: "enabled" }, reasoning_effort: "high" }) },
  { name: "thinkingFormat zai", model: { reasoning: true }, compat: { thinkingFormat: "zai", supportsReasoningEffort: false }, req: thinking, check: (b) => expect([b.thinking, b.reasoning_effort]).toEqual([{ type: "enabled", clear_thinking: false }, undefined]) },
  { name: "thinkingFormat qwen", model: { reasoning: true }, compat: { thinkingFormat: "qwen" }, check: (b) => expect(b.enable_thinking).toBe(false) },
  { name: "thinkingFormat qwen-chat-template", model: { reasoning: true }, compat: { thinkingFormat: "qwen-chat-template" }, req: thinking, check: (b) => expect(b.chat_template_kwargs).toEqual({ enable_thinking: true, preserve_thinking: true }) },
  {
    name: "thinkingFormat chat-template with $var",
    model: { reasoning: true, thinkingLevelMap: { high: "deep" } },
    compat: { thinkingFormat: "chat-template", chatTemplateKwargs: { enable: { $var: "thinking.enabled" }, effort: { $var: "thinking.effort" }, budget: { $var: "thinking.budget" }, fixed: 7 } },
    req: { ...thinking, thinkingBudgets: { high: 3000 } },
    check: (b) => expect(b.chat_template_kwargs).toEqual({ enable: true, effort: "deep", budget: 3000, fixed: 7 }),
  },
  { name: "thinkingFormat string-thinking", model: { reasoning: true, thinkingLevelMap: { low: "brief" } }, compat: { thinkingFormat: "string-thinking" }, req: { thinkingLevel: "low" }, check: (b) => expect(b.thinking).toBe("brief") },
  { name: "thinkingFormat together", model: { reasoning: true }, compat: { thinkingFormat: "together" }, req: thinking, check: (b) => expect(b).toMatchObject({ reasoning: { enabled: true }, reasoning_effort: "high" }) },
  { name: "thinkingLevelMap without a format: reasoning_effort gets the mapped value", model: { reasoning: true, thinkingLevelMap: { high: "max-ish", off: "none" } }, req: thinking, check: (b) => expect(b.reasoning_effort).toBe("max-ish") },
  { name: "openRouterRouting", compat: { openRouterRouting: { only: ["groq"] } }, check: (b) => expect(b.provider).toEqual({ only: ["groq"] }) },
  { name: "vercelGatewayRouting", compat: { vercelGatewayRouting: { order: ["bedrock"] } }, check: (b) => expect(b.providerOptions).toEqual({ gateway: { order: ["bedrock"] } }) },
  { name: "zaiToolStream", compat: { zaiToolStream: true }, req: { tools: [readTool] }, check: (b) => expect(b.tool_stream).toBe(true) },
  { name: "thinkingTokenBudgetField", model: { reasoning: true }, compat: { thinkingTokenBudgetField: "thinking_budget_tokens" }, req: { thinkingLevel: "low", thinkingBudgets: { low: 999 } }, check: (b) => expect(b.thinking_budget_tokens).toBe(999) },
  { name: "supportsThinkingTokenBudget (vLLM), budget below max_tokens", model: { reasoning: true }, compat: { supportsThinkingTokenBudget: true }, req: thinking, check: (b) => expect(b.thinking_token_budget).toBe(4096 - 1024) },
  { name: "supportsStrictMode", compat: { supportsStrictMode: true }, req: { tools: [readTool] }, check: (b) => expect((b.tools![0]!.function as Record<string, unknown>).strict).toBe(false) },
  {
    name: "cacheControlFormat anthropic",
    compat: { cacheControlFormat: "anthropic" },
    req: { tools: [readTool] },
    check: (b) => expect([JSON.stringify(b.tools![0]!.cache_control), JSON.stringify(b.messages![0]!.content)]).toEqual(['{"type":"ephemeral"}', '[{"type":"text","text":"You are terse.","cache_control":{"type":"ephemeral"}}]']),
  },
  { name: "promptCacheKeyMode enabled", compat: { promptCacheKeyMode: "enabled" }, req: { sessionId: "sess-1" }, check: (b) => expect(b.prompt_cache_key).toBe("sess-1") },
  { name: "sendSessionAffinityHeaders, openai format", compat: { sendSessionAffinityHeaders: true }, req: { sessionId: "sess-2" }, check: (_, h) => expect([h.session_id, h["x-client-request-id"], h["x-session-affinity"]]).toEqual(["sess-2", "sess-2", "sess-2"]) },
  { name: "sessionAffinityFormat openrouter", compat: { sendSessionAffinityHeaders: true, sessionAffinityFormat: "openrouter" }, req: { sessionId: "sess-3" }, check: (_, h) => expect([h["x-session-id"], "x-client-request-id" in h]).toEqual(["sess-3", false]) },
  { name: "vllmPriority", compat: { vllmPriority: -5 }, check: (b) => expect(b.priority).toBe(-5) },
  {
    name: "samplingParams then the level's samplingParamsByThinkingLevel",
    model: { reasoning: true, samplingParams: { temperature: 1, top_p: 0.95 }, samplingParamsByThinkingLevel: { off: { temperature: 0.7 }, high: { top_k: 20 } } },
    check: (b) => expect([b.temperature, b.top_p, b.top_k]).toEqual([0.7, 0.95, undefined]),
  },
  { name: "authHeader on Chat Completions", model: { authHeader: true }, check: (_, h) => expect(h.authorization).toBe("Bearer sk-test") },
  // Responses
  { name: "responses: supportsMaxOutputTokens false", api: "openai-responses", compat: { supportsMaxOutputTokens: false }, check: (b) => expect(b.max_output_tokens).toBeUndefined() },
  { name: "responses: promptCacheKeyMode disabled", api: "openai-responses", compat: { promptCacheKeyMode: "disabled" }, req: { sessionId: "s" }, check: (b) => expect(b.prompt_cache_key).toBeUndefined() },
  { name: "responses: supportsStrictMode false", api: "openai-responses", compat: { supportsStrictMode: false }, req: { tools: [readTool] }, check: (b) => expect("strict" in b.tools![0]!).toBe(false) },
  { name: "responses: sessionAffinityFormat openai", api: "openai-responses", compat: { sessionAffinityFormat: "openai" }, req: { sessionId: "s4" }, check: (_, h) => expect([h["session-id"], h["x-client-request-id"]]).toEqual(["s4", "s4"]) },
  { name: "responses: samplingParams", api: "openai-responses", model: { samplingParams: { temperature: 0.2 } }, check: (b) => expect(b.temperature).toBe(0.2) },
  { name: "responses: thinkingLevelMap", api: "openai-responses", model: { reasoning: true, thinkingLevelMap: { medium: "low" } }, req: { thinkingLevel: "medium" }, check: (b) => expect(b.reasoning).toEqual({ effort: "low", summary: "auto" }) },
  // Messages
  { name: "anthropic: supportsCacheControlOnTools false", api: "anthropic-messages", compat: { supportsCacheControlOnTools: false }, req: { tools: [readTool] }, check: (b) => expect(b.tools![0]!.cache_control).toBeUndefined() },
  { name: "anthropic: sendSessionAffinityHeaders", api: "anthropic-messages", compat: { sendSessionAffinityHeaders: true }, req: { sessionId: "s5" }, check: (_, h) => expect(h["x-session-affinity"]).toBe("s5") },
  { name: "anthropic: forceAdaptiveThinking", api: "anthropic-messages", model: { reasoning: true }, compat: { forceAdaptiveThinking: true }, req: thinking, check: (b) => expect(b).toMatchObject({ thinking: { type: "adaptive" }, output_config: { effort: "high" } }) },
  { name: "anthropic: thinkingBudgets", api: "anthropic-messages", model: { reasoning: true, maxTokens: 32000 }, req: { thinkingLevel: "medium", thinkingBudgets: { medium: 5000 } }, check: (b) => expect(b.thinking).toEqual({ type: "enabled", budget_tokens: 5000 }) },
  { name: "anthropic: authHeader sends Bearer beside x-api-key", api: "anthropic-messages", model: { authHeader: true }, check: (_, h) => expect([h.authorization, h["x-api-key"]]).toEqual(["Bearer sk-test", "sk-test"]) },
];

describe("models.json compat in the request", () => {
  for (const c of cases) {
    test.concurrent(c.name, async () => {
      const api = c.api ?? "openai-completions";
      await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
      const base = api === "anthropic-messages" ? fake.url : `${fake.url}/v1`;
      const model = testModel(base, api, { ...c.model, ...(c.compat ? { compat: c.compat } : {}) });
      const { message } = await run(fns[api]!(request(model, c.req), new AbortController().signal));
      expect(message.errorMessage).toBeUndefined();
      const req = fake.requests[0]!;
      c.check(req.body as Body, req.headers);
    });
  }

  test.concurrent("supportsFinishReason false: a stream that just ends is a finished reply", async () => {
    const chunk = { id: "c", object: "chat.completion.chunk", created: 0, model: "m", choices: [{ index: 0, delta: { content: "done" }, finish_reason: null }] };
    using server = rawSse([chunk]);
    const model = testModel(server.url, "openai-completions", { compat: { supportsFinishReason: false } });
    const { message } = await run(streamOpenAICompletions(request(model), new AbortController().signal));
    expect([message.stopReason, message.errorMessage]).toEqual(["stop", undefined]);
  });
});

describe("compat merge and detection", () => {
  test("a model's compat overrides its provider's field by field; routing objects merge", () => {
    expect(mergeCompat({ supportsStore: true, maxTokensField: "max_tokens", openRouterRouting: { only: ["a"] } }, { maxTokensField: "max_completion_tokens", openRouterRouting: { order: ["b"] } })).toEqual({
      supportsStore: true,
      maxTokensField: "max_completion_tokens",
      openRouterRouting: { only: ["a"], order: ["b"] },
    });
  });

  test("auto-detected from the host as the reference detects it", () => {
    const m = (baseUrl: string, provider = "custom") => testModel(baseUrl, "openai-completions", { provider, reasoning: true });
    expect(completionsCompat(m("https://api.deepseek.com/v1"))).toMatchObject({ maxTokensField: "max_tokens", requiresReasoningContentOnAssistantMessages: true });
    expect(completionsCompat(m("https://api.z.ai/api/paas/v4"))).toMatchObject({ maxTokensField: "max_tokens", supportsReasoningEffort: false });
    expect(completionsCompat(m("https://api.openai.com/v1"))).toMatchObject({ maxTokensField: "max_completion_tokens", developerRole: true });
    expect(completionsCompat(m("http://localhost:8080/v1"))).toMatchObject({ maxTokensField: "max_completion_tokens", developerRole: false, supportsStore: false });
    expect(completionsCompat(m("https://openrouter.ai/api/v1"))).toMatchObject({ sessionAffinityFormat: "openrouter" });
  });
});
