import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { transcriptOf } from "../../../src/providers/transcript.ts";
import { streamMistral, mistralUrl, parseChunk } from "../../../src/providers/mistral.ts";
import { mistralIdMapper, mistralReasoning, toMistralBody } from "../../../src/providers/mistral-request.ts";
import { isContextOverflow } from "../../../src/providers/overflow.ts";
import { isRetryableAssistantError } from "../../../src/providers/retryable.ts";
import type { AssistantMessage, LlmRequest, Message, Model, ToolSpec } from "../../../src/providers/types.ts";
import { startFakeProvider, type FakeProvider, type FakeReply } from "../../support/fake-provider.ts";
import { request, run } from "./helpers.ts";

const REF = process.env.PION_REFERENCE_PKG;
// biome-ignore lint/suspicious/noExplicitAny: the reference's module is untyped here
type Mod = Record<string, any>;
const refAi = async (): Promise<Mod> => import(join(REF!, "..", "pi-ai", "dist", "compat.js"));

const LEVELS = { off: "none", minimal: null, low: null, medium: null, high: "high", xhigh: null, max: null } as const;

function mistralModel(target: FakeProvider | string, over: Partial<Model> = {}): Model {
  return {
    id: "mistral-small-latest",
    name: "Mistral Small",
    api: "mistral-conversations",
    provider: "mistral",
    baseUrl: typeof target === "string" ? target : `${target.url}/mistral`,
    reasoning: true,
    thinkingLevelMap: { ...LEVELS },
    input: ["text", "image"],
    cost: { input: 0.15, output: 0.6, cacheRead: 0.015, cacheWrite: 0 },
    contextWindow: 262144,
    maxTokens: 8192,
    ...over,
  };
}

const tools: ToolSpec[] = [
  { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } },
  { name: "ls", description: "List", parameters: { type: "object", properties: {} } },
];

const assistant = (model: Pick<Model, "api" | "provider" | "id">, content: AssistantMessage["content"], over: Partial<AssistantMessage> = {}): AssistantMessage => ({
  role: "assistant",
  content,
  api: model.api,
  provider: model.provider,
  model: model.id,
  usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
  stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop",
  timestamp: 2,
  ...over,
});

const png = Buffer.from("fakepng").toString("base64");

/** A history on `model` itself: thinking, text, a tool call with its result, an image. */
function nativeHistory(model: Model): Message[] {
  return [
    { role: "user", content: [{ type: "text", text: "look" }, { type: "image", data: png, mimeType: "image/png" }], timestamp: 1 },
    assistant(model, [
      { type: "thinking", thinking: "the file first" },
      { type: "text", text: "Reading." },
      { type: "toolCall", id: "aB3dE6gH9", name: "read", arguments: { path: "a.txt" } },
    ]),
    { role: "toolResult", toolCallId: "aB3dE6gH9", toolName: "read", content: [{ type: "text", text: "  alpha\n" }], isError: false, timestamp: 3 },
    assistant(model, [{ type: "text", text: "It says alpha." }]),
    { role: "user", content: "thanks", timestamp: 4 },
  ];
}

/** A history another provider made: its ids are not Mistral's, its thinking is not this model's. */
function foreignHistory(): Message[] {
  const claude = { api: "anthropic-messages" as const, provider: "anthropic", id: "claude-x" };
  return [
    { role: "user", content: "go", timestamp: 1 },
    assistant(claude, [
      { type: "thinking", thinking: "secret plan", thinkingSignature: "sig" },
      { type: "toolCall", id: "toolu_01AbCdEfGh", name: "read", arguments: { path: "a" } },
      { type: "toolCall", id: "toolu_01XyZ", name: "ls", arguments: {} },
    ]),
    { role: "toolResult", toolCallId: "toolu_01AbCdEfGh", toolName: "read", content: [{ type: "text", text: "A" }], isError: false, timestamp: 3 },
    { role: "toolResult", toolCallId: "toolu_01XyZ", toolName: "ls", content: [{ type: "text", text: "B" }], isError: false, timestamp: 3 },
    { role: "user", content: "next", timestamp: 4 },
  ];
}

const textReply = (): FakeReply => ({ blocks: [{ type: "text", text: "ok" }] });

/** The bodies the reference's streamSimpleMistral and pion's adapter send for one request. */
async function bothBodies(req: Omit<LlmRequest, "model">, modelOver: Partial<Model> = {}): Promise<[unknown, unknown, Record<string, string>, Record<string, string>]> {
  const ref = await refAi();
  await using fake = startFakeProvider({ replies: [textReply(), textReply()] });
  const model = mistralModel(fake, modelOver);
  const options: Mod = { apiKey: req.apiKey };
  if (req.thinkingLevel !== "off") options.reasoning = req.thinkingLevel;
  if (req.sessionId) options.sessionId = req.sessionId;
  const refStream = ref.streamSimpleMistral(model, transcriptOf(req), options);
  for await (const _ of refStream);
  expect((await refStream.result()).stopReason).toBe("stop");
  const mine = await streamMistral({ ...req, model }, new AbortController().signal).result();
  expect(mine.stopReason).toBe("stop");
  const [a, b] = fake.requests;
  return [a!.body, b!.body, a!.headers, b!.headers];
}

/** Tool call ids replaced by their order of first appearance, so two id schemes compare. */
function canonicalIds(body: unknown): unknown {
  const seen = new Map<string, string>();
  const rename = (id: string) => seen.get(id) ?? (seen.set(id, `id${seen.size}`), `id${seen.size - 1}`);
  const b = structuredClone(body) as { messages: Record<string, unknown>[] };
  for (const m of b.messages) {
    for (const c of (m.tool_calls as { id: string }[] | undefined) ?? []) c.id = rename(c.id);
    if (typeof m.tool_call_id === "string") m.tool_call_id = rename(m.tool_call_id);
  }
  return b;
}

describe.skipIf(!REF)("the request body matches the reference's streamSimpleMistral", () => {
  test("system prompt, tools, reasoning effort and the session's cache key", async () => {
    const [ref, mine, refHeaders, myHeaders] = await bothBodies(request(mistralModel("x"), { tools, thinkingLevel: "high", sessionId: "sess-1", apiKey: "mk" }));
    expect(mine).toEqual(ref);
    expect(mine).toMatchObject({ reasoning_effort: "high", prompt_cache_key: "sess-1", max_tokens: 8192, stream: true });
    for (const h of ["authorization", "x-affinity", "accept", "content-type"]) expect([h, myHeaders[h]]).toEqual([h, refHeaders[h]!]);
    expect(myHeaders.authorization).toBe("Bearer mk");
  });

  test("a history of the model's own: thinking parts, prefix false, tool calls and results, images", async () => {
    const model = mistralModel("x");
    const [ref, mine] = await bothBodies(request(model, { messages: nativeHistory(model), tools }));
    expect(mine).toEqual(ref);
    const messages = (mine as { messages: Record<string, unknown>[] }).messages;
    expect(messages[2]).toEqual({
      role: "assistant",
      prefix: false,
      content: [{ type: "thinking", thinking: [{ type: "text", text: "the file first" }] }, { type: "text", text: "Reading." }],
      tool_calls: [{ id: "aB3dE6gH9", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' }, index: 0 }],
    });
    expect(messages[1]!.content).toContainEqual({ type: "image_url", image_url: `data:image/png;base64,${png}` });
  });

  test("another provider's history: its thinking dropped, its ids mapped to nine characters, results following", async () => {
    const [ref, mine] = await bothBodies(request(mistralModel("x"), { messages: foreignHistory(), tools }));
    expect(canonicalIds(mine)).toEqual(canonicalIds(ref));
    const messages = (mine as { messages: { role: string; tool_calls?: { id: string }[]; tool_call_id?: string; content?: unknown }[] }).messages;
    const ids = messages[2]!.tool_calls!.map((c) => c.id);
    for (const id of ids) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(messages.slice(3, 5).map((m) => m.tool_call_id)).toEqual(ids);
    expect(messages[2]!.content).toBeUndefined();
  });

  test("reasoning: off as the map's none, a map without off sends nothing, a map-less reasoning model gets prompt_mode", async () => {
    const off = await bothBodies(request(mistralModel("x"), { thinkingLevel: "off" }));
    expect(off[1]).toEqual(off[0]);
    expect(off[1]).toMatchObject({ reasoning_effort: "none" });
    const large = { thinkingLevelMap: { off: null, minimal: null, low: "low", medium: "medium", high: "high", xhigh: null, max: null } };
    for (const level of ["off", "medium", "xhigh"] as const) {
      const [ref, mine] = await bothBodies(request(mistralModel("x"), { thinkingLevel: level }), large);
      expect([level, mine]).toEqual([level, ref]);
    }
    const magistral = { id: "magistral-medium-latest", thinkingLevelMap: undefined };
    for (const level of ["off", "high"] as const) {
      const [ref, mine] = await bothBodies(request(mistralModel("x"), { thinkingLevel: level }), magistral);
      expect([level, mine]).toEqual([level, ref]);
    }
  });

  test("an HTTP error reads the same: status and the provider's body", async () => {
    const ref = await refAi();
    const reply: FakeReply = { kind: "http_error", status: 429, message: "Requests rate limit exceeded" };
    await using fake = startFakeProvider({ replies: [reply, reply] });
    const model = mistralModel(fake);
    const refMsg = await ref.streamSimpleMistral(model, transcriptOf(request(model)), { apiKey: "k" }).result();
    const mine = await streamMistral(request(model, { apiKey: "k" }), new AbortController().signal).result();
    expect(mine.errorMessage).toBe(refMsg.errorMessage);
    expect(mine.errorMessage).toBe('Mistral API error (429): {"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":null}');
  });
});

describe("request building", () => {
  test("a catalog model's effort options decide the effort; no reasoning, no field", () => {
    const catalog = mistralModel("x", { thinkingLevelMap: undefined, reasoningOptions: [{ type: "effort", values: ["none", "high"] }] });
    expect(mistralReasoning(catalog, "medium")).toEqual({ reasoning_effort: "high" });
    expect(mistralReasoning(catalog, "off")).toEqual({ reasoning_effort: "none" });
    expect(mistralReasoning(mistralModel("x", { reasoning: false }), "high")).toEqual({});
    expect(mistralReasoning(mistralModel("x"), "medium")).toEqual({ reasoning_effort: "high" });
  });

  test("ids: a nine-character id stays, others map to distinct nine-character ids, the same on every request", () => {
    const a = mistralIdMapper();
    const b = mistralIdMapper();
    expect(a("aB3dE6gH9")).toBe("aB3dE6gH9");
    expect(a("call_aB3dE6gH")).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(b("aB3-dE6-gH9")).toBe("aB3dE6gH9");
    const long = "fc_0123456789|rs_abcdef";
    expect(a(long)).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(b(long)).toBe(a(long));
    // Two ids that clean up to the same nine characters still get two ids.
    expect(a("aB3dE6gH-9")).not.toBe(a("aB3dE6gH9"));
  });

  test("a failed turn is left out with its tool results; an error result says so; no system prompt, no system message", () => {
    const model = mistralModel("x");
    const messages: Message[] = [
      { role: "user", content: "go", timestamp: 1 },
      assistant(model, [{ type: "toolCall", id: "aaaaaaaaa", name: "ls", arguments: {} }], { stopReason: "error", errorMessage: "boom" }),
      { role: "toolResult", toolCallId: "aaaaaaaaa", toolName: "ls", content: [], isError: true, timestamp: 2 },
      assistant(model, [{ type: "toolCall", id: "bbbbbbbbb", name: "ls", arguments: {} }]),
      { role: "toolResult", toolCallId: "bbbbbbbbb", toolName: "ls", content: [{ type: "text", text: "no such dir" }], isError: true, timestamp: 3 },
    ];
    const body = toMistralBody(request(model, { systemPrompt: "", messages }));
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect(body.messages[2]).toEqual({ role: "tool", tool_call_id: "bbbbbbbbb", name: "ls", content: [{ type: "text", text: "[error] no such dir" }] });
  });

  test("images for a text-only model become one placeholder per run; an empty user message is left out", () => {
    const model = mistralModel("x", { input: ["text"] });
    const img = { type: "image" as const, data: png, mimeType: "image/png" };
    const body = toMistralBody(request(model, { messages: [{ role: "user", content: [{ type: "text", text: "a" }, img, img], timestamp: 1 }] }));
    const parts = body.messages[1]!.content as { type: string }[];
    expect(parts.map((p) => p.type)).toEqual(["text", "text"]);
    // A user message with no parts at all is left out, as the reference leaves it.
    const empty = toMistralBody(request(model, { messages: [{ role: "user", content: [], timestamp: 1 }, { role: "user", content: "b", timestamp: 2 }] }));
    expect(empty.messages.slice(1)).toEqual([{ role: "user", content: "b" }]);
  });

  test("the endpoint: <base>/v1/chat/completions, a /v1 base not doubled", () => {
    expect(mistralUrl("https://api.mistral.ai")).toBe("https://api.mistral.ai/v1/chat/completions");
    expect(mistralUrl("https://api.mistral.ai/")).toBe("https://api.mistral.ai/v1/chat/completions");
    expect(mistralUrl("https://proxy.example/mistral/v1")).toBe("https://proxy.example/mistral/v1/chat/completions");
  });
});

describe("the stream", () => {
  test("thinking, text, a tool call in fragments; usage with cached tokens, priced", async () => {
    await using fake = startFakeProvider({
      replies: [{ blocks: [{ type: "thinking", thinking: ["hm", "m"] }, { type: "text", text: ["Hel", "lo"] }, { type: "toolCall", id: "q1w2e3r4t", name: "read", arguments: { path: "a" }, fragments: 3 }], usage: { input: 100, cacheRead: 50, output: 20 } }],
    });
    const model = mistralModel(fake);
    const { events, message } = await run(streamMistral(request(model), new AbortController().signal));
    expect(fake.requests[0]!.path).toBe("/mistral/v1/chat/completions");
    expect(message.content).toEqual([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hello" }, { type: "toolCall", id: "q1w2e3r4t", name: "read", arguments: { path: "a" } }]);
    expect(message.stopReason).toBe("toolUse");
    expect(message.rawStopReason).toBe("tool_calls");
    expect(message.usage).toMatchObject({ input: 100, cacheRead: 50, output: 20, cacheWrite: 0, totalTokens: 170 });
    expect(message.usage.cost.total).toBeCloseTo((100 * 0.15 + 50 * 0.015 + 20 * 0.6) / 1e6, 12);
    expect(events.map((e) => e.type)).toEqual(["thinking_start", "thinking_delta", "thinking_delta", "thinking_end", "text_start", "text_delta", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_delta", "toolcall_end"]);
    expect(events[8]).toEqual({ type: "toolcall_start", contentIndex: 2, id: "q1w2e3r4t", toolName: "read" });
  });

  test("a 5xx and a finish reason of error are retryable; an overflow is an overflow; a cut stream is retryable", async () => {
    await using fake = startFakeProvider({
      replies: [
        { kind: "http_error", status: 503, message: "Service unavailable" },
        { blocks: [{ type: "text", text: "par" }], finishReason: "error" },
        { kind: "http_error", status: 400, message: "Prompt contains 300000 tokens and 0 draft tokens, too large for model with 262144 maximum context length" },
        { blocks: [{ type: "text", text: "cut" }], disconnectAfterChunks: 2 },
        { kind: "stream_error", message: "Internal failure" },
      ],
    });
    const model = mistralModel(fake);
    const next = () => streamMistral(request(model), new AbortController().signal).result();
    const unavailable = await next();
    expect(unavailable.errorMessage).toStartWith("Mistral API error (503): ");
    expect(isRetryableAssistantError(unavailable)).toBe(true);
    const stopped = await next();
    expect(stopped).toMatchObject({ stopReason: "error", rawStopReason: "error", content: [{ type: "text", text: "par" }] });
    expect(isRetryableAssistantError(stopped)).toBe(true);
    const overflow = await next();
    expect(isContextOverflow(overflow, model.contextWindow)).toBe(true);
    expect(isRetryableAssistantError(overflow)).toBe(false);
    const cut = await next();
    expect(cut.stopReason).toBe("error");
    expect(isRetryableAssistantError(cut)).toBe(true);
    const streamed = await next();
    expect(streamed.errorMessage).toBe("Mistral stream error: Internal failure");
  });

  test("no key fails before any request; a connection failure names the server", async () => {
    const noKey = await streamMistral({ ...request(mistralModel("http://127.0.0.1:9")), apiKey: undefined }, new AbortController().signal).result();
    expect(noKey).toMatchObject({ stopReason: "error", errorMessage: "No API key for provider: mistral" });
    const down = await streamMistral(request(mistralModel("http://127.0.0.1:9")), new AbortController().signal).result();
    expect(down.stopReason).toBe("error");
    expect(down.errorMessage).toContain("127.0.0.1:9");
  });

  test("chunks as Mistral also sends them: text parts, a tool call without an id, arguments as an object, num_cached_tokens", async () => {
    const chunks = [
      { id: "r1", choices: [{ index: 0, delta: { role: "assistant", content: [{ type: "text", text: "A" }, { type: "text", text: "" }] }, finish_reason: null }] },
      { id: "r1", choices: [{ index: 0, delta: { content: "" } }] },
      { id: "r1", choices: [{ index: 0, delta: { tool_calls: [{ id: "null", function: { name: "ls", arguments: { dir: "." } } }] } }] },
      { id: "r1", choices: [{ index: 0, delta: { content: "" }, finish_reason: "model_length" }], usage: { prompt_tokens: 40, completion_tokens: 2, num_cached_tokens: 60 } },
    ];
    using server = Bun.serve({ port: 0, fetch: () => new Response(`${chunks.map((c) => `data: ${JSON.stringify(c)}\r\n\r\n`).join("")}data: [DONE]\r\n\r\n`) });
    const { message } = await run(streamMistral(request(mistralModel(`http://127.0.0.1:${server.port}`)), new AbortController().signal));
    expect(message.responseId).toBe("r1");
    expect(message.content[0]).toEqual({ type: "text", text: "A" });
    expect(message.content[1]).toMatchObject({ type: "toolCall", name: "ls", arguments: { dir: "." } });
    expect((message.content[1] as { id: string }).id).toMatch(/^[a-zA-Z0-9]{9}$/);
    expect(message.stopReason).toBe("length");
    // Cached tokens are capped at the prompt's count.
    expect(message.usage).toMatchObject({ input: 0, cacheRead: 40, output: 2 });
  });

  test("odd events: an error object, not JSON, no choices", () => {
    expect(() => parseChunk('{"object":"error","message":"nope"}')).toThrow("Mistral stream error: nope");
    expect(() => parseChunk("{not json")).toThrow("not JSON");
    expect(() => parseChunk('{"hello":1}')).toThrow("Invalid Mistral streaming event");
    expect(parseChunk('{"choices":[]}').choices).toEqual([]);
  });
});

describe.skipIf(!REF)("pi-ai's streamSimpleMistral on pion", () => {
  test("an extension's call goes through pion's adapter and sends the reference's body", async () => {
    const { referenceModules } = await import("../../../src/extensions/surface/modules.ts");
    const pion = referenceModules()["pi-ai/compat"] as Mod;
    const ref = await refAi();
    await using fake = startFakeProvider({ replies: [textReply(), textReply()] });
    const model = mistralModel(fake);
    const context = transcriptOf(request(model, { tools, messages: nativeHistory(model) }));
    const options = { apiKey: "k", reasoning: "high", sessionId: "s9" };
    for (const streams of [ref, pion]) {
      const s = streams.streamSimpleMistral(model, context, options);
      const types: string[] = [];
      for await (const e of s) types.push(e.type);
      expect(types.at(-1)).toBe("done");
      expect((await s.result()).content).toEqual([{ type: "text", text: "ok" }]);
    }
    expect(fake.requests[1]!.body).toEqual(fake.requests[0]!.body);
    expect(typeof pion.mistralConversationsApi().streamSimple).toBe("function");
  });
});
