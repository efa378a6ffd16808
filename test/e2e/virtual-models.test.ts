import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const ROUTER = resolve(import.meta.dir, "../fixtures/extensions/router.ts");

function setup(model: string, settings?: Record<string, unknown>) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, { keyless: { baseUrl: fake.url, api: "anthropic-messages", models: [{ id: "k1" }] } });
  if (settings) writeSettings(dirs.home, settings);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model, "-e", ROUTER] });
  return { fake, p };
}

const text = (t: string) => ({ blocks: [{ type: "text" as const, text: t }] });
const assistants = (records: Rec[], from = 0) =>
  records.slice(from).filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message);
const states = (records: Rec[]) =>
  records.filter((r) => r.type === "entry_appended" && r.entry.type === "custom").map((r) => r.entry);

describe("virtual models (pi.registerVirtualModel)", () => {
  test.concurrent("--model router/auto: two prompts routed to two models, each recorded with the model that served it", async () => {
    const { fake, p } = setup("router/auto");
    const state = (await p.request({ type: "get_state" })).data;
    expect(state.model).toEqual({
      id: "auto",
      name: "Auto router",
      api: "pi-virtual",
      provider: "router",
      baseUrl: "",
      reasoning: true,
      input: ["text", "image"],
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: 100000,
      maxTokens: 0,
      thinkingLevels: ["low", "high"],
    });
    // The default level (medium) clamps to the router's own list: the nearest, the higher of two as near.
    expect(state.thinkingLevel).toBe("high");
    expect((await p.request({ type: "get_available_thinking_levels" })).data).toEqual({ levels: ["low", "high"] });
    const models = (await p.request({ type: "get_available_models" })).data.models as Rec[];
    expect(models.map((m) => `${m.provider}/${m.id}`)).toContain("router/auto");

    fake.enqueue(text("one"), text("two"));
    await p.request({ type: "prompt", message: "first" });
    await p.waitFor("agent_settled");
    const second = p.records.length;
    await p.request({ type: "prompt", message: "second" });
    await p.waitFor("agent_settled", second);

    // What the providers got: physical models only, at the routed thinking level.
    expect(fake.requests.map((r) => (r.body as Rec).model)).toEqual(["fake-model", "fake-plain"]);
    expect((fake.requests[0]!.body as Rec).thinking).toMatchObject({ type: "enabled" });
    expect((fake.requests[1]!.body as Rec).thinking).toBeUndefined();
    // What was announced and recorded: the physical model from message_start on.
    const starts = p.records.filter((r) => r.type === "message_start" && r.message.role === "assistant").map((r) => r.message.model);
    expect(starts).toEqual(["fake-model", "fake-plain"]);
    expect(assistants(p.records).map((m) => [m.provider, m.model, m.api, m.thinkingLevel, m.content[0].text])).toEqual([
      ["fake", "fake-model", "anthropic-messages", "high", "one"],
      ["fake", "fake-plain", "anthropic-messages", "off", "two"],
    ]);
    // The router's state, stored on the branch before each request, says what it was asked.
    expect(states(p.records).map((e) => [e.customType, e.data])).toEqual([
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { turns: 1, seen: ["user:high:-:-:system"] } }],
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { turns: 2, seen: ["user:high:-:-:system", "user:high:fake-model:-:system"] } }],
    ]);
    const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
    expect(entries.filter((e) => e.type === "model_change").map((e) => `${e.provider}/${e.modelId}`)).toEqual(["router/auto"]);
    const msgs = (await p.request({ type: "get_messages" })).data.messages as Rec[];
    expect(msgs.filter((m) => m.role === "assistant").map((m) => m.model)).toEqual(["fake-model", "fake-plain"]);
    expect((await p.request({ type: "get_state" })).data.model.id).toBe("auto");
    expect(await p.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("set_model selects it; tool follow-ups and retries are routed with their reason; failures name the virtual model", async () => {
    const { fake, p } = setup("fake/fake-plain", { retry: { maxRetries: 1, baseDelayMs: 1 }, compaction: { keepRecentTokens: 1 } });
    const set = await p.request({ type: "set_model", provider: "router", modelId: "auto" });
    expect(set.data).toMatchObject({ provider: "router", id: "auto", api: "pi-virtual" });
    await p.request({ type: "set_thinking_level", level: "high" });

    fake.enqueue({ blocks: [{ type: "toolCall", id: "b1", name: "bash", arguments: { command: "echo hi" } }] }, { kind: "http_error", status: 529 }, text("done"));
    await p.request({ type: "prompt", message: "run it" });
    await p.waitFor("agent_settled");
    expect(fake.requests.map((r) => (r.body as Rec).model)).toEqual(["fake-model", "fake-model", "fake-model"]);
    expect(states(p.records).at(-1)!.data.state.seen).toEqual([
      "user:high:-:-:system",
      "continuation:high:fake-model:-:system",
      "retry:high:fake-model:fake-model:system",
    ]);

    let from = p.records.length;
    await p.request({ type: "prompt", message: "go nowhere" });
    await p.waitFor("agent_settled", from);
    expect(assistants(p.records, from)).toEqual([
      expect.objectContaining({
        api: "pi-virtual",
        provider: "router",
        model: "auto",
        stopReason: "error",
        errorMessage: "Virtual model router/auto routed to fake/no-such-model, which is not a physical model.",
      }),
    ]);
    from = p.records.length;
    await p.request({ type: "prompt", message: "use the keyless one" });
    await p.waitFor("agent_settled", from);
    expect(assistants(p.records, from)[0]).toMatchObject({ stopReason: "error", errorMessage: "Virtual model router/auto routed to keyless/k1, which has no credentials." });
    expect(fake.requests).toHaveLength(3);

    // A compaction summary is a "direct" request: routed, with no state stored.
    const before = states(p.records).length;
    // (The cut keeps the last turn, whose failed reply counts no tokens: one summary request.)
    fake.enqueue(text("the summary"));
    const compact = await p.request({ type: "compact" });
    expect(compact).toMatchObject({ success: true });
    expect(fake.requests.slice(3).map((r) => (r.body as Rec).model)).toEqual(["fake-plain"]);
    expect(states(p.records)).toHaveLength(before);
    expect(await p.close()).toBe(0);
    await fake.stop();
  });
});
