import { describe, expect, test } from "bun:test";
import { streamOpenAIResponses } from "../../../src/providers/openai-responses.ts";
import type { AssistantMessage, ThinkingContent } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { abortAfterFirstDelta, rawSse, readTool, request, run, testModel, toolHistory } from "./helpers.ts";

const api = "openai-responses";
const signal = () => new AbortController().signal;

describe("streamOpenAIResponses", () => {
  test.concurrent("streams reasoning summary then text; keeps the encrypted reasoning item", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          blocks: [
            { type: "thinking", thinking: ["Let me ", "think."], signature: "gAAAA-secret" },
            { type: "text", text: ["Hello ", "world"] },
          ],
        },
      ],
    });
    const { events, message } = await run(streamOpenAIResponses(request(testModel(fake, api, { reasoning: true })), signal()));

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
    const [thinking, text] = message.content;
    expect(thinking).toMatchObject({ type: "thinking", thinking: "Let me think." });
    expect(JSON.parse((thinking as ThinkingContent).thinkingSignature!)).toEqual({
      id: expect.stringMatching(/^rs_/),
      encrypted_content: "gAAAA-secret",
      summary: [{ type: "summary_text", text: "Let me think." }],
    });
    expect(text).toMatchObject({ type: "text", text: "Hello world", textSignature: expect.stringMatching(/^msg_/) });
    expect(message.stopReason).toBe("stop");
    expect(message.responseId).toMatch(/^resp_/);
  });

  test.concurrent("fragmented arguments and two function calls; ids carry call_id|item id", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          blocks: [
            { type: "toolCall", id: "call_1", name: "read", arguments: { path: "src/a.ts", limit: 20 }, fragments: 4 },
            { type: "toolCall", id: "call_2", name: "ls", arguments: { path: "." } },
          ],
        },
      ],
    });
    const { events, message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));

    expect(message.stopReason).toBe("toolUse");
    expect(message.content).toEqual([
      { type: "toolCall", id: expect.stringMatching(/^call_1\|fc_/), name: "read", arguments: { path: "src/a.ts", limit: 20 } },
      { type: "toolCall", id: expect.stringMatching(/^call_2\|fc_/), name: "ls", arguments: { path: "." } },
    ]);
    expect(events.map((e) => (e.type === "toolcall_delta" ? e.delta : e.type))).toEqual([
      "toolcall_start",
      '{"path":',
      '"src/a.t',
      's","limi',
      't":20}',
      "toolcall_end",
      "toolcall_start",
      '{"path":"."}',
      "toolcall_end",
    ]);
  });

  test.concurrent("usage excludes cached tokens from input and is priced", async () => {
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "text", text: "ok" }], usage: { input: 1000, output: 500, cacheRead: 2000 } }],
    });
    const { message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));

    expect(message.usage).toMatchObject({ input: 1000, output: 500, cacheRead: 2000, cacheWrite: 0, totalTokens: 3500 });
    expect(message.usage.cost.total).toBeCloseTo(0.003 + 0.0075 + 0.0006, 10);
  });

  test.concurrent("response.incomplete for max_output_tokens maps to length", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "cut" }], stopReason: "length" }] });
    const { message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("length");
    expect(message.content).toEqual([{ type: "text", text: "cut", textSignature: expect.any(String) }]);
  });

  test.concurrent.each([
    [429, "Rate limit reached for gpt-test"],
    [500, "The server had an error"],
  ])("HTTP %d becomes stopReason error with status and provider message", async (status, text) => {
    await using fake = startFakeProvider({ replies: [{ kind: "http_error", status, message: text }] });
    const { events, message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));
    expect(events).toEqual([]);
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe(`${status} ${text}`);
  });

  test.concurrent("response.failed keeps what arrived and reports the provider message", async () => {
    await using fake = startFakeProvider({
      replies: [{ kind: "stream_error", afterBlocks: [{ type: "text", text: "partial" }], message: "upstream overloaded" }],
    });
    const { message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBe("upstream overloaded");
    expect(message.content).toMatchObject([{ type: "text", text: "partial" }]);
  });

  test.concurrent("an error event ends the message with the provider message", async () => {
    const created = { type: "response.created", sequence_number: 0, response: { id: "resp_1", status: "in_progress", output: [] } };
    using server = rawSse([created, { type: "error", sequence_number: 1, code: "server_error", message: "boom", param: null }]);
    const { message } = await run(streamOpenAIResponses(request(testModel(server.url, api)), signal()));
    expect(message).toMatchObject({ stopReason: "error", errorMessage: "boom", responseId: "resp_1" });
  });

  test.concurrent("a stream that closes before response.completed is an error; idle timeout fails a stall", async () => {
    using server = rawSse([{ type: "response.created", sequence_number: 0, response: { id: "resp_1", status: "in_progress", output: [] } }]);
    const cut = await run(streamOpenAIResponses(request(testModel(server.url, api)), signal()));
    expect(cut.message).toMatchObject({ stopReason: "error", errorMessage: "stream ended without response.completed" });

    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "a" }], stallAfterChunks: 3 }] });
    const stalled = await run(streamOpenAIResponses(request(testModel(fake, api), { idleTimeoutMs: 100 }), signal()));
    expect(stalled.message).toMatchObject({ stopReason: "error", errorMessage: "Request timed out: no data for 100 ms" });
  });

  test.concurrent("a mid-stream disconnect is an error", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c"] }], disconnectAfterChunks: 5 }] });
    const { message } = await run(streamOpenAIResponses(request(testModel(fake, api)), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toBeTruthy();
  });

  test.concurrent("abort mid-stream (a stream that would never end) ends it with stopReason aborted", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks: 6 }] });
    const { message } = await abortAfterFirstDelta(streamOpenAIResponses, request(testModel(fake, api)));
    expect(message.stopReason).toBe("aborted");
    expect(message.errorMessage).toBe("The operation was aborted.");
  });

  test.concurrent("a base URL without a path gets /v1", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const { message } = await run(streamOpenAIResponses(request(testModel(fake, api, { baseUrl: fake.url })), signal()));
    expect(message.stopReason).toBe("stop");
    expect(fake.requests[0]!.path).toBe("/v1/responses");
  });

  test.concurrent("request body: input items, tools, reasoning, max tokens", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const model = testModel(fake, api, { reasoning: true, maxTokens: 8192 });
    const own: Partial<AssistantMessage> = {
      api,
      content: [
        { type: "thinking", thinking: "plan", thinkingSignature: JSON.stringify({ id: "rs_1", encrypted_content: "enc", summary: [] }) },
        { type: "text", text: "Reading it.", textSignature: "msg_1" },
        { type: "toolCall", id: "call_abc|fc_1", name: "read", arguments: { path: "a.ts" } },
      ],
    };
    const history = toolHistory(own, "call_abc|fc_1");
    await run(streamOpenAIResponses(request(model, { messages: history, tools: [readTool], thinkingLevel: "high", sessionId: "s1" }), signal()));

    expect(fake.requests[0]!.path).toBe("/v1/responses");
    expect(fake.requests[0]!.body).toEqual({
      model: "gpt-test",
      instructions: "You are terse.",
      input: [
        { role: "user", content: "read a.ts" },
        { type: "reasoning", id: "rs_1", encrypted_content: "enc", summary: [] },
        { type: "message", role: "assistant", id: "msg_1", status: "completed", content: [{ type: "output_text", text: "Reading it.", annotations: [] }] },
        { type: "function_call", call_id: "call_abc", name: "read", arguments: '{"path":"a.ts"}', id: "fc_1" },
        { type: "function_call_output", call_id: "call_abc", output: "export {}" },
        { role: "user", content: [{ type: "input_text", text: "thanks, now explain" }] },
      ],
      stream: true,
      store: false,
      max_output_tokens: 8192,
      tools: [{ type: "function", ...readTool, strict: false }],
      include: ["reasoning.encrypted_content"],
      reasoning: { effort: "high", summary: "auto" },
      prompt_cache_key: "s1",
    });
  });

  test.concurrent("another provider's turn goes without item ids or reasoning; no reasoning params for plain models", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const foreign: Partial<AssistantMessage> = {
      api: "anthropic-messages",
      provider: "anthropic",
      content: [
        { type: "thinking", thinking: "plan", thinkingSignature: "sig" },
        { type: "toolCall", id: "toolu_1", name: "read", arguments: { path: "a.ts" } },
      ],
    };
    const history = toolHistory(foreign, "toolu_1");
    history[2] = { ...history[2]!, content: [{ type: "image", data: "AAAA", mimeType: "image/png" }] } as (typeof history)[2];
    await run(streamOpenAIResponses(request(testModel(fake, api), { messages: history }), signal()));

    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(body.input).toEqual([
      { role: "user", content: "read a.ts" },
      { type: "function_call", call_id: "toolu_1", name: "read", arguments: '{"path":"a.ts"}' },
      { type: "function_call_output", call_id: "toolu_1", output: [{ type: "input_image", detail: "auto", image_url: "data:image/png;base64,AAAA" }] },
      { role: "user", content: [{ type: "input_text", text: "thanks, now explain" }] },
    ]);
    expect(body.reasoning).toBeUndefined();
    expect(body.include).toBeUndefined();
  });
});
