import { describe, expect, test } from "bun:test";
import type { MessageCreateParamsStreaming } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { streamAnthropic } from "../../../src/providers/anthropic.ts";
import { loadModels } from "../../../src/providers/models.ts";
import { streamOpenAICompletions } from "../../../src/providers/openai-completions.ts";
import { streamOpenAIResponses } from "../../../src/providers/openai-responses.ts";
import {
  anthropicReasoning,
  completionsReasoning,
  responsesReasoning,
  type AnthropicReasoning,
  type CompletionsReasoning,
  type ResponsesReasoning,
} from "../../../src/providers/reasoning-params.ts";
import type { Model, StreamFn, ThinkingLevel } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { request, run } from "./helpers.ts";

/**
 * For each API and reasoning kind: the builder's part of the body is written as the SDK's request
 * type (so tsc checks it), and the same part arrives at the fake server through the real SDK.
 */
const registry = loadModels(mkdtempSync(join(tmpdir(), "pion-reasoning-")), {});
const catalog = (provider: string, id: string): Model => {
  const m = registry.find(provider, id);
  if (!m) throw new Error(`${provider}/${id} is not in the catalog`);
  return m;
};
const signal = () => new AbortController().signal;

type Case<T> = { kind: string; model: Model; level: ThinkingLevel; expected: T };

async function roundTrip<T extends object>(stream: StreamFn, build: (m: Model, l: ThinkingLevel) => T, baseUrl: (url: string) => string, cases: Case<T>[]) {
  await using fake = startFakeProvider({ replies: cases.map(() => ({ blocks: [{ type: "text" as const, text: "ok" }] })) });
  for (const c of cases) {
    const model = { ...c.model, baseUrl: baseUrl(fake.url) };
    expect({ kind: c.kind, part: build(model, c.level) }).toEqual({ kind: c.kind, part: c.expected });
    const { message } = await run(stream(request(model, { thinkingLevel: c.level }), signal()));
    expect(message.stopReason).toBe("stop");
  }
  return cases.map((c, i) => {
    const body = fake.requests[i]!.body as Record<string, unknown>;
    const part = Object.fromEntries(Object.keys(c.expected).map((k) => [k, body[k]]));
    return { kind: c.kind, part, body };
  });
}

describe("Anthropic Messages", () => {
  test.concurrent("effort, budget, toggle, off and none reach the API as built", async () => {
    const opus = catalog("anthropic", "claude-opus-4-6");
    const cases: Case<AnthropicReasoning>[] = [
      { kind: "effort", model: opus, level: "high", expected: { max_tokens: 128000, thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: "high" } } },
      { kind: "effort max", model: opus, level: "max", expected: { max_tokens: 128000, thinking: { type: "adaptive", display: "summarized" }, output_config: { effort: "max" } } },
      { kind: "budget", model: catalog("anthropic", "claude-3-7-sonnet-20250219"), level: "medium", expected: { max_tokens: 64000, thinking: { type: "enabled", budget_tokens: 10240 } } },
      { kind: "toggle", model: catalog("kimi-for-coding", "k2p5"), level: "high", expected: { max_tokens: 32768, thinking: { type: "enabled", budget_tokens: 20480 } } },
      { kind: "off", model: opus, level: "off", expected: { max_tokens: 128000, thinking: { type: "disabled" } } },
      { kind: "none", model: catalog("anthropic", "claude-3-5-sonnet-20241022"), level: "high", expected: { max_tokens: 8192 } },
    ];
    const sent = await roundTrip(streamAnthropic, anthropicReasoning, (url) => url, cases);
    expect(sent.map((s) => ({ kind: s.kind, part: s.part }))).toEqual(cases.map((c) => ({ kind: c.kind, part: c.expected })));
    expect(sent.filter((s) => "output_config" in s.body).map((s) => s.kind)).toEqual(["effort", "effort max"]);
    expect("thinking" in sent.at(-1)!.body).toBe(false);
    // The whole body is one the SDK's type accepts.
    const body: MessageCreateParamsStreaming = { model: opus.id, messages: [], stream: true, ...cases[0]!.expected };
    expect(body.thinking).toEqual({ type: "adaptive", display: "summarized" });
  });
});

describe("OpenAI Responses", () => {
  test.concurrent("effort, none for off, an always-reasoning model's least, fixed and none reach the API as built", async () => {
    const include: ResponsesReasoning["include"] = ["reasoning.encrypted_content"];
    const cases: Case<ResponsesReasoning>[] = [
      { kind: "effort", model: catalog("openai", "gpt-5.1"), level: "low", expected: { include, reasoning: { effort: "low", summary: "auto" } } },
      { kind: "off is effort none", model: catalog("openai", "gpt-5.1"), level: "off", expected: { include, reasoning: { effort: "none" } } },
      { kind: "xhigh", model: catalog("openai", "gpt-5.2"), level: "xhigh", expected: { include, reasoning: { effort: "xhigh", summary: "auto" } } },
      // a compaction asks for "off"; gpt-5 cannot stop reasoning and gets its least
      { kind: "off without none", model: catalog("openai", "gpt-5"), level: "off", expected: { include, reasoning: { effort: "minimal", summary: "auto" } } },
      { kind: "single effort", model: catalog("openai", "gpt-5-pro"), level: "low", expected: { include, reasoning: { effort: "high", summary: "auto" } } },
      { kind: "fixed off", model: catalog("openai", "gpt-5-chat-latest"), level: "off", expected: { include } },
      { kind: "none", model: catalog("openai", "gpt-4.1"), level: "high", expected: { include: undefined, reasoning: undefined } },
    ];
    const sent = await roundTrip(streamOpenAIResponses, responsesReasoning, (url) => `${url}/v1`, cases);
    expect(sent.map((s) => ({ kind: s.kind, part: s.part }))).toEqual(cases.map((c) => ({ kind: c.kind, part: c.expected })));
    expect(["reasoning" in sent[5]!.body, "include" in sent[6]!.body, "reasoning" in sent[6]!.body]).toEqual([false, false, false]);
    const body: ResponseCreateParamsStreaming = { model: "gpt-5.1", input: [], stream: true, ...cases[1]!.expected };
    expect(body.reasoning).toEqual({ effort: "none" });
  });
});

describe("OpenAI Chat Completions", () => {
  test.concurrent("effort, budget, toggle, off, fixed and none reach the API as built", async () => {
    const deepseek = catalog("deepseek", "deepseek-v4-flash");
    const gemini = catalog("google", "gemini-2.5-flash");
    const glm = catalog("zai", "glm-4.5");
    const cases: Case<CompletionsReasoning>[] = [
      { kind: "effort", model: deepseek, level: "max", expected: { reasoning_effort: "max" } },
      { kind: "effort, off by the toggle", model: deepseek, level: "off", expected: { thinking: { type: "disabled" } } },
      { kind: "effort, off is none", model: catalog("xai", "grok-4.3"), level: "off", expected: { reasoning_effort: "none" } },
      { kind: "budget", model: gemini, level: "medium", expected: { reasoning_effort: "medium" } },
      { kind: "budget off", model: gemini, level: "off", expected: { reasoning_effort: "none" } },
      { kind: "toggle on", model: glm, level: "high", expected: { thinking: { type: "enabled" } } },
      { kind: "toggle off", model: glm, level: "off", expected: { thinking: { type: "disabled" } } },
      { kind: "fixed", model: catalog("deepseek", "deepseek-reasoner"), level: "low", expected: { reasoning_effort: "low" } },
      { kind: "none", model: catalog("groq", "llama-3.3-70b-versatile"), level: "high", expected: { reasoning_effort: undefined, thinking: undefined } },
    ];
    const sent = await roundTrip(streamOpenAICompletions, completionsReasoning, (url) => `${url}/v1`, cases);
    expect(sent.map((s) => ({ kind: s.kind, part: s.part }))).toEqual(cases.map((c) => ({ kind: c.kind, part: c.expected })));
    expect(sent.map((s) => ["reasoning_effort" in s.body, "thinking" in s.body])).toEqual([
      [true, false],
      [false, true],
      [true, false],
      [true, false],
      [true, false],
      [false, true],
      [false, true],
      [true, false],
      [false, false],
    ]);
    const { thinking: _, ...typed } = cases[0]!.expected;
    const body: ChatCompletionCreateParamsStreaming = { model: deepseek.id, messages: [], stream: true, ...typed };
    expect(body.reasoning_effort).toBe("max");
  });
});
