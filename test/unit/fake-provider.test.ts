import Anthropic from "@anthropic-ai/sdk";
import { describe, expect, test } from "bun:test";
import OpenAI from "openai";
import { startFakeProvider, type FakeProvider, type FakeReply } from "../support/fake-provider.ts";

const anthropic = (fake: FakeProvider, baseURL = fake.url) => new Anthropic({ apiKey: "k", baseURL, maxRetries: 0 });
const openai = (fake: FakeProvider, baseURL = `${fake.url}/v1`) => new OpenAI({ apiKey: "k", baseURL, maxRetries: 0 });
const userMessage = [{ role: "user" as const, content: "hi" }];

async function collect<T>(stream: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const ev of stream) out.push(ev);
  return out;
}

/** Iterates until the stream throws; returns what arrived before and the error. */
async function collectUntilError<T>(stream: AsyncIterable<T>): Promise<{ events: T[]; error: unknown }> {
  const events: T[] = [];
  try {
    for await (const ev of stream) events.push(ev);
  } catch (error) {
    return { events, error };
  }
  throw new Error(`stream ended without an error after ${events.length} events`);
}

const toolTurn: FakeReply = {
  blocks: [
    { type: "thinking", thinking: ["Let me ", "look."], signature: "sig-abc" },
    { type: "text", text: ["Reading ", "the file."] },
    { type: "toolCall", id: "toolu_01fixed", name: "read", arguments: { path: "src/a.ts", limit: 20 }, fragments: 4 },
  ],
  usage: { input: 120, output: 33, cacheRead: 1000, cacheWrite: 50 },
};

describe("Anthropic Messages", () => {
  test.concurrent("messages.stream() reassembles thinking, text and a fragmented tool call", async () => {
    await using fake = startFakeProvider({ replies: [toolTurn] });
    const stream = anthropic(fake).messages.stream({ model: "claude-x", max_tokens: 100, messages: userMessage });
    const events = await collect(stream);
    const final = await stream.finalMessage();

    expect(final.id).toMatch(/^msg_01\w{22}$/);
    expect(final.model).toBe("claude-x");
    expect(final.stop_reason).toBe("tool_use");
    expect(final.content).toMatchObject([
      { type: "thinking", thinking: "Let me look.", signature: "sig-abc" },
      { type: "text", text: "Reading the file." },
      { type: "tool_use", id: "toolu_01fixed", name: "read", input: { path: "src/a.ts", limit: 20 } },
    ]);
    expect(final.usage).toMatchObject({
      input_tokens: 120,
      output_tokens: 33,
      cache_read_input_tokens: 1000,
      cache_creation_input_tokens: 50,
    });
    const deltas = events.flatMap((e) => (e.type === "content_block_delta" ? [e.delta] : []));
    expect(deltas).toEqual([
      { type: "thinking_delta", thinking: "Let me " },
      { type: "thinking_delta", thinking: "look." },
      { type: "signature_delta", signature: "sig-abc" },
      { type: "text_delta", text: "Reading " },
      { type: "text_delta", text: "the file." },
      ...['{"path":', '"src/a.t', 's","limi', 't":20}'].map((partial_json) => ({ type: "input_json_delta" as const, partial_json })),
    ]);
  });

  test.concurrent("raw create({stream:true}): message_start usage, max_tokens, recorded request", async () => {
    await using fake = startFakeProvider();
    fake.enqueue({ blocks: [{ type: "text", text: "cut" }], stopReason: "length", usage: { input: 7, output: 99 } });
    const stream = await anthropic(fake).messages.create({
      model: "claude-x",
      max_tokens: 99,
      system: "be brief",
      messages: userMessage,
      stream: true,
    });
    const events = await collect(stream);

    expect(events.map((e) => e.type)).toEqual([
      "message_start",
      "content_block_start",
      "content_block_delta",
      "content_block_stop",
      "message_delta",
      "message_stop",
    ]);
    const [start] = events;
    if (start?.type !== "message_start") throw new Error("no message_start");
    expect(start.message.usage).toMatchObject({ input_tokens: 7, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 });
    expect(events[4]).toMatchObject({ delta: { stop_reason: "max_tokens" }, usage: { output_tokens: 99 } });

    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]).toMatchObject({
      api: "anthropic-messages",
      path: "/v1/messages",
      method: "POST",
      headers: { authorization: "Bearer k", "anthropic-version": expect.any(String) },
      body: { model: "claude-x", max_tokens: 99, system: "be brief", messages: userMessage, stream: true },
    });
    expect(fake.remaining).toBe(0);
  });

  test.concurrent("HTTP 529 surfaces as APIError with status 529 and overloaded_error", async () => {
    await using fake = startFakeProvider({ replies: [{ kind: "http_error", status: 529 }] });
    const error = await anthropic(fake)
      .messages.create({ model: "m", max_tokens: 1, messages: userMessage, stream: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error).toMatchObject({
      status: 529,
      type: "overloaded_error",
      error: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
  });

  test.concurrent("an in-stream error event after some blocks throws an APIError", async () => {
    await using fake = startFakeProvider({
      replies: [{ kind: "stream_error", afterBlocks: [{ type: "text", text: "par" }], message: "Overloaded" }],
    });
    const stream = await anthropic(fake).messages.create({ model: "m", max_tokens: 1, messages: userMessage, stream: true });
    const { events, error } = await collectUntilError(stream);
    expect(events.map((e) => e.type)).toEqual(["message_start", "content_block_start", "content_block_delta", "content_block_stop"]);
    expect(error).toBeInstanceOf(Anthropic.APIError);
    expect(error).toMatchObject({ type: "overloaded_error" });
    expect(String(error)).toContain("Overloaded");
  });

  test.concurrent("a mid-stream disconnect makes the SDK stream throw", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c"] }], disconnectAfterChunks: 3 }] });
    const stream = anthropic(fake).messages.stream({ model: "m", max_tokens: 1, messages: userMessage });
    const { events, error } = await collectUntilError(stream);
    expect(events.map((e) => e.type)).toEqual(["message_start", "content_block_start", "content_block_delta"]);
    expect(error).toBeInstanceOf(Error);
  });
});

describe("OpenAI Chat Completions", () => {
  test.concurrent("stream with include_usage: reasoning, text, fragmented tool calls, usage", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          ...toolTurn,
          blocks: [
            ...toolTurn.blocks,
            { type: "toolCall", name: "bash", arguments: '{"command":"ls"}', fragments: 2 },
          ],
        },
      ],
    });
    const stream = await openai(fake).chat.completions.create({
      model: "gpt-x",
      messages: userMessage,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = await collect(stream);

    expect(chunks[0]?.id).toMatch(/^chatcmpl-\w{29}$/);
    const deltas = chunks.flatMap((c) => c.choices.map((ch) => ch.delta));
    const reasoning = deltas.map((d) => (d as { reasoning_content?: string }).reasoning_content ?? "").join("");
    expect(reasoning).toBe("Let me look.");
    expect(deltas.map((d) => d.content ?? "").join("")).toBe("Reading the file.");

    const calls: { id?: string; name?: string; args: string }[] = [];
    for (const tc of deltas.flatMap((d) => d.tool_calls ?? [])) {
      const call = (calls[tc.index] ??= { args: "" });
      call.id ??= tc.id;
      call.name ??= tc.function?.name;
      call.args += tc.function?.arguments ?? "";
    }
    expect(calls).toEqual([
      { id: "toolu_01fixed", name: "read", args: '{"path":"src/a.ts","limit":20}' },
      { id: expect.stringMatching(/^call_\w{24}$/), name: "bash", args: '{"command":"ls"}' },
    ]);
    expect(deltas.flatMap((d) => d.tool_calls ?? []).filter((tc) => tc.index === 1)).toHaveLength(3);

    expect(chunks.at(-2)?.choices[0]?.finish_reason).toBe("tool_calls");
    expect(chunks.at(-1)).toMatchObject({
      choices: [],
      usage: {
        prompt_tokens: 1170,
        completion_tokens: 33,
        total_tokens: 1203,
        prompt_tokens_details: { cached_tokens: 1000, cache_write_tokens: 50 },
      },
    });
    expect(fake.requests[0]).toMatchObject({ api: "openai-completions", path: "/v1/chat/completions", headers: { authorization: "Bearer k" } });
  });

  test.concurrent("the SDK's stream helper accepts the chunks; no usage chunk unless asked; base URL without /v1", async () => {
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "text", text: "hello" }, { type: "toolCall", name: "ls", arguments: {} }] }],
    });
    const stream = openai(fake, fake.url).chat.completions.stream({ model: "gpt-x", messages: userMessage });
    const chunks = await collect(stream);
    const final = await stream.finalChatCompletion();

    expect(final.choices[0]).toMatchObject({
      finish_reason: "tool_calls",
      message: { role: "assistant", content: "hello", tool_calls: [{ type: "function", function: { name: "ls", arguments: "{}" } }] },
    });
    expect(chunks.every((c) => c.usage === undefined)).toBe(true);
    expect(fake.requests[0]?.path).toBe("/chat/completions");
  });

  test.concurrent("HTTP 429 surfaces as RateLimitError with the OpenAI error body", async () => {
    await using fake = startFakeProvider({ replies: [{ kind: "http_error", status: 429, message: "slow down", headers: { "retry-after": "0" } }] });
    const error = await openai(fake)
      .chat.completions.create({ model: "m", messages: userMessage, stream: true })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "rate_limit_exceeded", type: "rate_limit_exceeded", message: "429 slow down" });
  });

  test.concurrent("an error chunk mid-stream throws an APIError; a disconnect throws too", async () => {
    await using fake = startFakeProvider({
      replies: [
        { kind: "stream_error", afterBlocks: [{ type: "text", text: "x" }], message: "upstream broke" },
        { blocks: [{ type: "text", text: ["a", "b"] }], disconnectAfterChunks: 2 },
      ],
    });
    const client = openai(fake);
    const first = await collectUntilError(await client.chat.completions.create({ model: "m", messages: userMessage, stream: true }));
    expect(first.events).toHaveLength(2);
    expect(first.error).toBeInstanceOf(OpenAI.APIError);
    expect(String(first.error)).toContain("upstream broke");

    const second = await collectUntilError(await client.chat.completions.create({ model: "m", messages: userMessage, stream: true }));
    expect(second.events.map((c) => c.choices[0]?.delta.content)).toEqual(["", "a"]);
    expect(second.error).toBeInstanceOf(Error);
  });
});

describe("OpenAI Responses", () => {
  test.concurrent("create({stream:true}) emits the item lifecycle and completed usage", async () => {
    await using fake = startFakeProvider({ replies: [toolTurn] });
    const stream = await openai(fake).responses.create({ model: "gpt-x", input: "hi", stream: true });
    const events = await collect(stream);

    expect(events.map((e): string => e.type)).toEqual([
      "response.created",
      "response.in_progress",
      "response.output_item.added",
      "response.reasoning_summary_part.added",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.delta",
      "response.reasoning_summary_text.done",
      "response.reasoning_summary_part.done",
      "response.output_item.done",
      "response.output_item.added",
      "response.content_part.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_text.done",
      "response.content_part.done",
      "response.output_item.done",
      "response.output_item.added",
      ...Array<string>(4).fill("response.function_call_arguments.delta"),
      "response.function_call_arguments.done",
      "response.output_item.done",
      "response.completed",
    ]);
    expect(events.map((e) => e.sequence_number)).toEqual(events.map((_, i) => i));
    const last = events.at(-1);
    if (last?.type !== "response.completed") throw new Error("not completed");
    expect(last.response.id).toMatch(/^resp_\w{48}$/);
    expect(last.response.status).toBe("completed");
    expect(last.response.usage).toEqual({
      input_tokens: 1170,
      input_tokens_details: { cached_tokens: 1000, cache_write_tokens: 50 },
      output_tokens: 33,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1203,
    });
    expect(last.response.output).toMatchObject([
      { type: "reasoning", encrypted_content: "sig-abc", summary: [{ type: "summary_text", text: "Let me look." }] },
      { type: "message", role: "assistant", content: [{ type: "output_text", text: "Reading the file." }] },
      { type: "function_call", call_id: "toolu_01fixed", name: "read", arguments: '{"path":"src/a.ts","limit":20}' },
    ]);
    const args = events.flatMap((e) => (e.type === "response.function_call_arguments.delta" ? [e.delta] : []));
    expect(JSON.parse(args.join(""))).toEqual({ path: "src/a.ts", limit: 20 });
    expect(fake.requests[0]).toMatchObject({ api: "openai-responses", path: "/v1/responses", body: { input: "hi" } });
  });

  test.concurrent("the SDK's ResponseStream accumulates it; length ends with response.incomplete", async () => {
    await using fake = startFakeProvider({
      replies: [
        { blocks: [{ type: "text", text: ["He", "llo"] }, { type: "toolCall", name: "ls", arguments: {}, id: "call_x" }] },
        { blocks: [{ type: "text", text: "cut" }], stopReason: "length" },
      ],
    });
    const client = openai(fake, fake.url);
    const final = await client.responses.stream({ model: "gpt-x", input: "hi" }).finalResponse();
    expect(final.output_text).toBe("Hello");
    expect(final.output[1]).toMatchObject({ type: "function_call", call_id: "call_x", name: "ls", arguments: "{}" });

    const events = await collect(await client.responses.create({ model: "gpt-x", input: "hi", stream: true }));
    expect(events.at(-1)).toMatchObject({
      type: "response.incomplete",
      response: { status: "incomplete", incomplete_details: { reason: "max_output_tokens" }, usage: { output_tokens: 5 } },
    });
    expect(fake.requests.map((r) => r.path)).toEqual(["/responses", "/responses"]);
  });

  test.concurrent("stream_error ends with response.failed carrying the error", async () => {
    await using fake = startFakeProvider({ replies: [{ kind: "stream_error", message: "boom", errorType: "rate_limit_exceeded" }] });
    const events = await collect(await openai(fake).responses.create({ model: "m", input: "hi", stream: true }));
    expect(events.at(-1)).toMatchObject({
      type: "response.failed",
      response: { status: "failed", error: { code: "rate_limit_exceeded", message: "boom" } },
    });
  });
});

describe("server behaviour", () => {
  test.concurrent("an unexpected extra request gets HTTP 500 that the SDK does not retry", async () => {
    await using fake = startFakeProvider();
    const error = await new Anthropic({ apiKey: "k", baseURL: fake.url })
      .messages.create({ model: "m", max_tokens: 1, messages: userMessage, stream: true })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500 });
    expect(String(error)).toContain("fake provider: no scripted reply left");
    expect(fake.requests).toHaveLength(1);
    expect(fake.failures).toEqual([expect.stringContaining("no scripted reply left")]);
  });

  test.concurrent("onRequest sees each request; a throwing hook refuses it", async () => {
    const seen: string[] = [];
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "text", text: "ok" }] }, { blocks: [{ type: "text", text: "never" }] }],
      onRequest(req) {
        seen.push(req.path);
        if (seen.length === 2) throw new Error("tools missing");
      },
    });
    const client = openai(fake);
    await collect(await client.chat.completions.create({ model: "m", messages: userMessage, stream: true }));
    const error = await client.chat.completions.create({ model: "m", messages: userMessage, stream: true }).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 500 });
    expect(fake.failures).toEqual(["fake provider: onRequest failed: tools missing"]);
    expect(seen).toEqual(["/v1/chat/completions", "/v1/chat/completions"]);
    expect(fake.remaining).toBe(1);
  });

  test.concurrent("raw paths: /messages without /v1 works, unknown paths and non-streaming requests are refused", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const post = (path: string, body: unknown) =>
      fetch(`${fake.url}${path}`, { method: "POST", body: JSON.stringify(body), headers: { "content-type": "application/json" } });

    expect((await post("/v1/models", {})).status).toBe(500);
    const plain = await post("/messages", { model: "m", stream: false });
    expect(plain.status).toBe(500);
    expect(await plain.json()).toMatchObject({ type: "error", error: { message: expect.stringContaining("stream: true") } });

    const res = await post("/messages", { model: "m", stream: true });
    expect(res.headers.get("content-type")).toStartWith("text/event-stream");
    const text = await res.text();
    expect(text).toStartWith("event: message_start\ndata: {");
    expect(text).toEndWith('event: message_stop\ndata: {"type":"message_stop"}\n\n');
    expect(fake.requests.map((r) => r.api)).toEqual([undefined, "anthropic-messages", "anthropic-messages"]);
  });

  test.concurrent("stallAfterChunks keeps the connection open until the client aborts", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "abc" }], stallAfterChunks: 2, chunkDelayMs: 5 }] });
    const abort = new AbortController();
    const stream = await anthropic(fake).messages.create(
      { model: "m", max_tokens: 1, messages: userMessage, stream: true },
      { signal: abort.signal },
    );
    const it = stream[Symbol.asyncIterator]();
    expect((await it.next()).value).toMatchObject({ type: "message_start" });
    expect((await it.next()).value).toMatchObject({ type: "content_block_start" });
    // Proving that nothing arrives needs a bounded wait.
    const next = it.next();
    expect(await Promise.race([next.then(() => "event"), Bun.sleep(150).then(() => "stalled")])).toBe("stalled");
    abort.abort();
    expect(await next).toMatchObject({ done: true });
  });

  test.concurrent("waitForRequests resolves once enough requests have arrived", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const waiting = fake.waitForRequests(1);
    const done = collect(await openai(fake).responses.create({ model: "m", input: "q", stream: true }));
    expect((await waiting)[0]?.body).toMatchObject({ model: "m", input: "q" });
    await done;
    await expect(fake.waitForRequests(2, 20)).rejects.toThrow("1 of 2 requests");
  });
});
