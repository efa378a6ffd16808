import { describe, expect, test } from "bun:test";
import { piMessagesHeaders, piMessagesPayload, runPiMessages, streamPiMessages } from "../../../src/providers/pi-messages.ts";
import type { LlmRequest } from "../../../src/providers/types.ts";
import { request, run, testModel } from "./helpers.ts";

const model = testModel("http://gw.test/api/", "pi-messages", { id: "gw-model", provider: "gw", headers: { "x-team": "t1" }, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } });
const usage = { input: 12, output: 4, cacheRead: 2, cacheWrite: 0, totalTokens: 18, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } };

type Sent = { url: string; headers: Headers; body: unknown };

/** A request whose fetch answers with `body` (SSE text, or a Response) and records what was sent. */
function served(body: string | Response, over: Partial<LlmRequest> = {}): { req: LlmRequest; sent: Sent[] } {
  const sent: Sent[] = [];
  const fetch = (async (url: URL, init: RequestInit) => {
    sent.push({ url: String(url), headers: new Headers(init.headers), body: JSON.parse(String(init.body)) });
    return typeof body === "string" ? new Response(body, { headers: { "content-type": "text/event-stream" } }) : body;
  }) as unknown as typeof globalThis.fetch;
  return { req: request(model, { fetch, ...over }), sent };
}

const sse = (...events: Record<string, unknown>[]) => events.map((e) => `event: ${String(e.type)}\ndata: ${JSON.stringify(e)}\n\n`).join("");
const signal = () => new AbortController().signal;

describe("pi-messages request", () => {
  test("the payload: model id, the transcript as context, the reference's options in its order", () => {
    const req = request(model, { thinkingLevel: "medium", sessionId: "s-1", tools: [{ name: "read", description: "Read a file", parameters: { type: "object" } }] });
    const payload = piMessagesPayload(req);
    expect(JSON.parse(JSON.stringify(payload))).toEqual({
      model: "gw-model",
      context: {
        messages: [
          { role: "system", content: "You are terse.", toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object" } }], timestamp: 0 },
          { role: "user", content: "hi", timestamp: 1 },
        ],
      },
      options: { reasoning: "medium", sessionId: "s-1" },
    });
    expect(Object.keys(payload.options)).toEqual(["temperature", "maxTokens", "reasoning", "cacheRetention", "sessionId", "toolChoice"]);
  });

  test("thinking off sends no reasoning; no prompt and no tools, no system message; a caller's options and context go as given", () => {
    const bare = piMessagesPayload(request(model, { systemPrompt: "" }));
    expect(bare.options.reasoning).toBeUndefined();
    expect(bare.context).toEqual({ messages: [{ role: "user", content: "hi", timestamp: 1 }] });
    const context = { systemPrompt: "raw", messages: [] };
    const call = piMessagesPayload(request(model), { context, options: { temperature: 0.2, maxTokens: 99, toolChoice: "auto" } });
    expect(call.context).toBe(context);
    expect(call.options).toMatchObject({ temperature: 0.2, maxTokens: 99, toolChoice: "auto" });
  });

  test("cacheRetention: the caller's, else none for a compaction summary, else long only from PI_CACHE_RETENTION=long, else unset", () => {
    expect(piMessagesPayload(request(model, { cacheConversation: false }), { env: { PI_CACHE_RETENTION: "long" } }).options.cacheRetention).toBe("none");
    expect(piMessagesPayload(request(model), { env: { PI_CACHE_RETENTION: "long" } }).options.cacheRetention).toBe("long");
    expect(piMessagesPayload(request(model), { env: { PI_CACHE_RETENTION: "short" } }).options.cacheRetention).toBeUndefined();
    expect(piMessagesPayload(request(model), { options: { cacheRetention: "none" }, env: { PI_CACHE_RETENTION: "long" } }).options.cacheRetention).toBe("none");
  });

  test("headers: User-Agent lowest, then key and content type, the model's, the request's; any layer may override, null removes", () => {
    const req = request(model, { apiKey: "k1", authHeaders: { "X-Team": "t2", Accept: "application/x-ndjson" } });
    const h = piMessagesHeaders(req);
    expect(Object.fromEntries(h)).toEqual({ accept: "application/x-ndjson", authorization: "Bearer k1", "content-type": "application/json", "user-agent": expect.stringMatching(/^pi\//), "x-team": "t2" });
    const removed = piMessagesHeaders(request(model, { authHeaders: { "user-agent": null } as unknown as Record<string, string> }), { identityHeaders: { "User-Agent": "custom" } });
    expect(removed.has("user-agent")).toBe(false);
    expect(piMessagesHeaders(request(model), { identityHeaders: { "User-Agent": "custom" } }).get("user-agent")).toBe("custom");
  });

  test("POSTs to <baseUrl>/messages (one slash), ?debug=1 when asked; onPayload may replace the body", async () => {
    const { req, sent } = served(sse({ type: "start" }, { type: "done", reason: "stop", usage }));
    await run(runPiMessages(req, signal(), { debug: true, onPayload: (p) => ({ ...p, extra: 1 }) }));
    expect(sent[0]!.url).toBe("http://gw.test/api/messages?debug=1");
    expect(sent[0]!.body).toMatchObject({ model: "gw-model", extra: 1 });
  });
});

describe("pi-messages stream", () => {
  test("the server's events become pion's deltas and the final message: text, thinking, tool calls, usage, response fields", async () => {
    const { req } = served(
      sse(
        { type: "start" },
        { type: "thinking_start", contentIndex: 0 },
        { type: "thinking_delta", contentIndex: 0, delta: "hm" },
        { type: "thinking_end", contentIndex: 0, content: "hmm", contentSignature: "sig" },
        { type: "text_start", contentIndex: 1 },
        { type: "text_delta", contentIndex: 1, delta: "Hi" },
        { type: "text_end", contentIndex: 1, content: "Hi!", contentSignature: "tsig" },
        { type: "toolcall_start", contentIndex: 2, id: "c1", toolName: "read" },
        { type: "toolcall_delta", contentIndex: 2, delta: '{"path":' },
        { type: "toolcall_delta", contentIndex: 2, delta: '"a"}' },
        { type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } } },
        { type: "toolcall_start", contentIndex: 3, id: "c2", toolName: "ls" },
        { type: "toolcall_delta", contentIndex: 3, delta: '{"path":"."}' },
        { type: "toolcall_end", contentIndex: 3 },
        { type: "done", reason: "toolUse", usage, responseId: "r1", responseModel: "upstream-1", providerThinkingLevel: "high" },
      ),
    );
    const { events, message } = await run(streamPiMessages(req, signal()));
    expect(events.map((e) => e.type)).toEqual(["thinking_start", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end", "toolcall_start", "toolcall_delta", "toolcall_end"]);
    expect(events[2]).toEqual({ type: "thinking_end", contentIndex: 0, content: "hmm" });
    expect(events[6]).toEqual({ type: "toolcall_start", contentIndex: 2, id: "c1", toolName: "read" });
    expect(message).toMatchObject({
      api: "pi-messages",
      provider: "gw",
      model: "gw-model",
      stopReason: "toolUse",
      responseId: "r1",
      responseModel: "upstream-1",
      providerThinkingLevel: "high",
      content: [
        { type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
        { type: "text", text: "Hi!", textSignature: "tsig" },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "a" } },
        // No finished call from the server: the streamed arguments are parsed.
        { type: "toolCall", id: "c2", name: "ls", arguments: { path: "." } },
      ],
    });
    // Tokens as the server counted them; its cost total stands.
    expect(message.usage).toMatchObject({ input: 12, output: 4, cacheRead: 2, totalTokens: 18, cost: { total: 0.5, totalFromProvider: true } });
  });

  test("CRLF framing, data-only events and [DONE] are read", async () => {
    const body = ['data: {"type":"start"}', 'data: {"type":"text_start","contentIndex":0}', 'data: {"type":"text_delta","contentIndex":0,"delta":"ok"}', "data: [DONE]", `data: ${JSON.stringify({ type: "done", reason: "stop", usage })}`].join("\r\n\r\n") + "\r\n\r\n";
    const { message } = await run(streamPiMessages(served(body).req, signal()));
    expect([message.stopReason, message.content]).toEqual(["stop", [{ type: "text", text: "ok" }]]);
  });

  test("an error event ends the message with its reason, message and usage, keeping the content so far", async () => {
    const { req } = served(sse({ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "par" }, { type: "error", reason: "error", errorMessage: "upstream exploded", usage }));
    const { message } = await run(streamPiMessages(req, signal()));
    expect(message).toMatchObject({ stopReason: "error", errorMessage: "upstream exploded", content: [{ type: "text", text: "par" }], usage: { input: 12 } });
  });

  test.each([
    ["an index past the next block", sse({ type: "text_start", contentIndex: 1 }), "Invalid contentIndex 1 in pi-messages text_start event"],
    ["a delta with no block", sse({ type: "text_delta", contentIndex: 0, delta: "x" }), "Invalid contentIndex 0 in pi-messages text_delta event"],
    ["a string index", sse({ type: "text_start", contentIndex: "__proto__" }), 'Invalid contentIndex "__proto__" in pi-messages text_start event'],
    ["a delta for another block type", sse({ type: "text_start", contentIndex: 0 }, { type: "thinking_delta", contentIndex: 0, delta: "x" }), "pi-messages thinking_delta event for a text block at contentIndex 0"],
    ["an unknown stop reason", sse({ type: "done", reason: "maybe", usage }), 'Invalid reason "maybe" in pi-messages done event'],
    ["no terminal event", sse({ type: "start" }, { type: "text_start", contentIndex: 0 }), "gw stream ended without a terminal event"],
  ])("%s is an error", async (_name, body, errorMessage) => {
    const { message } = await run(streamPiMessages(served(body).req, signal()));
    expect({ stopReason: message.stopReason, errorMessage: message.errorMessage }).toEqual({ stopReason: "error", errorMessage });
  });

  test("HTTP errors: the body's error.message and code, else the body", async () => {
    const json = new Response(JSON.stringify({ error: { message: "bad key", code: "unauthorized" } }), { status: 401, statusText: "Unauthorized" });
    expect((await run(streamPiMessages(served(json).req, signal()))).message.errorMessage).toBe("401 Unauthorized: bad key (unauthorized)");
    const text = new Response("oops", { status: 500, statusText: "Internal Server Error" });
    expect((await run(streamPiMessages(served(text).req, signal()))).message.errorMessage).toBe("500 Internal Server Error: oops");
  });

  test("no API key fails before any request, naming the provider", async () => {
    const { req, sent } = served(sse({ type: "done", reason: "stop", usage }), { apiKey: undefined });
    const { message } = await run(streamPiMessages(req, signal()));
    expect(message.errorMessage).toBe('No API key provided for provider "gw"');
    expect(sent).toHaveLength(0);
  });

  test("an abort while streaming ends the message aborted", async () => {
    const controller = new AbortController();
    const fetch = (async (_url: URL, init: RequestInit) => {
      const enc = new TextEncoder();
      const body = new ReadableStream<Uint8Array>({
        start(ctl) {
          ctl.enqueue(enc.encode(sse({ type: "start" }, { type: "text_start", contentIndex: 0 }, { type: "text_delta", contentIndex: 0, delta: "a" })));
          init.signal?.addEventListener("abort", () => ctl.error(new DOMException("The operation was aborted.", "AbortError")));
        },
      });
      return new Response(body);
    }) as unknown as typeof globalThis.fetch;
    const stream = streamPiMessages(request(model, { fetch }), controller.signal);
    for await (const e of stream) if (e.type === "text_delta") controller.abort();
    const message = await stream.result();
    expect([message.stopReason, message.content]).toEqual(["aborted", [{ type: "text", text: "a" }]]);
  });
});
