import { describe, expect, test } from "bun:test";
import { streamAnthropic } from "../../../src/providers/anthropic.ts";
import type { AssistantMessage, Message } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { readTool, request, run, testModel } from "./helpers.ts";

const signal = () => new AbortController().signal;
const SIGNATURE = "EqQBCkgIAxABGAIiQ+signature/with=odd_chars";
const REDACTED = "EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIw";

describe("Anthropic thinking blocks", () => {
  test.concurrent("are replayed exactly as received, redacted ones redacted, to the model that signed them", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          blocks: [
            { type: "thinking", thinking: ["Let me ", "look  at it.\n"], signature: SIGNATURE },
            { type: "redacted_thinking", data: REDACTED },
            { type: "text", text: "Reading." },
            { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.ts" } },
          ],
        },
        { blocks: [{ type: "text", text: "done" }] },
      ],
    });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-test", provider: "anthropic", reasoning: true });
    const first = await run(streamAnthropic(request(model, { thinkingLevel: "high", tools: [readTool] }), signal()));
    expect(first.message.content.slice(0, 2)).toEqual([
      { type: "thinking", thinking: "Let me look  at it.\n", thinkingSignature: SIGNATURE },
      { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: REDACTED, redacted: true },
    ]);

    const history: Message[] = [
      { role: "user", content: "read a.ts", timestamp: 1 },
      first.message,
      { role: "toolResult", toolCallId: "toolu_1", toolName: "read", content: [{ type: "text", text: "export {}" }], isError: false, timestamp: 3 },
    ];
    await run(streamAnthropic(request(model, { thinkingLevel: "high", tools: [readTool], messages: history }), signal()));
    const sent = (fake.requests[1]!.body as { messages: { content: unknown }[] }).messages[1]!.content;
    expect(sent).toEqual([
      { type: "thinking", thinking: "Let me look  at it.\n", signature: SIGNATURE },
      { type: "redacted_thinking", data: REDACTED },
      { type: "text", text: "Reading." },
      { type: "tool_use", id: "toolu_1", name: "read", input: { path: "a.ts" } },
    ]);
  });

  test.concurrent("another model gets readable thinking as text and no redacted or foreign-signed block", async () => {
    await using fake = startFakeProvider({ replies: Array.from({ length: 3 }, () => ({ blocks: [{ type: "text" as const, text: "ok" }] })) });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-next", provider: "anthropic", reasoning: true });
    const turn = (over: Partial<AssistantMessage>): Message[] => [
      { role: "user", content: "hi", timestamp: 1 },
      {
        role: "assistant",
        content: [
          { type: "thinking", thinking: "plan", thinkingSignature: SIGNATURE },
          { type: "thinking", thinking: "[Reasoning redacted]", thinkingSignature: REDACTED, redacted: true },
          { type: "text", text: "hello" },
        ],
        api: "anthropic-messages",
        provider: "anthropic",
        model: "claude-test",
        usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
        stopReason: "stop",
        timestamp: 2,
        ...over,
      },
      { role: "user", content: "again", timestamp: 3 },
    ];
    await run(streamAnthropic(request(model, { messages: turn({}) }), signal()));
    await run(streamAnthropic(request(model, { messages: turn({ model: "claude-next", provider: "proxy" }) }), signal()));
    const responsesTurn = turn({ api: "openai-responses", provider: "openai", model: "gpt-5" });
    (responsesTurn[1] as AssistantMessage).content = [{ type: "thinking", thinking: "plan", thinkingSignature: '{"id":"rs_1","encrypted_content":"x","summary":[]}' }];
    await run(streamAnthropic(request(model, { messages: responsesTurn }), signal()));

    const assistantOf = (i: number) => (fake.requests[i]!.body as { messages: { content: unknown }[] }).messages[1]!.content;
    const asText = [
      { type: "text", text: "plan" },
      { type: "text", text: "hello" },
    ];
    expect(assistantOf(0)).toEqual(asText);
    expect(assistantOf(1)).toEqual(asText);
    expect(assistantOf(2)).toEqual([{ type: "text", text: "plan" }]);
  });
});
