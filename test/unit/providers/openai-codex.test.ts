import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { thinkingLevelsFor } from "../../../src/providers/thinking.ts";
import { codexEffort, codexErrorMessage, codexUrl, streamOpenAICodex } from "../../../src/providers/openai-codex.ts";
import type { AssistantMessage, Message, Model } from "../../../src/providers/types.ts";
import { startFakeProvider, type FakeProvider } from "../../support/fake-provider.ts";
import { abortAfterFirstDelta, request, run, testModel } from "./helpers.ts";

const REF = process.env.PION_REFERENCE_PKG;
// biome-ignore lint/suspicious/noExplicitAny: the reference's module and pion's virtual one are untyped here
type Mod = Record<string, any>;

const b64 = (o: unknown) => Buffer.from(JSON.stringify(o)).toString("base64url");
/** A ChatGPT access token as the login stores it: a JWT naming the account. */
const token = (account = "acct-123") => `${b64({ alg: "none" })}.${b64({ "https://api.openai.com/auth": { chatgpt_account_id: account } })}.sig`;
const signal = () => new AbortController().signal;
const codexModel = (fake: FakeProvider | string, over: Partial<Model> = {}): Model =>
  testModel(typeof fake === "string" ? fake : fake.url, "openai-codex-responses", { provider: "openai-codex", reasoning: true, contextWindow: 272000, maxTokens: 128000, ...over });

const READ_TOOL = { name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } };

describe("openai-codex-responses requests", () => {
  test.concurrent("headers and body: account id, beta flag, originator, session id; store false, encrypted reasoning, system prompt first", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hi" }] }] });
    const req = request(codexModel(fake), { apiKey: token(), sessionId: "sess-1", thinkingLevel: "high", tools: [READ_TOOL] });
    const { message } = await run(streamOpenAICodex(req, signal()));
    expect(message.stopReason).toBe("stop");
    const [sent] = fake.requests;
    expect(sent!.path).toBe("/codex/responses");
    expect(sent!.api).toBe("openai-codex-responses");
    expect(sent!.headers).toMatchObject({
      authorization: `Bearer ${token()}`,
      "chatgpt-account-id": "acct-123",
      "openai-beta": "responses=experimental",
      originator: "pi",
      accept: "text/event-stream",
      "content-type": "application/json",
      "content-encoding": "zstd",
      "session-id": "sess-1",
      "x-client-request-id": "sess-1",
    });
    expect(sent!.body).toEqual({
      model: "gpt-test",
      store: false,
      stream: true,
      input: [
        { role: "developer", content: "You are terse." },
        { role: "user", content: [{ type: "input_text", text: "hi" }] },
      ],
      text: { verbosity: "low" },
      include: ["reasoning.encrypted_content"],
      prompt_cache_key: "sess-1",
      tool_choice: "auto",
      parallel_tool_calls: true,
      max_output_tokens: 128000,
      tools: [{ type: "function", ...READ_TOOL, strict: null }],
      reasoning: { effort: "high", summary: "auto" },
    });
  });

  test.concurrent("no session: no cache key or session headers; a model without reasoning gets no reasoning field and a system item", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hi" }] }] });
    await run(streamOpenAICodex(request(codexModel(fake, { reasoning: false }), { apiKey: token() }), signal()));
    const sent = fake.requests[0]!;
    expect(sent.headers["session-id"]).toBeUndefined();
    expect(sent.headers["x-client-request-id"]).toBeUndefined();
    const body = sent.body as Record<string, unknown>;
    expect("prompt_cache_key" in body).toBe(false);
    expect(body.reasoning).toBeUndefined();
    expect((body.input as unknown[])[0]).toEqual({ role: "system", content: "You are terse." });
  });

  test.concurrent("model headers and the call's headers go out; auth and account headers are the adapter's", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hi" }] }] });
    const model = codexModel(fake, { headers: { "x-model": "m", originator: "codex_cli_rs", "chatgpt-account-id": "spoofed" } });
    await run(streamOpenAICodex(request(model, { apiKey: token("acct-real"), authHeaders: { "x-call": "c" } }), signal()));
    expect(fake.requests[0]!.headers).toMatchObject({ "x-model": "m", "x-call": "c", originator: "codex_cli_rs", "chatgpt-account-id": "acct-real" });
  });

  test("the base URL may name /codex or the endpoint itself; empty means the ChatGPT backend", () => {
    expect(codexUrl("https://chatgpt.com/backend-api")).toBe("https://chatgpt.com/backend-api/codex/responses");
    expect(codexUrl("https://proxy.example/backend-api/")).toBe("https://proxy.example/backend-api/codex/responses");
    expect(codexUrl("http://h/codex")).toBe("http://h/codex/responses");
    expect(codexUrl("http://h/codex/responses/")).toBe("http://h/codex/responses");
    expect(codexUrl("")).toBe("https://chatgpt.com/backend-api/codex/responses");
  });

  test("effort: off is none (or the mapped off; null sends none at all); other levels are clamped then mapped", () => {
    const m = codexModel("http://h", { thinkingLevelMap: { minimal: "low", xhigh: "xhigh" } });
    expect(codexEffort(m, "off")).toBe("none");
    expect(codexEffort(m, "minimal")).toBe("low");
    expect(codexEffort(m, "medium")).toBe("medium");
    expect(codexEffort(m, "xhigh")).toBe("xhigh");
    const alwaysOn = codexModel("http://h", { thinkingLevelMap: { off: null, minimal: "low" } });
    expect(codexEffort(alwaysOn, "off")).toBeUndefined();
    expect(codexEffort(alwaysOn, "minimal")).toBe("low");
    expect(codexEffort(codexModel("http://h", { thinkingLevelMap: { off: "minimal" } }), "off")).toBe("minimal");
    expect(codexEffort(codexModel("http://h", { reasoning: false }), "high")).toBeUndefined();
    // The built-in models list their efforts: without `none` reasoning cannot be switched off.
    const listed = (values: string[]) => codexModel("http://h", { reasoningOptions: [{ type: "effort", values }] });
    expect(codexEffort(listed(["low", "high"]), "off")).toBeUndefined();
    expect(codexEffort(listed(["none", "low", "high"]), "off")).toBe("none");
    expect(codexEffort(listed(["none", "low", "high"]), "minimal")).toBe("low");
  });

  test.concurrent("a token that names no ChatGPT account fails before any request", async () => {
    await using fake = startFakeProvider();
    const { message } = await run(streamOpenAICodex(request(codexModel(fake), { apiKey: "sk-not-a-jwt" }), signal()));
    expect(message.stopReason).toBe("error");
    expect(message.errorMessage).toContain("ChatGPT access token");
    expect(fake.requests).toHaveLength(0);
  });
});

describe("openai-codex-responses replies", () => {
  test.concurrent("thinking, text and a tool call stream as pion's events; response.done ends the reply; usage and price", async () => {
    await using fake = startFakeProvider({
      replies: [
        {
          blocks: [
            { type: "thinking", thinking: ["Let me ", "look."], signature: "enc-1" },
            { type: "text", text: ["Reading ", "it."] },
            { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.ts" }, fragments: 2 },
          ],
          usage: { input: 100, output: 20, cacheRead: 50, reasoning: 7 },
        },
      ],
    });
    const { events, message } = await run(streamOpenAICodex(request(codexModel(fake), { apiKey: token(), tools: [READ_TOOL] }), signal()));
    expect(events.map((e) => e.type)).toEqual([
      "thinking_start", "thinking_delta", "thinking_delta", "thinking_end",
      "text_start", "text_delta", "text_delta", "text_end",
      "toolcall_start", "toolcall_delta", "toolcall_delta", "toolcall_end",
    ]);
    expect(message).toMatchObject({ api: "openai-codex-responses", provider: "openai-codex", stopReason: "toolUse" });
    expect(message.content[1]).toMatchObject({ type: "text", text: "Reading it." });
    expect(message.content[2]).toMatchObject({ type: "toolCall", id: expect.stringMatching(/^call_1\|fc_/), name: "read", arguments: { path: "a.ts" } });
    expect(JSON.parse((message.content[0] as { thinkingSignature: string }).thinkingSignature).encrypted_content).toBe("enc-1");
    expect(message.usage).toMatchObject({ input: 100, output: 20, cacheRead: 50, reasoning: 7 });
    expect(message.usage.cost.total).toBeGreaterThan(0);
  });

  test.concurrent("the next turn replays reasoning and item ids of this provider's own reply", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "thinking", thinking: "t", signature: "enc-2" }, { type: "toolCall", id: "call_9", name: "read", arguments: { path: "b" } }] }, { blocks: [{ type: "text", text: "done" }] }] });
    const model = codexModel(fake);
    const first = (await run(streamOpenAICodex(request(model, { apiKey: token(), tools: [READ_TOOL] }), signal()))).message;
    const call = first.content[1] as { id: string };
    const history: Message[] = [
      { role: "user", content: "hi", timestamp: 1 },
      first,
      { role: "toolResult", toolCallId: call.id, toolName: "read", content: [{ type: "text", text: "B" }], isError: false, timestamp: 3 },
    ];
    await run(streamOpenAICodex(request(model, { apiKey: token(), tools: [READ_TOOL], messages: history }), signal()));
    const input = (fake.requests[1]!.body as { input: Record<string, unknown>[] }).input;
    expect(input.map((i) => i.type ?? i.role)).toEqual(["developer", "user", "reasoning", "function_call", "function_call_output"]);
    expect(input[2]).toMatchObject({ encrypted_content: "enc-2" });
    expect(input[3]).toMatchObject({ call_id: "call_9", id: expect.stringMatching(/^fc_/) });
    expect(input[4]).toEqual({ type: "function_call_output", call_id: "call_9", output: "B" });
  });

  test.concurrent("an error event and a failed response end the message with the backend's message", async () => {
    const sse = (events: unknown[]) => events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join("");
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: (req) => {
        const which = new URL(req.url).pathname.split("/")[1];
        const body =
          which === "error"
            ? sse([{ type: "response.created", response: { id: "r1" } }, { type: "error", code: "context_length_exceeded", message: "Your input exceeds the context window" }])
            : sse([{ type: "response.failed", response: { id: "r2", status: "failed", error: { code: "server_error", message: "boom" } } }]);
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      },
    });
    try {
      const at = (c: string) => codexModel(`http://127.0.0.1:${server.port}/${c}`);
      const errored = (await run(streamOpenAICodex(request(at("error"), { apiKey: token() }), signal()))).message;
      expect(errored).toMatchObject({ stopReason: "error", errorMessage: "Codex error: Your input exceeds the context window" });
      const failed = (await run(streamOpenAICodex(request(at("failed"), { apiKey: token() }), signal()))).message;
      expect(failed).toMatchObject({ stopReason: "error", errorMessage: "boom" });
    } finally {
      server.stop(true);
    }
  });

  test.concurrent("HTTP 429 with a usage-limit body: the plan and the reset time, no status (not retried)", async () => {
    const resetsAt = Math.floor(Date.now() / 1000) + 42 * 60;
    await using fake = startFakeProvider({
      replies: [{ kind: "http_error", status: 429, body: { error: { type: "usage_limit_reached", message: "The usage limit has been reached", plan_type: "PLUS", resets_at: resetsAt } } }, { kind: "http_error", status: 500, message: "upstream broke" }],
    });
    const limited = (await run(streamOpenAICodex(request(codexModel(fake), { apiKey: token() }), signal()))).message;
    expect(limited.stopReason).toBe("error");
    expect(limited.errorMessage).toMatch(/usage limit.*\(plus plan\).*about (41|42) min/);
    const { isRetryableAssistantError } = await import("../../../src/providers/retryable.ts");
    expect(isRetryableAssistantError(limited)).toBe(false);
    const broken = (await run(streamOpenAICodex(request(codexModel(fake), { apiKey: token() }), signal()))).message;
    expect(broken.errorMessage).toBe("500 upstream broke");
    expect(isRetryableAssistantError(broken)).toBe(true);
  });

  test.concurrent("an abort mid-stream ends the message as aborted", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["one ", "two ", "three"] }], stallAfterChunks: 6 }] });
    const { message } = await abortAfterFirstDelta(streamOpenAICodex, request(codexModel(fake), { apiKey: token() }));
    expect(message.stopReason).toBe("aborted");
    expect((message.content[0] as { text: string }).text).toStartWith("one ");
  });

  test("error messages: a usage-limit code without 429, a body that is not JSON", () => {
    expect(codexErrorMessage(403, JSON.stringify({ error: { code: "usage_not_included", message: "no" } }))).toBe("The ChatGPT usage limit of this account is used up.");
    expect(codexErrorMessage(502, "Bad Gateway")).toBe("502 Bad Gateway");
  });
});

describe("the reference's streamSimpleOpenAICodexResponses on the same input", () => {
  const sig = JSON.stringify({ type: "reasoning", id: "rs_1", encrypted_content: "enc", summary: [{ type: "summary_text", text: "hm" }] });
  const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  /** A transcript (system message first, as the reference hands APIs their context) with a replayed tool turn. */
  const context = {
    messages: [
      { role: "system", content: "Be brief.", toolsAdded: [READ_TOOL], timestamp: 0 },
      { role: "user", content: "read a", timestamp: 1 },
      {
        role: "assistant", api: "openai-codex-responses", provider: "openai-codex", model: "gpt-test", usage, stopReason: "toolUse", timestamp: 2,
        content: [{ type: "thinking", thinking: "hm", thinkingSignature: sig }, { type: "text", text: "ok", textSignature: "msg_1" }, { type: "toolCall", id: "call_1|fc_1", name: "read", arguments: { path: "a" } }],
      },
      { role: "toolResult", toolCallId: "call_1|fc_1", toolName: "read", content: [{ type: "text", text: "A" }], isError: false, timestamp: 3 },
      { role: "user", content: [{ type: "text", text: "thanks" }], timestamp: 4 },
    ],
  };
  const HEADERS = ["authorization", "chatgpt-account-id", "openai-beta", "originator", "accept", "content-type", "content-encoding", "session-id", "x-client-request-id"];

  for (const reasoning of [undefined, "minimal", "high"] as const) {
    (REF ? test : test.skip)(`the same headers, body and result (reasoning ${reasoning ?? "off"})`, async () => {
      const ref: Mod = await import(join(REF!, "..", "pi-ai", "dist", "compat.js"));
      const pion = referenceModules()["pi-ai/compat"] as Mod;
      const reply = { blocks: [{ type: "text" as const, text: ["Hel", "lo"] }, { type: "toolCall" as const, id: "call_2", name: "read", arguments: { path: "b" } }], usage: { input: 30, output: 4, cacheRead: 10 } };
      await using fake = startFakeProvider({ replies: [reply, reply] });
      const model = { ...codexModel(fake), thinkingLevelMap: { off: "none", minimal: "low", xhigh: "xhigh" } };
      const options = { apiKey: token(), sessionId: "sess-1", ...(reasoning ? { reasoning } : {}) };
      const theirs: AssistantMessage = await ref.streamSimpleOpenAICodexResponses(model, context, { ...options, transport: "sse" }).result();
      const ours: AssistantMessage = await pion.streamSimpleOpenAICodexResponses(model, context, options).result();
      const [a, b] = fake.requests;
      const pick = (h: Record<string, string>) => Object.fromEntries(HEADERS.map((n) => [n, h[n]]));
      expect(pick(b!.headers)).toEqual(pick(a!.headers));
      expect(b!.path).toBe(a!.path);
      expect(b!.body).toEqual(a!.body);
      const shape = (m: AssistantMessage) => ({
        api: m.api, provider: m.provider, stopReason: m.stopReason,
        content: m.content.map((c) => (c.type === "toolCall" ? { ...c, id: c.id.split("|")[0] } : c.type === "text" ? { type: c.type, text: c.text } : c)),
        usage: { input: m.usage.input, output: m.usage.output, cacheRead: m.usage.cacheRead, totalTokens: m.usage.totalTokens },
      });
      expect(shape(ours)).toEqual(shape(theirs));
    });
  }
});

describe("the openai-codex models", () => {
  (REF ? test : test.skip)("the reference's ids, limits, prices and efforts; its levels but minimal, which clamps to the same effort", async () => {
    const ref: Mod = await import(join(REF!, "..", "pi-ai", "dist", "compat.js"));
    const refModels: Mod = await import(join(REF!, "..", "pi-ai", "dist", "models.js"));
    const pion = referenceModules()["pi-ai/compat"] as Mod;
    const fields = (m: Mod) => ({
      id: m.id, name: m.name, api: m.api, provider: m.provider, baseUrl: m.baseUrl, reasoning: m.reasoning, input: m.input, contextWindow: m.contextWindow, maxTokens: m.maxTokens,
      cost: { input: m.cost.input, output: m.cost.output, cacheRead: m.cost.cacheRead, cacheWrite: m.cost.cacheWrite, tiers: m.cost.tiers.map((t: Mod) => [t.inputTokensAbove, t.input, t.output, t.cacheRead, t.cacheWrite]) },
    });
    const theirs: Mod[] = ref.getModels("openai-codex");
    const ours: Mod[] = pion.getModels("openai-codex");
    expect(theirs.length).toBeGreaterThan(0);
    expect(ours.map(fields)).toEqual(theirs.map(fields));
    for (const m of theirs) {
      const own = ours.find((o) => o.id === m.id)!;
      const levels: string[] = refModels.getSupportedThinkingLevels(m);
      expect([m.id, thinkingLevelsFor(own as Model)]).toEqual([m.id, levels.filter((l) => l !== "minimal")]);
      for (const level of levels) {
        if (level === "off") continue;
        const sent = codexEffort(own as Model, thinkingLevelsFor(own as Model).includes(level as never) ? (level as never) : "low");
        expect([m.id, level, sent]).toEqual([m.id, level, m.thinkingLevelMap?.[level] ?? level]);
      }
    }
  });
});
