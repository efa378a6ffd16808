import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { behaviourOf } from "../../../src/extensions/surface/export-surface.ts";
import { addedApi, isImplementedApi } from "../../../src/providers/apis.ts";
import { streamByApi } from "../../../src/providers/index.ts";
import { parseModelsFile } from "../../../src/providers/models-file.ts";
import type { AssistantMessage, LlmRequest, Model } from "../../../src/providers/types.ts";
import { ToolCallArgumentsStream } from "../../../src/extensions/surface/ai-utils-streaming-json.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";

const REF = process.env.PION_REFERENCE_PKG;
// biome-ignore lint/suspicious/noExplicitAny: the reference's modules and pion's virtual ones are untyped here
type Mod = Record<string, any>;
const refAi = async (): Promise<Mod> => import(join(REF!, "..", "pi-ai", "dist", "compat.js"));
const compat = () => referenceModules()["pi-ai/compat"] as Mod;
const ai = () => referenceModules()["pi-ai"] as Mod;

type Event = Record<string, unknown> & { type: string };
async function drain(stream: AsyncIterable<Event> & { result(): Promise<unknown> }): Promise<{ events: Event[]; result: AssistantMessage }> {
  const events: Event[] = [];
  for await (const e of stream) events.push(e);
  return { events, result: (await stream.result()) as AssistantMessage };
}

const request = (model: Model, over: Partial<LlmRequest> = {}): LlmRequest => ({ model, systemPrompt: "sys", messages: [{ role: "user", content: "hi", timestamp: 1 }], tools: [], thinkingLevel: "off", ...over });

describe("pi-ai provider surface: which names pion implements", () => {
  test("the registry, catalog, faux, identity and per-API names are pion's own", () => {
    for (const name of ["registerApiProvider", "getModel", "findEnvKeys", "streamAnthropic", "streamSimpleGoogleVertex", "bedrockConverseStreamApi", "piMessagesApi", "registerFauxProvider", "setBedrockProviderModule", "streamMistral", "mistralConversationsApi", "openAICodexResponsesApi", "streamOpenAICodexResponses", "getImageModel"]) {
      expect([name, behaviourOf(compat()[name])]).toEqual([name, "pion"]);
    }
    for (const name of ["createFauxCore", "fauxAssistantMessage", "formatUserAgent", "InMemoryCredentialStore", "ModelsError", "lazyStream", "PI_ATTRIBUTION"]) expect([name, behaviourOf(ai()[name])]).toEqual([name, "pion"]);
    // The registry and the catalog reads are pi-ai/compat's only, as in the reference.
    expect("registerApiProvider" in ai() || "getModel" in ai()).toBe(false);
  });
});

describe("registerApiProvider routes pion's own requests", () => {
  test("a model on a registered API reaches the extension's streamSimple through streamByApi, deltas and result intact", async () => {
    const seen: { model: Model; context: Mod; options: Mod }[] = [];
    const { registerApiProvider, unregisterApiProviders, getApiProvider, fauxAssistantMessage } = compat();
    const core = ai().createFauxCore({ api: "ext-api", provider: "ext" });
    core.setResponses([fauxAssistantMessage([ai().fauxThinking("hmm"), ai().fauxText("hello there, world"), ai().fauxToolCall("read", { path: "a.txt" }, { id: "t1" })], { stopReason: "toolUse" })]);
    registerApiProvider(
      {
        api: "ext-api",
        stream: () => {
          throw new Error("stream is not what the session calls");
        },
        streamSimple: (model: Model, context: Mod, options: Mod) => {
          seen.push({ model, context, options });
          return core.streamSimple(model, context, options);
        },
      },
      "src-1",
    );
    try {
      expect(isImplementedApi("ext-api")).toBe(true);
      expect(getApiProvider("ext-api").api).toBe("ext-api");
      const model = { ...core.getModel(), api: "ext-api" } as Model;
      const { events, result } = await drain(streamByApi(request(model, { apiKey: "k1", thinkingLevel: "high", sessionId: "s1" }), new AbortController().signal) as never);
      expect(seen).toHaveLength(1);
      // The reference's transcript: the system prompt (and tools, had there been any) as a leading system message.
      expect(seen[0]!.context).toEqual({ messages: [{ role: "system", content: "sys", timestamp: 0 }, { role: "user", content: "hi", timestamp: 1 }] });
      expect(seen[0]!.options).toMatchObject({ apiKey: "k1", reasoning: "high", sessionId: "s1" });
      expect(result.stopReason).toBe("toolUse");
      expect(result.content.map((b) => b.type)).toEqual(["thinking", "text", "toolCall"]);
      const text = events.filter((e) => e.type === "text_delta").map((e) => e.delta).join("");
      expect(text).toBe("hello there, world");
      expect(events.find((e) => e.type === "toolcall_start")).toEqual({ type: "toolcall_start", contentIndex: 2, id: "t1", toolName: "read" });
      expect(events.every((e) => !("partial" in e))).toBe(true);
    } finally {
      unregisterApiProviders("src-1");
    }
    expect(isImplementedApi("ext-api")).toBe(false);
    const after = await streamByApi(request({ ...core.getModel(), api: "ext-api" } as Model), new AbortController().signal).result();
    expect(after.stopReason).toBe("error");
    expect(after.errorMessage).toContain("not implemented");
  });

  test("a models.json-style provider on a registered API is kept (the session can use it), and skipped again once unregistered", () => {
    const config = { providers: { mine: { api: "ext-api-2", baseUrl: "http://127.0.0.1:1", apiKey: "k", models: [{ id: "m1" }] } } };
    const warnings: string[] = [];
    expect(parseModelsFile(config, "models.json", (w) => warnings.push(w)).get("mine")).toBeUndefined();
    compat().registerApiProvider({ api: "ext-api-2", stream: () => null, streamSimple: () => null }, "src-4");
    try {
      const parsed = parseModelsFile(config, "models.json", (w) => warnings.push(w)).get("mine");
      expect(parsed?.api as string).toBe("ext-api-2");
      expect(parsed?.models?.map((m) => m.id)).toEqual(["m1"]);
    } finally {
      compat().unregisterApiProviders("src-4");
    }
    expect(warnings).toHaveLength(1);
  });

  test("an extension's stream that throws ends the request with an error message, never a rejection", async () => {
    compat().registerApiProvider({ api: "boom-api", stream: () => null, streamSimple: () => { throw new Error("kaboom"); } }, "src-2");
    try {
      const result = await streamByApi(request({ ...ai().createFauxCore({}).getModel(), api: "boom-api" } as Model), new AbortController().signal).result();
      expect(result).toMatchObject({ stopReason: "error", errorMessage: "kaboom" });
    } finally {
      compat().unregisterApiProviders("src-2");
    }
  });

  test("the registry refuses a model of another API, keeps an override over built-ins, and resets to pion's adapters", () => {
    const { registerApiProvider, getApiProvider, getApiProviders, resetApiProviders, registerBuiltInApiProviders } = compat();
    expect(getApiProviders().map((p: Mod) => p.api)).toEqual(expect.arrayContaining(["anthropic-messages", "openai-completions", "bedrock-converse-stream"]));
    const builtIn = getApiProvider("anthropic-messages");
    expect(() => builtIn.streamSimple({ api: "openai-completions" }, {}, {})).toThrow("Mismatched api: openai-completions expected anthropic-messages");
    const mine = { api: "anthropic-messages", stream: () => "mine", streamSimple: () => "mine" };
    expect(addedApi("anthropic-messages")).toBeUndefined();
    registerApiProvider(mine, "src-3");
    registerBuiltInApiProviders();
    expect(getApiProvider("anthropic-messages").streamSimple({ api: "anthropic-messages" })).toBe("mine");
    // pion's own requests on that API go to the override now, and back to pion's adapter after a reset.
    expect(addedApi("anthropic-messages")).toBeDefined();
    resetApiProviders();
    expect(addedApi("anthropic-messages")).toBeUndefined();
    expect(getApiProvider("anthropic-messages")).not.toBe(builtIn);
  });

  test("registerFauxProvider: pion's stream sends its models to the script until unregister()", async () => {
    const faux = compat().registerFauxProvider({ models: [{ id: "f1" }, { id: "f2", reasoning: true }] });
    try {
      expect(faux.models.map((m: Model) => m.id)).toEqual(["f1", "f2"]);
      expect(faux.getModel("f2").reasoning).toBe(true);
      faux.setResponses([ai().fauxAssistantMessage("one"), ai().fauxAssistantMessage("two")]);
      const a = await ai().completeSimple(faux.getModel(), { messages: [{ role: "user", content: "q", timestamp: 1 }] });
      expect(a.content).toEqual([{ type: "text", text: "one" }]);
      expect(a.model).toBe("f1");
      expect(faux.getPendingResponseCount()).toBe(1);
      expect(faux.state.callCount).toBe(1);
    } finally {
      faux.unregister();
    }
    expect(compat().getApiProvider(faux.api)).toBeUndefined();
  });
});

describe("per-API stream functions use pion's adapters", () => {
  test("streamSimpleAnthropic sends an Anthropic Messages request and streams the reply", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["po", "ng"] }] }] });
    const model = { ...compat().getModel("anthropic", "claude-sonnet-4-5"), baseUrl: fake.url };
    const tool = { name: "look", description: "Look.", parameters: { type: "object", properties: {} } };
    const transcript = { messages: [{ role: "system", content: "be brief", toolsAdded: [tool], timestamp: 0 }, { role: "user", content: "ping", timestamp: 1 }] };
    const { events, result } = await drain(compat().streamSimpleAnthropic(model, transcript, { apiKey: "sk-test" }));
    expect(fake.requests[0]!.api).toBe("anthropic-messages");
    const body = fake.requests[0]!.body as Mod;
    expect(JSON.stringify(body.system)).toContain("be brief");
    expect(body.tools.map((t: Mod) => t.name)).toEqual(["look"]);
    expect(body.messages).toHaveLength(1);
    expect(fake.requests[0]!.headers["x-api-key"]).toBe("sk-test");
    expect(result.content).toEqual([{ type: "text", text: "pong" }]);
    expect(events[0]!.type).toBe("start");
    expect(events.at(-1)!.type).toBe("done");
    // Every delta carries the message so far, as the reference's do.
    const lastDelta = events.filter((e) => e.type === "text_delta").at(-1)!;
    expect((lastDelta.partial as Mod).content).toEqual([{ type: "text", text: "pong" }]);
    expect((lastDelta.partial as Mod).stopReason).toBe("pending");
  });

  test("setBedrockProviderModule replaces the Bedrock implementation", async () => {
    const calls: string[] = [];
    const core = ai().createFauxCore({ api: "bedrock-converse-stream" });
    core.setResponses([ai().fauxAssistantMessage("from module")]);
    compat().setBedrockProviderModule({ stream: core.stream, streamSimple: (m: Model, c: Mod, o: Mod) => (calls.push(m.id), core.streamSimple(m, c, o)) });
    const result = await compat().bedrockConverseStreamApi().streamSimple(core.getModel(), { messages: [] }).result();
    expect(calls).toEqual(["faux-1"]);
    expect(result.content[0].text).toBe("from module");
  });

  test("lazyStream forwards the made stream, and a failed setup is one error event", async () => {
    const model = ai().createFauxCore({}).getModel();
    const failed = await drain(ai().lazyStream(model, async () => {
      throw new Error("no module");
    }));
    expect(failed.events).toHaveLength(1);
    expect(failed.events[0]).toMatchObject({ type: "error", reason: "error" });
    expect(failed.result).toMatchObject({ stopReason: "error", errorMessage: "no module", content: [] });
    const core = ai().createFauxCore({});
    core.setResponses([ai().fauxAssistantMessage("ok")]);
    const seen: string[] = [];
    const ok = await drain(ai().lazyStream(model, async () => core.stream(model, { messages: [] }), { onEvent: (e: Event) => seen.push(e.type) }));
    expect(ok.result.content).toEqual([{ type: "text", text: "ok" }]);
    expect(seen).toEqual(ok.events.map((e) => e.type));
  });
});

describe("faux provider", () => {
  test("events carry the growing partial; an empty script is an error; an abort is aborted", async () => {
    const core = ai().createFauxCore({ tokenSize: { min: 1, max: 1 } });
    core.setResponses([ai().fauxAssistantMessage([ai().fauxToolCall("edit", { path: "a", text: "long enough text" }, { id: "x" })], { stopReason: "toolUse" })]);
    const s = core.stream(core.getModel(), { messages: [] });
    const seen: string[] = [];
    const events: Event[] = [];
    for await (const e of s) {
      events.push(e);
      if (e.type === "toolcall_delta") seen.push(JSON.stringify((e.partial as Mod).content[0].arguments));
    }
    const result = await s.result();
    expect(seen.length).toBeGreaterThan(2);
    // Read as each delta arrives, the arguments grow: first none, then the path, then the text as far as it came.
    expect(seen[0]).toBe("{}");
    expect(seen).toContain(JSON.stringify({ path: "a" }));
    expect(seen.some((p) => p.startsWith('{"path":"a","text":"long') && p !== JSON.stringify({ path: "a", text: "long enough text" }))).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: "done", reason: "toolUse" });
    expect(result.content[0]).toEqual({ type: "toolCall", id: "x", name: "edit", arguments: { path: "a", text: "long enough text" } });
    const empty = await core.stream(core.getModel(), { messages: [] }).result();
    expect(empty).toMatchObject({ stopReason: "error", errorMessage: "No more faux responses queued" });
    core.setResponses([ai().fauxAssistantMessage("never")]);
    const ac = new AbortController();
    ac.abort();
    expect(await core.stream(core.getModel(), { messages: [] }, { signal: ac.signal }).result()).toMatchObject({ stopReason: "aborted", errorMessage: "Request was aborted" });
  });

  test("deferred replies are fetched after their pending polls and can be cancelled", async () => {
    const core = ai().createFauxCore({ deferred: { pendingFetches: 1, pollAfterMs: 5 } });
    core.setResponses([ai().fauxAssistantMessage("later"), ai().fauxAssistantMessage("cancelled")]);
    const model = core.getModel();
    const first = await core.stream(model, { messages: [] }, { deferred: true }).result();
    expect(first.stopReason).toBe("deferred");
    expect(first.deferred.pollAfterMs).toBe(5);
    expect((await core.fetchDeferred(model, first.deferred).result()).stopReason).toBe("deferred");
    expect((await core.fetchDeferred(model, first.deferred).result()).content).toEqual([{ type: "text", text: "later" }]);
    const second = await core.stream(model, { messages: [] }, { deferred: true }).result();
    await core.cancelDeferred(model, second.deferred);
    expect(core.state.cancelledDeferred).toHaveLength(1);
    expect((await core.fetchDeferred(model, second.deferred).result()).errorMessage).toContain("was cancelled");
  });

  (REF ? test : test.skip)("final messages and usage estimates equal the reference's for the same script and prompts", async () => {
    const ref = await refAi();
    const run = async (m: Mod) => {
      const core = m.createFauxCore({ api: "t", provider: "p", models: [{ id: "m1" }] });
      const script = [m.fauxAssistantMessage([m.fauxThinking("think"), m.fauxText("answer"), m.fauxToolCall("ls", { dir: "." }, { id: "c1" })], { stopReason: "toolUse", timestamp: 7 }), m.fauxAssistantMessage("second", { timestamp: 8 })];
      core.setResponses(script);
      const messages: Mod[] = [{ role: "user", content: "list the files please", timestamp: 1 }];
      const a = await core.stream(core.getModel(), { messages }, { sessionId: "s" }).result();
      messages.push(a, { role: "toolResult", toolCallId: "c1", toolName: "ls", content: [{ type: "text", text: "a b c" }], isError: false, timestamp: 2 });
      const b = await core.stream(core.getModel(), { messages }, { sessionId: "s" }).result();
      return [a, b, core.models, core.state];
    };
    expect(await run(compat())).toEqual(await run(ref));
  });
});

describe("catalog and environment keys (pi-ai/compat)", () => {
  test("getModel reads pion's catalog in the reference's shape, with the reference's provider ids", () => {
    const m = compat().getModel("anthropic", "claude-sonnet-4-5");
    expect(m).toMatchObject({ id: "claude-sonnet-4-5", api: "anthropic-messages", provider: "anthropic", type: "chat" });
    expect(compat().getModel("anthropic", "no-such-model")).toBeUndefined();
    expect(compat().getModels("no-such-provider")).toEqual([]);
    expect(compat().getModels("fireworks").length).toBeGreaterThan(0);
    expect(compat().getProviders()).toEqual(expect.arrayContaining(["anthropic", "openai", "google"]));
    const tiered = compat().getModels("google").find((x: Mod) => x.cost.tiers);
    expect(tiered.cost.tiers[0].inputTokensAbove).toBe(tiered.cost.tiers[0].contextOver);
  });

  (REF ? test : test.skip)("a few models' fields equal the reference's", async () => {
    const ref = await refAi();
    const fields = (m: Mod) => ({ id: m.id, name: m.name, api: m.api, provider: m.provider, baseUrl: m.baseUrl, reasoning: m.reasoning, input: m.input, contextWindow: m.contextWindow, maxTokens: m.maxTokens, type: m.type });
    for (const [p, id] of [["anthropic", "claude-sonnet-4-5"], ["openai", "gpt-4o"], ["google", "gemini-2.5-pro"], ["groq", "llama-3.3-70b-versatile"]] as const) {
      expect(fields(compat().getModel(p, id))).toEqual(fields(ref.getModel(p, id)));
    }
    expect(compat().getModel("anthropic", "claude-sonnet-4-5").cost).toEqual(ref.getModel("anthropic", "claude-sonnet-4-5").cost);
    const tier = (m: Mod) => m.cost.tiers.map((t: Mod) => [t.inputTokensAbove, t.input, t.output]);
    expect(tier(compat().getModel("google", "gemini-2.5-pro"))).toEqual(tier(ref.getModel("google", "gemini-2.5-pro")));
  });

  const ENV: Record<string, string> = Object.fromEntries(
    ["OPENAI_API_KEY", "ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "GEMINI_API_KEY", "GROQ_API_KEY", "MISTRAL_API_KEY", "HF_TOKEN", "MOONSHOT_API_KEY", "FIREWORKS_API_KEY", "TOGETHER_API_KEY", "OPENROUTER_API_KEY", "XAI_API_KEY", "QWEN_TOKEN_PLAN_API_KEY", "COPILOT_GITHUB_TOKEN", "GITHUB_TOKEN", "AWS_PROFILE", "CEREBRAS_API_KEY", "DEEPSEEK_API_KEY", "ZAI_API_KEY", "META_API_KEY", "AI_GATEWAY_API_KEY", "KIMI_API_KEY", "AZURE_OPENAI_API_KEY", "NVIDIA_API_KEY", "MINIMAX_API_KEY", "OPENCODE_API_KEY", "XIAOMI_API_KEY", "CLOUDFLARE_API_KEY", "GOOGLE_CLOUD_API_KEY", "BASETEN_API_KEY", "ANT_LING_API_KEY", "TYPESAFE_API_KEY", "RADIUS_API_KEY", "MINIMAX_CN_API_KEY", "ZAI_CODING_CN_API_KEY"].map((n) => [n, `v-${n}`]),
  );
  // pion also reads the catalog's variables for these (models.dev names MINIMAX_API_KEY and XIAOMI_API_KEY for them).
  const WIDER = ["minimax-cn", "xiaomi-token-plan-ams", "xiaomi-token-plan-cn", "xiaomi-token-plan-sgp"];

  test("getEnvApiKey passes over ANTHROPIC_AUTH_TOKEN and answers <authenticated> for ambient AWS credentials", () => {
    expect(compat().findEnvKeys("anthropic", { ANTHROPIC_AUTH_TOKEN: "t", ANTHROPIC_API_KEY: "k" })).toEqual(["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_API_KEY"]);
    expect(compat().getEnvApiKey("anthropic", { ANTHROPIC_AUTH_TOKEN: "t", ANTHROPIC_API_KEY: "k" })).toBe("k");
    expect(compat().getEnvApiKey("anthropic", { ANTHROPIC_AUTH_TOKEN: "t" })).toBeUndefined();
    expect(compat().getEnvApiKey("amazon-bedrock", { AWS_PROFILE: "dev" })).toBe("<authenticated>");
    expect(compat().findEnvKeys("amazon-bedrock", { AWS_PROFILE: "dev" })).toBeUndefined();
    expect(compat().getEnvApiKey("openai", {})).toBeUndefined();
    expect(compat().getEnvApiKey("fireworks", { FIREWORKS_API_KEY: "f" })).toBe("f");
  });

  (REF ? test : test.skip)("findEnvKeys and getEnvApiKey equal the reference's for every reference provider", async () => {
    const ref = await refAi();
    for (const p of [...ref.getProviders(), "no-such-provider"].filter((p: string) => !WIDER.includes(p))) {
      for (const env of [ENV, {}, { ANTHROPIC_AUTH_TOKEN: "only-bearer" }]) {
        expect([p, compat().findEnvKeys(p, env), compat().getEnvApiKey(p, env)]).toEqual([p, ref.findEnvKeys(p, env), ref.getEnvApiKey(p, env)]);
      }
    }
  });
});

describe("identity and auth helpers", () => {
  (REF ? test : test.skip)("attribution, session and merged identities equal the reference's", async () => {
    const ref = await refAi();
    const identities = [undefined, {}, { attribution: ref.PI_ATTRIBUTION }, { attribution: { name: "acme", url: "https://acme.dev" }, userAgent: "short" }, { userAgent: { custom: "x/1" }, version: "9" }];
    const targets = [
      { provider: "openrouter", baseUrl: "" },
      { provider: "custom", baseUrl: "https://openrouter.ai/api/v1" },
      { provider: "nvidia", baseUrl: "" },
      { provider: "x", baseUrl: "https://integrate.api.nvidia.com/v1" },
      { provider: "opencode-go", baseUrl: "" },
      { provider: "x", baseUrl: "https://opencode.ai/zen" },
      { provider: "anthropic", baseUrl: "https://api.anthropic.com" },
      { provider: "x", baseUrl: "not a url" },
    ];
    expect(ai().PI_ATTRIBUTION).toEqual(ref.PI_ATTRIBUTION);
    for (const id of identities) {
      for (const t of targets) {
        expect(ai().getAttributionHeaders(t, id)).toEqual(ref.getAttributionHeaders(t, id));
        expect(ai().getOpenCodeSessionHeaders(t, "s1")).toEqual(ref.getOpenCodeSessionHeaders(t, "s1"));
      }
      if (id?.userAgent) expect(ai().formatUserAgent(id)).toBe(ref.formatUserAgent(id));
      for (const other of identities) expect(ai().mergeClientIdentity(id, other)).toEqual(ref.mergeClientIdentity(id, other));
    }
    expect(ai().formatUserAgent({ version: "2.0" })).toBe(ref.formatUserAgent({ version: "2.0" }));
  });

  test("withClientIdentity adds its identity under each request's own", () => {
    const calls: Mod[] = [];
    const models = { stream: (_m: unknown, _c: unknown, o: Mod) => calls.push(o), getModel: (p: string, id: string) => `${p}/${id}`, setProvider: () => 1, deleteProvider: () => 2, clearProviders: () => 3 } as Mod;
    for (const k of ["getProviders", "getProvider", "getModels", "getModelsOfType", "getModelOfType", "getAllModels", "refresh", "checkAuth", "getAvailable", "getAvailableOfType", "getAllAvailable", "getAuth", "login", "logout", "complete", "streamSimple", "completeSimple", "streamDeferred", "fetchDeferred", "cancelDeferred", "generateImages", "classify"]) models[k] ??= () => undefined;
    const wrapped = ai().withClientIdentity(models, { userAgent: "short", version: "1" });
    wrapped.stream({}, {}, { identity: { version: "2" }, apiKey: "k" });
    expect(calls[0]).toEqual({ identity: { userAgent: "short", version: "2" }, apiKey: "k" });
    expect(wrapped.getModel("a", "b")).toBe("a/b");
    expect(wrapped.clearProviders()).toBe(3);
  });

  test("InMemoryCredentialStore serializes changes per provider; envApiKeyAuth prefers a stored key", async () => {
    const store = new (ai().InMemoryCredentialStore)();
    const order: number[] = [];
    await Promise.all([
      store.modify("p", async () => (await Bun.sleep(5), order.push(1), { type: "api_key", key: "a" })),
      store.modify("p", async (cur: Mod) => (order.push(2), { type: "api_key", key: `${cur.key}b` })),
    ]);
    expect(order).toEqual([1, 2]);
    expect(await store.read("p")).toEqual({ type: "api_key", key: "ab" });
    expect(await store.list()).toEqual([{ providerId: "p", type: "api_key" }]);
    await store.delete("p");
    expect(await store.read("p")).toBeUndefined();
    const auth = ai().envApiKeyAuth("Acme", ["ACME_A", "ACME_B"]);
    const ctx = { env: async (n: string) => ({ ACME_B: "from-b" })[n] };
    const signal = new AbortController().signal;
    expect(await auth.resolve({ ctx, signal })).toEqual({ auth: { apiKey: "from-b" }, source: "ACME_B" });
    expect(await auth.resolve({ ctx, signal, credential: { type: "api_key", key: "kept" } })).toMatchObject({ auth: { apiKey: "kept" }, source: "stored credential" });
    const err = new (ai().ModelsError)("auth", "could not resolve", { cause: new Error("disk full") });
    expect([err.name, err.code, err.message]).toEqual(["ModelsError", "auth", "could not resolve: disk full"]);
  });

  test("lazyOAuth loads its flow once, on first use", async () => {
    let loads = 0;
    const oauth = ai().lazyOAuth({ name: "X", load: async () => (loads++, { login: async () => "in", refresh: async () => "fresh", toAuth: async (c: string) => `auth:${c}` }) });
    expect(loads).toBe(0);
    expect(await oauth.toAuth("c")).toBe("auth:c");
    expect(await oauth.refresh("c")).toBe("fresh");
    expect(loads).toBe(1);
  });
});

describe("image generation (pi-ai/compat)", () => {
  const PNG = Buffer.from("png-bytes").toString("base64");
  function imageServer(status = 200) {
    const bodies: Mod[] = [];
    const headers: Record<string, string>[] = [];
    const server = Bun.serve({
      port: 0,
      async fetch(req) {
        bodies.push((await req.json()) as Mod);
        headers.push(Object.fromEntries(req.headers));
        if (status !== 200) return Response.json({ error: { message: "bad prompt", code: status } }, { status, headers: { "x-should-retry": "false" } });
        return Response.json({
          id: "gen-1",
          choices: [{ message: { role: "assistant", content: "here", images: [{ type: "image_url", image_url: { url: `data:image/png;base64,${PNG}` } }, { image_url: "https://not-inline" }] } }],
          usage: { prompt_tokens: 100, completion_tokens: 40, prompt_tokens_details: { cached_tokens: 30, cache_write_tokens: 10 } },
        });
      },
    });
    return { server, bodies, headers, url: `http://127.0.0.1:${server.port}/api/v1` };
  }
  const imageModel = (baseUrl: string) => ({ id: "img-1", name: "Img", api: "openrouter-images", provider: "openrouter", baseUrl, input: ["text", "image"], output: ["image", "text"], cost: { input: 1, output: 2, cacheRead: 0.5, cacheWrite: 1.5 }, headers: { "X-Model": "m" } });
  const context = { input: [{ type: "text", text: "a cat" }, { type: "image", mimeType: "image/jpeg", data: "AAAA" }] };

  test("generateImages dispatches on model.api to the OpenRouter request and reads text, inline images and usage", async () => {
    const fake = imageServer();
    try {
      const r = await compat().generateImages(imageModel(fake.url), context, { apiKey: "or-key", headers: { "X-Call": "c" } });
      expect(r).toMatchObject({ api: "openrouter-images", provider: "openrouter", model: "img-1", stopReason: "stop", responseId: "gen-1" });
      expect(r.output).toEqual([{ type: "text", text: "here" }, { type: "image", mimeType: "image/png", data: PNG }]);
      expect(r.usage).toMatchObject({ input: 70, output: 40, cacheRead: 20, cacheWrite: 10, totalTokens: 140 });
      expect(fake.bodies[0]).toMatchObject({ model: "img-1", stream: false, modalities: ["image", "text"] });
      expect(fake.bodies[0]!.messages[0].content[1]).toEqual({ type: "image_url", image_url: { url: "data:image/jpeg;base64,AAAA" } });
      expect(fake.headers[0]).toMatchObject({ authorization: "Bearer or-key", "x-model": "m", "x-call": "c" });
      const missing = await compat().generateImagesOpenRouter(imageModel(fake.url), context, {});
      expect(missing).toMatchObject({ stopReason: "error", errorMessage: "No API key for provider: openrouter" });
      expect(() => compat().getImagesApiProvider("openrouter-images").generateImages({ api: "other" }, context)).toThrow("Mismatched api");
    } finally {
      fake.server.stop(true);
    }
  });

  (REF ? test : test.skip)("the same request and result as the reference's, success and HTTP error", async () => {
    const ref = await refAi();
    for (const status of [200, 400]) {
      const fake = imageServer(status);
      try {
        const mine = await compat().generateImagesOpenRouter(imageModel(fake.url), context, { apiKey: "k" });
        const theirs = await ref.generateImagesOpenRouter(imageModel(fake.url), context, { apiKey: "k" });
        // Prices are the same; pion multiplies before dividing, so the last float digit may differ.
        for (const k of Object.keys(theirs.usage?.cost ?? {})) if (typeof theirs.usage.cost[k] === "number") expect(mine.usage.cost[k]).toBeCloseTo(theirs.usage.cost[k], 12);
        // An HTTP error reads as pion's provider errors do ("400 bad prompt"; the reference's "400: {body}").
        expect(mine.errorMessage === undefined).toBe(theirs.errorMessage === undefined);
        if (mine.errorMessage) expect(mine.errorMessage).toContain("400 bad prompt");
        const strip = ({ timestamp: _t, errorMessage: _e, usage, ...rest }: Mod) => ({ ...rest, ...(usage ? { usage: { ...usage, cost: Object.keys(usage.cost).sort() } } : {}) });
        expect(strip(mine)).toEqual(strip(theirs));
        expect(fake.bodies[0]).toEqual(fake.bodies[1]);
      } finally {
        fake.server.stop(true);
      }
    }
  });
});

describe("createProvider and fauxProvider", () => {
  test("an api map dispatches on model.api; a model without one gets an error stream", async () => {
    const a = ai().createFauxCore({ api: "a" });
    const b = ai().createFauxCore({ api: "b" });
    a.setResponses([ai().fauxAssistantMessage("from a")]);
    b.setResponses([ai().fauxAssistantMessage("from b")]);
    const p = ai().createProvider({ id: "mix", auth: {}, models: [a.getModel(), b.getModel(), { ...a.getModel(), id: "pic", type: "image" }], api: { a: { stream: a.stream, streamSimple: a.streamSimple }, b: { stream: b.stream, streamSimple: b.streamSimple } } });
    expect(p.getModels().map((m: Model) => m.api)).toEqual(["a", "b"]);
    expect(p.getAllModels()).toHaveLength(3);
    expect((await p.streamSimple(b.getModel(), { messages: [] }).result()).content[0].text).toBe("from b");
    const none = await drain(p.stream({ ...a.getModel(), api: "c" }, { messages: [] }));
    expect(none.result).toMatchObject({ stopReason: "error", errorMessage: 'Provider mix has no API implementation for "c"' });
    expect(none.events.map((e) => e.type)).toEqual(["error"]);
    expect(p.generateImages).toBeUndefined();
    expect(() => ai().createProvider({ id: "empty", auth: {}, models: [], api: {} })).toThrow('Provider empty: at least one of "api", "images", or "classifiers" is required.');
  });

  test("fetched models overlay the static ones once published; stored ones are restored first", async () => {
    const core = ai().createFauxCore({ provider: "dyn" });
    const base = core.getModel();
    const p = ai().createProvider({ id: "dyn", auth: {}, models: [base], api: { stream: core.stream, streamSimple: core.streamSimple }, fetchModels: async () => [{ ...base, name: "Renamed" }, { ...base, id: "new" }, { ...base, id: "odd", type: "video" }] });
    const published: Mod[] = [];
    const publish = async (pub: Mod) => (published.push(pub), pub.update?.(), true);
    await p.refreshModels({ stored: { models: [{ ...base, id: "cached" }, { ...base, id: "other", provider: "x" }] }, publish, allowNetwork: false, signal: new AbortController().signal });
    expect(p.getModels().map((m: Model) => m.id)).toEqual(["faux-1", "cached"]);
    await p.refreshModels({ publish, allowNetwork: true, signal: new AbortController().signal });
    expect(p.getModels().map((m: Model) => [m.id, m.name])).toEqual([["faux-1", "Renamed"], ["new", "Faux Model"]]);
    expect(published.at(-1)!.persist.models.map((m: Model) => m.id)).toEqual(["faux-1", "new"]);
  });

  test("fauxProvider's provider streams the script and supports deferred responses", async () => {
    const faux = ai().fauxProvider();
    faux.setResponses([ai().fauxAssistantMessage("hello")]);
    expect(faux.provider.id).toBe("faux");
    expect(await faux.provider.auth.apiKey.resolve()).toEqual({ auth: {} });
    expect((await faux.provider.streamSimple(faux.getModel(), { messages: [] }).result()).content).toEqual([{ type: "text", text: "hello" }]);
    expect(typeof faux.provider.fetchDeferred).toBe("function");
    expect(typeof faux.provider.cancelDeferred).toBe("function");
  });
});

describe("createModels", () => {
  (REF ? test : test.skip)("a faux provider in a collection answers as the reference's, system prompt folded into the transcript", async () => {
    const ref = await refAi();
    const run = async (m: Mod) => {
      const faux = m.fauxProvider({ provider: "fx", api: "fx-api" });
      const models = m.createModels();
      models.setProvider(faux.provider);
      faux.setResponses([m.fauxAssistantMessage("first", { timestamp: 5 }), m.fauxAssistantMessage("second", { timestamp: 6 })]);
      const tools = [{ name: "grep", description: "Search.", parameters: { type: "object", properties: {} } }];
      const a = await models.completeSimple(faux.getModel(), { systemPrompt: "You are terse.", tools, messages: [{ role: "user", content: "hello", timestamp: 1 }] }, { sessionId: "s" });
      const b = await models.completeSimple(faux.getModel(), { systemPrompt: "You are terse.", tools, messages: [{ role: "user", content: "hello", timestamp: 1 }, a, { role: "user", content: "more", timestamp: 2 }] }, { sessionId: "s" });
      const unknown = await models.completeSimple({ ...faux.getModel(), provider: "nope" }, { messages: [] });
      const image = await models.generateImages(faux.getModel(), { input: [] });
      // Timed from the stream's start, as the reference's streams time a response; its value depends on load.
      const { timestamp: _u, durationMs, ...unknownRest } = unknown;
      unknownRest.timed = typeof durationMs;
      const { timestamp: _i, ...imageRest } = image;
      return [a, b, unknownRest, imageRest, models.getModels().map((x: Mod) => x.id), await models.getAvailable(), await models.checkAuth("fx")];
    };
    expect(await run(ai())).toEqual(await run(ref));
  });

  test("auth: a request's key, else the stored credential, else the provider's ambient resolve; unconfigured is a stream error", async () => {
    const { createModels, createProvider, createFauxCore, envApiKeyAuth, InMemoryCredentialStore, fauxAssistantMessage } = ai();
    const core = createFauxCore({ provider: "acme" });
    const seen: Mod[] = [];
    const spy = (model: Model, context: Mod, options: Mod) => (seen.push(options), core.stream(model, context, options));
    const provider = createProvider({ id: "acme", auth: { apiKey: envApiKeyAuth("Acme", ["ACME_KEY"]) }, models: core.models, api: { stream: spy, streamSimple: spy } });
    const credentials = new InMemoryCredentialStore();
    let env: Record<string, string> = {};
    const models = createModels({ credentials, authContext: { env: async (n: string) => env[n], fileExists: async () => false } });
    models.setProvider(provider);
    const failed = await models.complete(core.getModel(), { messages: [] });
    expect(failed).toMatchObject({ stopReason: "error", errorMessage: "Provider is not configured: acme" });
    expect(await models.getAvailable()).toEqual([]);
    env = { ACME_KEY: "from-env" };
    core.setResponses([fauxAssistantMessage("a"), fauxAssistantMessage("b"), fauxAssistantMessage("c")]);
    await models.complete(core.getModel(), { messages: [] });
    await models.login("acme", "apiKey", { signal: new AbortController().signal, prompt: async () => "stored-key" });
    await models.complete(core.getModel(), { messages: [] }, { headers: { "X-A": "1" } });
    await models.complete(core.getModel(), { messages: [] }, { apiKey: "explicit" });
    expect(seen.map((o) => o.apiKey)).toEqual(["from-env", "stored-key", "explicit"]);
    expect(seen[1]!.headers).toEqual({ "X-A": "1" });
    expect(await models.getAuth("acme")).toEqual({ auth: { apiKey: "stored-key" }, source: "stored credential" });
    await models.logout("acme");
    expect((await models.getAuth("acme")).source).toBe("ACME_KEY");
    await expect(models.login("acme", "oauth", { prompt: async () => "" })).rejects.toThrow("acme does not support oauth login");
  });

  test("an OAuth login about to expire is refreshed once under the store's lock, and stored", async () => {
    const { createModels, createProvider, createFauxCore, InMemoryCredentialStore } = ai();
    const core = createFauxCore({ provider: "o" });
    let refreshes = 0;
    const oauth = { refresh: async (c: Mod) => (refreshes++, { ...c, access: "new", expires: Date.now() + 3_600_000 }), toAuth: async (c: Mod) => ({ apiKey: c.access }) };
    const credentials = new InMemoryCredentialStore();
    await credentials.modify("o", () => ({ type: "oauth", access: "old", refresh: "r", expires: Date.now() + 1000 }));
    const models = createModels({ credentials });
    models.setProvider(createProvider({ id: "o", auth: { oauth }, models: core.models, api: { stream: core.stream, streamSimple: core.streamSimple } }));
    const [a, b] = await Promise.all([models.getAuth("o"), models.getAuth("o")]);
    expect([a.auth.apiKey, b.auth.apiKey, a.source]).toEqual(["new", "new", "OAuth"]);
    expect(refreshes).toBe(1);
    expect((await credentials.read("o")).access).toBe("new");
    const bad = { refresh: async () => { throw new Error("revoked"); }, toAuth: async () => ({}) };
    const store = new InMemoryCredentialStore();
    await store.modify("o", () => ({ type: "oauth", access: "x", expires: 0 }));
    const broken = createModels({ credentials: store });
    broken.setProvider(createProvider({ id: "o", auth: { oauth: bad }, models: core.models, api: { stream: core.stream, streamSimple: core.streamSimple } }));
    await expect(broken.getAuth("o")).rejects.toThrow("OAuth refresh failed for o: revoked");
  });

  test("refresh restores the stored list, then fetches with the credential; a superseded refresh publishes nothing", async () => {
    const { createModels, createProvider, createFauxCore, InMemoryModelsStore } = ai();
    const core = createFauxCore({ provider: "d" });
    const modelsStore = new InMemoryModelsStore();
    await modelsStore.write("d", { models: [{ ...core.getModel(), id: "stored" }], checkedAt: 1 });
    let fetches = 0;
    const provider = createProvider({ id: "d", auth: { apiKey: { resolve: async () => ({ auth: { apiKey: "k" } }) } }, models: core.models, api: { stream: core.stream, streamSimple: core.streamSimple }, fetchModels: async (ctx: Mod) => (fetches++, [{ ...core.getModel(), id: `fetched-${ctx.credential.key}` }]) });
    const models = createModels({ modelsStore });
    models.setProvider(provider);
    const offline = await models.refresh({ allowNetwork: false });
    expect(offline.errors.size).toBe(0);
    expect(models.getModels("d").map((m: Model) => m.id)).toEqual(["faux-1", "stored"]);
    await models.refresh();
    expect(models.getModels("d").map((m: Model) => m.id)).toEqual(["faux-1", "fetched-k"]);
    expect((await modelsStore.read("d")).models.map((m: Model) => m.id)).toEqual(["fetched-k"]);
    expect(fetches).toBe(1);
  });
});

test("pi-ai's streamSimple: each tool-call delta carries the arguments parsed so far (read as it arrives)", async () => {
  await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts", limit: 5 }, fragments: 4 }] }] });
  const model = { ...compat().getModel("openai", "gpt-4o"), api: "openai-completions", baseUrl: `${fake.url}/v1` };
  const stream = ai().streamSimple(model, { messages: [{ role: "user", content: "read it", timestamp: 1 }] }, { apiKey: "k" });
  const partials: string[] = [];
  for await (const e of stream) if (e.type === "toolcall_delta") partials.push(JSON.stringify(e.partial.content[0].arguments));
  expect(partials.length).toBe(4);
  expect(partials.at(-1)).toBe(JSON.stringify({ path: "src/a.ts", limit: 5 }));
  expect(new Set(partials).size).toBeGreaterThan(1);
  expect((await stream.result()).content[0]).toMatchObject({ type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts", limit: 5 } });
});

describe("tool arguments read while they stream", () => {
  const TEXTS = [
    JSON.stringify({ path: "src/a b.ts", n: 12, list: [1, "x", { y: true }], nested: { q: 'w"e' }, flag: false, z: null }),
    JSON.stringify({ a: "é\u0001 \\ \n tab\t", b: [[1, 2], [3, [4, { c: -1.5e3 }]]], d: "" }),
    '{ "x" : 1 ,\n "y" : [ true , false , null ] , "z" : { } }',
    '{"a":"\\u00e9\\u0041","b":12.5E-3,"neg":-0.25,"big":1e21}',
  ];

  const partialArguments = (text: string) => new ToolCallArgumentsStream().append(text);

  test("every prefix gives what has arrived: cut strings kept, keys without values left out; pieces read as the whole", () => {
    expect(partialArguments('{"pa')).toEqual({});
    expect(partialArguments("")).toEqual({});
    const stream = new ToolCallArgumentsStream();
    let last: Record<string, unknown> = {};
    for (const c of TEXTS[0]!) last = stream.append(c);
    expect(last).toEqual(JSON.parse(TEXTS[0]!));
    expect(stream.finish()).toEqual({ arguments: JSON.parse(TEXTS[0]!) });
    expect(partialArguments('{"path":"a","tex')).toEqual({ path: "a" });
    expect(partialArguments('{"path":"a","text":"lo')).toEqual({ path: "a", text: "lo" });
    expect(partialArguments('{"ok":tr')).toEqual({ ok: true });
    expect(partialArguments('{"n":12.')).toEqual({});
    expect(partialArguments('{"a":[1,{"b":"c\\')).toEqual({ a: [1, { b: "c" }] });
  });

  (REF ? test : test.skip)("every prefix parses as the reference's streaming parser parses it", async () => {
    const ref = await import(join(REF!, "..", "pi-ai", "dist", "index.js"));
    for (const full of TEXTS) {
      for (let i = 0; i <= full.length; i++) {
        const t = full.slice(0, i);
        expect([t, partialArguments(t)]).toEqual([t, new ref.ToolCallArgumentsStream().append(t)]);
      }
    }
  });
});
