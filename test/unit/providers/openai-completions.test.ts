import { describe, expect, test } from "bun:test";
import { streamOpenAICompletions } from "../../../src/providers/openai-completions.ts";
import type { ToolCall } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { abortAfterFirstDelta, rawSse, readTool, request, run, testModel, toolHistory } from "./helpers.ts";

const api = "openai-completions";
const signal = () => new AbortController().signal;
const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  created: 0,
  model: "m",
  choices: [{ index: 0, delta, finish_reason }],
});

describe("streamOpenAICompletions", () => {
  test.concurrent("streams thinking then text as delta events", async () => {
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "thinking", thinking: ["Let me ", "think."] }, { type: "text", text: ["Hello ", "world"] }] }],
    });
    const { events, message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));

    expect(events).toEqual([
      { type: "thinking_start", contentIndex: 0 },
      { type: "thinking_delta", contentIndex: 0, delta: "Let me " },
      { type: "thinking_delta", contentIndex: 0, delta: "think." },
      { type: "thinking_end", contentIndex: 0, content: "Let me think." },
      { type: "text_start", contentIndex: 1 },
      { type: "text_delta", contentIndex: 1, delta: "Hello " },
      { type: "text_delta", contentIndex: 1, delta: "world" },
      { type: "text_end", contentIndex: 1, content: "Hello world" },
    ]);
    expect(message.content).toEqual([
      { type: "thinking", thinking: "Let me think." },
      { type: "text", text: "Hello world" },
    ]);
    expect(message).toMatchObject({ stopReason: "stop", api, provider: "openai", model: "gpt-test" });
    expect(message.responseId).toMatch(/^chatcmpl-/);
    expect(message.errorMessage).toBeUndefined();
  });

  test.concurrent("fragmented arguments and two tool calls in one message", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          blocks: [
            { type: "text", text: "Reading." },
            { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/a.ts", limit: 20 }, fragments: 4 },
            { type: "toolCall", id: "call_2", name: "ls", arguments: { path: "." }, fragments: 2 },
          ],
        },
      ],
    });
    const { events, message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));

    const read: ToolCall = { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/a.ts", limit: 20 } };
    const ls: ToolCall = { type: "toolCall", id: "call_2", name: "ls", arguments: { path: "." } };
    expect(message.stopReason).toBe("toolUse");
    expect(message.content).toEqual([{ type: "text", text: "Reading." }, read, ls]);
    expect(events.filter((e) => e.type.startsWith("toolcall"))).toEqual([
      { type: "toolcall_start", contentIndex: 1, id: "call_1", toolName: "read" },
      ...['{"path":', '"src/a.t', 's","limi', 't":20}'].map((delta) => ({ type: "toolcall_delta" as const, contentIndex: 1, delta })),
      { type: "toolcall_end", contentIndex: 1, toolCall: read },
      { type: "toolcall_start", contentIndex: 2, id: "call_2", toolName: "ls" },
      { type: "toolcall_delta", contentIndex: 2, delta: '{"path' },
      { type: "toolcall_delta", contentIndex: 2, delta: '":"."}' },
      { type: "toolcall_end", contentIndex: 2, toolCall: ls },
    ]);
  });

  test.concurrent("usage excludes cached tokens from input and is priced", async () => {
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "text", text: "ok" }], usage: { input: 1000, output: 500, cacheRead: 2000, cacheWrite: 100 } }],
    });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));

    expect(message.usage).toMatchObject({ input: 1000, output: 500, cacheRead: 2000, cacheWrite: 100, totalTokens: 3600 });
    expect(message.usage.cost.input).toBeCloseTo(0.003, 10);
    expect(message.usage.cost.output).toBeCloseTo(0.0075, 10);
    expect(message.usage.cost.total).toBeCloseTo(0.003 + 0.0075 + 0.0006 + 0.000375, 10);
  });

  test.concurrent("finish_reason length maps to stopReason length", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "cut" }], stopReason: "length" }] });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("length");
  });

  test.concurrent.each([
    [429, "Rate limit reached for gpt-test"],
    [500, "The server had an error"],
  ])("HTTP %d becomes stopReason error with status and provider message", async (status, text) => {
    await using fake = startFakeProvider({ replies: [{ kind: "http_error", status, message: text }] });
    const { events, message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));
    expect(events).toEqual([]);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe(`${status} ${text}`);
    expect(fake.requests).toHaveLength(1);
  });

  test.concurrent("an error inside the stream keeps what arrived and reports the message", async () => {
    await using fake = startFakeProvider({
      replies: [{ kind: "stream_error", afterBlocks: [{ type: "text", text: "partial" }], message: "upstream overloaded" }],
    });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("upstream overloaded");
    expect(message.content).toEqual([{ type: "text", text: "partial" }]);
  });

  test.concurrent("a mid-stream disconnect is an error", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c", "d"] }], disconnectAfterChunks: 3 }] });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBeTruthy();
  });

  test.concurrent("a stream that closes cleanly without finish_reason is an error", async () => {
    using server = rawSse([chunk({ content: "a" })]);
    const { message } = await run(streamOpenAICompletions(request(testModel(server.url, api)), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("stream ended without finish_reason");
    expect(message.content).toEqual([{ type: "text", text: "a" }]);
  });

  test.concurrent("`reasoning` deltas, usage on the finish chunk, a tool turn reported as stop", async () => {
    const call = { index: 0, id: "call_9", type: "function", function: { name: "ls", arguments: '{"path":"."}' } };
    const usage = { prompt_tokens: 30, completion_tokens: 7, total_tokens: 37 };
    using server = rawSse([chunk({ reasoning: "hmm" }), chunk({ tool_calls: [call] }), { ...chunk({}, "stop"), usage }, "[DONE]"]);
    const { message } = await run(streamOpenAICompletions(request(testModel(server.url, api)), signal()));
    expect(message.content).toEqual([
      { type: "thinking", thinking: "hmm" },
      { type: "toolCall", id: "call_9", name: "ls", arguments: { path: "." } },
    ]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.usage).toMatchObject({ input: 30, output: 7, cacheRead: 0, totalTokens: 37 });
  });

  test.concurrent("abort mid-stream (a stream that would never end) ends it with stopReason aborted", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks: 2 }] });
    const { message } = await abortAfterFirstDelta(streamOpenAICompletions, request(testModel(fake, api)));
    expect(message.stopReason).toBe("aborted");
    expect(message.errorMessage).toBe("The operation was aborted.");
  });

  test.concurrent("idle timeout fails a stalled stream", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b"] }], stallAfterChunks: 2 }] });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api), { idleTimeoutMs: 100 }), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("Request timed out: no data for 100 ms");
  });

  test.concurrent("request body: history, tools, effort, max tokens, usage option", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const model = testModel(fake, api, { reasoning: true, maxTokens: 8192 });
    await run(streamOpenAICompletions(request(model, { messages: toolHistory(), tools: [readTool], thinkingLevel: "medium" }), signal()));

    expect(fake.requests[0]!.path).toBe("/v1/chat/completions");
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer sk-test");
    expect(fake.requests[0]!.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "developer", content: "You are terse." },
        { role: "user", content: "read a.ts" },
        {
          role: "assistant",
          content: "Reading it.",
          tool_calls: [{ id: "call_abc", type: "function", function: { name: "read", arguments: '{"path":"a.ts"}' } }],
        },
        { role: "tool", tool_call_id: "call_abc", content: "export {}" },
        { role: "user", content: "thanks, now explain" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_completion_tokens: 8192,
      tools: [{ type: "function", function: readTool }],
      reasoning_effort: "medium",
    });
  });

  test.concurrent("xhigh maps to high unless declared; no effort when off; system role outside openai", async () => {
    await using fake = startFakeProvider({ replies: Array.from({ length: 3 }, () => ({ blocks: [{ type: "text" as const, text: "ok" }] })) });
    const plain = testModel(fake, api, { reasoning: true, provider: "groq" });
    await run(streamOpenAICompletions(request(plain, { thinkingLevel: "xhigh" }), signal()));
    await run(streamOpenAICompletions(request({ ...plain, thinkingLevels: ["xhigh"] }, { thinkingLevel: "xhigh" }), signal()));
    await run(streamOpenAICompletions(request(plain, { thinkingLevel: "off" }), signal()));

    const bodies = fake.requests.map((r) => r.body as Record<string, unknown>);
    expect(bodies.map((b) => b.reasoning_effort)).toEqual(["high", "xhigh", undefined]);
    expect(bodies[0]!.messages).toEqual([
      { role: "system", content: "You are terse." },
      { role: "user", content: "hi" },
    ]);
  });

  test.concurrent("a base URL without a path gets /v1", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const { message } = await run(streamOpenAICompletions(request(testModel(fake, api, { baseUrl: fake.url })), signal()));
    expect(message.stopReason).toBe("stop");
    expect(fake.requests[0]!.path).toBe("/v1/chat/completions");
  });

  test.concurrent("tool-result images follow the tool messages in a user message", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }, { blocks: [{ type: "text", text: "ok" }] }] });
    const history = toolHistory();
    history[2] = { ...history[2]!, content: [{ type: "text", text: "shot" }, { type: "image", data: "AAAA", mimeType: "image/png" }] } as (typeof history)[2];
    await run(streamOpenAICompletions(request(testModel(fake, api), { messages: history, systemPrompt: "" }), signal()));
    await run(streamOpenAICompletions(request(testModel(fake, api, { input: ["text"] }), { messages: history, systemPrompt: "" }), signal()));

    const [withImages, textOnly] = fake.requests.map((r) => (r.body as { messages: unknown[] }).messages);
    expect(withImages!.slice(2)).toEqual([
      { role: "tool", tool_call_id: "call_abc", content: "shot\n(image attached in the next message)" },
      {
        role: "user",
        content: [
          { type: "text", text: "Images returned by the tool calls above:" },
          { type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } },
        ],
      },
      { role: "user", content: "thanks, now explain" },
    ]);
    expect(textOnly![2]).toEqual({ role: "tool", tool_call_id: "call_abc", content: "shot\n[image omitted: this model does not accept images]" });
  });
});
