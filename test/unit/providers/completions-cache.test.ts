import { describe, expect, test } from "bun:test";
import type { ChatCompletionMessageParam, ChatCompletionTool } from "openai/resources/chat/completions";
import { completionsCaching, markCompletionsCache } from "../../../src/providers/completions-cache.ts";
import { testModel } from "./helpers.ts";

describe("Chat Completions caching per server", () => {
  const model = (baseUrl: string, cost: { cacheRead: number; cacheWrite: number }) =>
    testModel(baseUrl, "openai-completions", { cost: { input: 1, output: 2, ...cost } });
  const explicit = { cacheRead: 0.1, cacheWrite: 1.25 };
  const automatic = { cacheRead: 0.5, cacheWrite: 0 };
  const none = { cacheRead: 0, cacheWrite: 0 };

  test("OpenAI: prompt_cache_key; OpenRouter: x-session-id, and breakpoints for models that bill cache writes; xAI: x-grok-conv-id", () => {
    expect(completionsCaching(model("https://api.openai.com/v1", automatic), "s1")).toEqual({ breakpoints: false, promptCacheKey: "s1" });
    expect(completionsCaching(model("https://openrouter.ai/api/v1", explicit), "s1")).toEqual({ breakpoints: true, headers: { "x-session-id": "s1" } });
    expect(completionsCaching(model("https://openrouter.ai/api/v1", automatic), "s1")).toEqual({ breakpoints: false, headers: { "x-session-id": "s1" } });
    expect(completionsCaching(model("https://api.x.ai/v1", automatic), "s1")).toEqual({ breakpoints: false, headers: { "x-grok-conv-id": "s1" } });
  });

  test("nothing for a model the catalog does not price cache reads for, for a request without a session, or for any other server", () => {
    expect(completionsCaching(model("https://api.openai.com/v1", none), "s1")).toEqual({ breakpoints: false });
    expect(completionsCaching(model("https://openrouter.ai/api/v1", none), "s1")).toEqual({ breakpoints: false });
    expect(completionsCaching(model("https://api.openai.com/v1", automatic), undefined)).toEqual({ breakpoints: false });
    expect(completionsCaching(model("https://openrouter.ai/api/v1", explicit), undefined)).toEqual({ breakpoints: true });
    for (const url of ["https://api.deepseek.com", "http://localhost:11434/v1", "https://my-proxy.example/openrouter.ai/v1", "not a url"]) {
      expect(completionsCaching(model(url, explicit), "s1")).toEqual({ breakpoints: false });
    }
  });

  test("breakpoints on the system text, the last tool, the end of the conversation and the previous request's end", () => {
    const messages: ChatCompletionMessageParam[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "read a" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: "A" },
      { role: "assistant", content: "and b", tool_calls: [{ id: "c2", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c2", content: "B" },
    ];
    const tools: ChatCompletionTool[] = ["read", "ls"].map((name) => ({ type: "function", function: { name, parameters: {} } }));
    markCompletionsCache(messages, tools, true);
    const cc = { cache_control: { type: "ephemeral" } };
    expect(messages).toEqual([
      { role: "system", content: [{ type: "text", text: "sys", ...cc }] },
      { role: "user", content: "read a" },
      { role: "assistant", content: null, tool_calls: [{ id: "c1", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c1", content: [{ type: "text", text: "A", ...cc }] },
      { role: "assistant", content: "and b", tool_calls: [{ id: "c2", type: "function", function: { name: "read", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "c2", content: [{ type: "text", text: "B", ...cc }] },
    ]);
    expect(tools.map((t) => "cache_control" in t)).toEqual([false, true]);
  });

  test("only text parts take one: an image after the text leaves the breakpoint on the text; no conversation ones for a one-off request", () => {
    const withImage: ChatCompletionMessageParam[] = [
      { role: "user", content: [{ type: "text", text: "look" }, { type: "image_url", image_url: { url: "data:image/png;base64,AA" } }] },
    ];
    markCompletionsCache(withImage, undefined, true);
    expect(withImage[0]!.content as unknown[]).toEqual([
      { type: "text", text: "look", cache_control: { type: "ephemeral" } },
      { type: "image_url", image_url: { url: "data:image/png;base64,AA" } },
    ]);
    const oneOff: ChatCompletionMessageParam[] = [
      { role: "system", content: "sys" },
      { role: "user", content: "summarize" },
    ];
    markCompletionsCache(oneOff, undefined, false);
    expect(oneOff[1]).toEqual({ role: "user", content: "summarize" });
    expect(JSON.stringify(oneOff[0])).toContain("cache_control");
  });
});
