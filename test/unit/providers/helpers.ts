import type { FakeProvider } from "../../support/fake-provider.ts";
import type { AssistantMessage, AssistantMessageEvent, AssistantStream, Api, LlmRequest, Message, Model, StreamFn } from "../../../src/providers/types.ts";

/** A Model aimed at the fake's /v1, or at a base URL given as is. */
export function testModel(target: FakeProvider | string, api: Api, over: Partial<Model> = {}): Model {
  return {
    id: "gpt-test",
    name: "GPT test",
    api,
    provider: "openai",
    baseUrl: typeof target === "string" ? target : `${target.url}/v1`,
    reasoning: false,
    input: ["text", "image"],
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
    contextWindow: 128000,
    maxTokens: 4096,
    ...over,
  };
}

export function request(model: Model, over: Partial<LlmRequest> = {}): LlmRequest {
  return {
    model,
    apiKey: "sk-test",
    systemPrompt: "You are terse.",
    messages: [{ role: "user", content: "hi", timestamp: 1 }],
    tools: [],
    thinkingLevel: "off",
    ...over,
  };
}

export async function run(stream: AssistantStream): Promise<{ events: AssistantMessageEvent[]; message: AssistantMessage }> {
  const events: AssistantMessageEvent[] = [];
  for await (const ev of stream) events.push(ev);
  return { events, message: await stream.result() };
}

/**
 * Abort once the first delta arrives; returns the final message. The scripted reply stalls
 * after its first chunks and never ends by itself, so only the abort can settle the stream
 * (how long that takes is a figure: bench/abort.ts).
 */
export async function abortAfterFirstDelta(fn: StreamFn, req: LlmRequest): Promise<{ message: AssistantMessage }> {
  const controller = new AbortController();
  const stream = fn(req, controller.signal);
  const it = stream[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) if (r.value.type.endsWith("_delta")) break;
  controller.abort();
  return { message: await stream.result() };
}

const A = { api: "openai-completions" as const, provider: "openai", model: "gpt-test" };
const zeroUsage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };

/** user -> assistant (text + tool call) -> tool result -> user follow-up. */
export function toolHistory(assistant: Partial<AssistantMessage> = {}, callId = "call_abc"): Message[] {
  return [
    { role: "user", content: "read a.ts", timestamp: 1 },
    {
      role: "assistant",
      content: [
        { type: "text", text: "Reading it." },
        { type: "toolCall", id: callId, name: "read", arguments: { path: "a.ts" } },
      ],
      ...A,
      usage: zeroUsage,
      stopReason: "toolUse",
      timestamp: 2,
      ...assistant,
    },
    { role: "toolResult", toolCallId: callId, toolName: "read", content: [{ type: "text", text: "export {}" }], isError: false, timestamp: 3 },
    { role: "user", content: [{ type: "text", text: "thanks, now explain" }], timestamp: 4 },
  ];
}

export const readTool = {
  name: "read",
  description: "Read a file",
  parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
};

/** A server that answers every request with these SSE data payloads verbatim, then closes. */
export function rawSse(payloads: unknown[]): Disposable & { url: string } {
  const body = payloads.map((p) => `data: ${typeof p === "string" ? p : JSON.stringify(p)}\n\n`).join("");
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: () => new Response(body, { headers: { "content-type": "text/event-stream" } }),
  });
  return { url: `http://127.0.0.1:${server.port}/v1`, [Symbol.dispose]: () => void server.stop(true) };
}
