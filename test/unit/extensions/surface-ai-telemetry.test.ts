import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { AI_TELEMETRY_SCHEMA, observeModelRequest } from "../../../src/extensions/surface/ai-telemetry.ts";
import { startFakeProvider, type FakeReply } from "../../support/fake-provider.ts";

const REF = process.env.PION_REFERENCE_PKG;
// biome-ignore lint/suspicious/noExplicitAny: the reference's modules and pion's virtual ones are untyped here
type Mod = Record<string, any>;
const pion = () => referenceModules()["pi-ai/compat"] as Mod;
const refAi = async (): Promise<Mod> => import(join(REF!, "..", "pi-ai", "dist", "compat.js"));
const refTelemetry = async (): Promise<Mod> => import(join(REF!, "..", "pi-telemetry", "dist", "index.js"));

const fake = startFakeProvider();
afterAll(() => fake.stop());
const model = {
  id: "fake-model",
  name: "Fake",
  api: "anthropic-messages",
  provider: "fake",
  baseUrl: fake.url,
  reasoning: true,
  input: ["text"],
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  contextWindow: 100000,
  maxTokens: 1000,
} as const;
const context = { systemPrompt: "be brief", messages: [{ role: "user", content: "hi", timestamp: 1 }] };
const reply: FakeReply = {
  blocks: [{ type: "thinking", thinking: ["let me", " see"] }, { type: "text", text: ["hello", " there"] }, { type: "toolCall", name: "echo", arguments: { text: "hi", n: [1, 2] }, fragments: 3 }],
  usage: { input: 12, output: 7, cacheRead: 4, cacheWrite: 2 },
};

/** A Models collection (pion's or the reference's module) with one provider on the fake server. */
function modelsOf(ai: Mod, keyed = true): Mod {
  const models = ai.createModels();
  const auth = { apiKey: { resolve: async () => (keyed ? { auth: { apiKey: "k" } } : undefined) } };
  models.setProvider(ai.createProvider({ id: "fake", auth, models: [model], api: ai.anthropicMessagesApi() }));
  return models;
}

/**
 * What a run recorded, without times, ids and descriptions (the schema's descriptions are each
 * side's own words), nor whether a span had ended when the call returned: the reference's result
 * can resolve a few microtasks before its span ends (pion's spans have always ended, checked apart).
 */
function recorded(t: Mod) {
  const spans = t.getSpans().map((s: Mod) => ({
    name: s.name,
    child: s.parentId !== null,
    attributes: { ...s.attributes, ...("response.id" in s.attributes ? { "response.id": typeof s.attributes["response.id"] } : {}) },
    events: s.events,
    status: s.status.status === "error" ? { status: "error", name: s.status.error?.name, hasMessage: (s.status.error?.message ?? "").length > 0 } : s.status,
  }));
  const metrics = t.getMetrics().map(({ description: _d, value, context, ...m }: Mod) => ({
    ...m,
    value: m.name.endsWith(".duration") ? typeof value : value,
    context: context === null ? null : "span",
  }));
  return { spans, metrics, allEnded: t.getSpans().every((s: Mod) => s.settled) };
}

async function run(ai: Mod, how: "stream" | "streamSimple" | "completeSimple", opts: { reply?: FakeReply; keyed?: boolean; reasoning?: unknown } = {}) {
  const { InMemoryTelemetryContext } = await refTelemetry();
  const t = new InMemoryTelemetryContext();
  if (opts.reply) fake.enqueue(opts.reply);
  const models = modelsOf(ai, opts.keyed ?? true);
  await t.startSpan({ name: "app.turn" }, async (span: Mod) => {
    const options = { telemetry: span, ...(opts.reasoning !== undefined ? { reasoning: opts.reasoning } : {}) };
    if (how === "completeSimple") return models.completeSimple(model, context, options);
    const s = models[how](model, context, options);
    for await (const _ of s) {
      // drained: the span ends with the final message
    }
    return s.result();
  });
  return recorded(t);
}

describe("pi-ai request telemetry", () => {
  test("AI_TELEMETRY_SCHEMA is on pi-ai, pi-ai/compat and pi-ai/models; no observer without options.telemetry", async () => {
    for (const pkg of ["pi-ai", "pi-ai/compat", "pi-ai/models"] as const) expect((referenceModules()[pkg] as Mod).AI_TELEMETRY_SCHEMA).toBe(AI_TELEMETRY_SCHEMA);
    expect(observeModelRequest(model, {}, false)).toBeUndefined();
    expect(observeModelRequest(model, undefined, true)).toBeUndefined();
  });

  test("a request without options.telemetry answers as before", async () => {
    fake.enqueue(reply);
    const m = await modelsOf(pion()).completeSimple(model, context);
    expect(m.stopReason).toBe("toolUse");
    expect(m.usage.input).toBe(12);
  });

  (REF ? test : test.skip)("the schema's names, types, units, value lists and flags equal the reference's", async () => {
    const ref = (await refAi()).AI_TELEMETRY_SCHEMA ?? (await import(join(REF!, "..", "pi-ai", "dist", "index.js"))).AI_TELEMETRY_SCHEMA;
    const shape = (x: unknown): unknown =>
      Array.isArray(x) ? x : x && typeof x === "object" ? Object.fromEntries(Object.entries(x).filter(([k]) => k !== "description" && k !== "errorWhen").map(([k, v]) => [k, shape(v)])) : x;
    expect(shape(AI_TELEMETRY_SCHEMA)).toEqual(shape(ref));
    expect(JSON.stringify(AI_TELEMETRY_SCHEMA)).not.toBe(JSON.stringify(ref));
  });

  (REF ? test : test.skip)("streamSimple, stream and completeSimple record the reference's spans, events and metrics", async () => {
    const ref = await refAi();
    for (const how of ["streamSimple", "stream", "completeSimple"] as const) {
      const mine = await run(pion(), how, { reply, reasoning: "high" });
      const theirs = await run(ref, how, { reply, reasoning: "high" });
      expect(mine).toEqual(theirs);
      expect(mine.allEnded).toBe(true);
      const request = mine.spans.find((s: Mod) => s.name === "pi.ai.request")!;
      expect(request.child).toBe(true);
      expect(request.attributes).toMatchObject({ provider: "fake", api: "anthropic-messages", model: "fake-model", reasoning: "high", stop: "toolUse", "usage.input": 12, "usage.output": 7 });
      expect(request.events.map((e: Mod) => [e.name, e.attributes.type])).toEqual([["pi.ai.first_chunk", undefined], ["pi.ai.block", "thinking"], ["pi.ai.block", "text"], ["pi.ai.block", "tool_call"]]);
      expect(request.events[2].attributes.chars).toBe("hello there".length);
      expect(mine.metrics.map((m: Mod) => m.name)).toEqual(["pi.ai.first_chunk.duration", "pi.ai.request.duration", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.cost"]);
    }
  });

  (REF ? test : test.skip)("direct stream calls outside Models record nothing, as the reference's", async () => {
    const { InMemoryTelemetryContext } = await refTelemetry();
    for (const ai of [pion(), await refAi()]) {
      const t = new InMemoryTelemetryContext();
      fake.enqueue(reply);
      const m = await ai.completeSimple(model, context, { apiKey: "k", telemetry: t });
      expect([m.stopReason, t.getSpans(), t.getMetrics()]).toEqual(["toolUse", [], []]);
    }
  });

  (REF ? test : test.skip)("an HTTP error, a broken stream, a setup failure and a reasoning object: the reference's status, stop and attributes", async () => {
    const ref = await refAi();
    const failing: FakeReply = { kind: "http_error", status: 400, message: "bad request body" };
    const broken: FakeReply = { kind: "stream_error", afterBlocks: [{ type: "text", text: "partial answer" }], message: "overloaded now" };
    const cases = [{ reply: failing }, { reply: broken }, { keyed: false }, { reply, reasoning: { effort: "high" } }];
    for (const c of cases) {
      const mine = await run(pion(), "streamSimple", c);
      expect(mine).toEqual(await run(ref, "streamSimple", c));
      expect(mine.spans.length).toBe(2);
    }
    const error = (await run(pion(), "streamSimple", { keyed: false })).spans[1];
    expect(error.status).toEqual({ status: "error", name: "provider_error", hasMessage: true });
    expect(error.events.map((e: Mod) => e.name)).toEqual(["pi.ai.first_chunk"]);
  });

  (REF ? test : test.skip)("a deferred poll is pi.ai.poll; a pending or deferred poll adds no tokens or cost, a final one does", async () => {
    const { InMemoryTelemetryContext } = await refTelemetry();
    const usage = { input: 5, output: 3, cacheRead: 1, cacheWrite: 0, totalTokens: 9, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.25 } };
    const message = (stopReason: string) => ({ role: "assistant", content: [], api: model.api, provider: "fake", model: model.id, usage, stopReason, responseId: "r1", timestamp: Date.now() });
    const poll = (stopReason: string) => ({
      async *[Symbol.asyncIterator]() {
        yield { type: "done", reason: stopReason, message: message(stopReason) };
      },
      result: async () => message(stopReason),
    });
    const runPoll = async (ai: Mod, stopReason: string) => {
      const t = new InMemoryTelemetryContext();
      const models = ai.createModels();
      const api = { ...ai.anthropicMessagesApi(), fetchDeferred: () => poll(stopReason) };
      models.setProvider(ai.createProvider({ id: "fake", auth: { apiKey: { resolve: async () => ({ auth: { apiKey: "k" } }) } }, models: [model], api }));
      await t.startSpan({ name: "app.poll" }, (span: Mod) => models.fetchDeferred(model, { id: "h" }, { telemetry: span }));
      return recorded(t);
    };
    for (const stop of ["deferred", "stop"]) {
      const mine = await runPoll(pion(), stop);
      const theirs = await runPoll(await refAi(), stop);
      expect({ ...mine, allEnded: true }).toEqual({ ...theirs, allEnded: true });
      expect(mine.allEnded).toBe(true);
      expect(mine.spans[1]).toMatchObject({ name: "pi.ai.poll", attributes: { stop, "usage.input": 5, "cost.total": 0.25 } });
      expect(mine.metrics.map((m: Mod) => m.name)).toEqual(stop === "deferred" ? ["pi.ai.first_chunk.duration", "pi.ai.request.duration"] : ["pi.ai.first_chunk.duration", "pi.ai.request.duration", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.tokens", "pi.ai.cost"]);
    }
  });

  test("no content reaches telemetry, and an error message is cut to 500 characters", async () => {
    const spans: Mod[] = [];
    const parent = {
      startSpan: (o: Mod, cb: (s: Mod) => unknown) => {
        const s: Mod = { ...o, attributes: { ...o.attributes }, events: [] as Mod[], status: undefined as unknown, addEvent: (n: string, a?: Mod) => s.events.push({ n, a }), setAttributes: (a: Mod) => Object.assign(s.attributes, a), setStatus: (st: unknown) => (s.status = st) };
        spans.push(s);
        return cb(s);
      },
    };
    const o = observeModelRequest(model, { telemetry: parent }, false)!;
    o.onEvent({ type: "text_start", contentIndex: 0 });
    o.onEvent({ type: "text_delta", contentIndex: 0, delta: "secret words" });
    o.onEvent({ type: "text_end", contentIndex: 0, content: "secret words" });
    const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0.5 } };
    o.onResult({ role: "assistant", content: [], api: "x", provider: "fake", model: "fake-model", usage, stopReason: "error", errorMessage: "e".repeat(900), timestamp: 1 } as never);
    expect(JSON.stringify(spans)).not.toContain("secret");
    expect(spans[0]!.status).toEqual({ status: "error", error: { name: "provider_error", message: "e".repeat(500) } });
  });

  test("an adapter that hands over its span late gets the events before it, in order, and the span ends after the result", async () => {
    const seen: string[] = [];
    let ended = false;
    const parent = {
      startSpan: async (_o: Mod, cb: (s: Mod) => Promise<unknown>) => {
        await Bun.sleep(5);
        await cb({ addEvent: (n: string, a?: Mod) => seen.push(`${n}:${a?.type ?? ""}`), setAttributes: (a: Mod) => seen.push(`stop=${a.stop}`), setStatus: () => seen.push("status") });
        ended = true;
      },
    };
    const o = observeModelRequest(model, { telemetry: parent }, false)!;
    o.onEvent({ type: "thinking_end", contentIndex: 0, content: "x" });
    const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    o.onResult({ role: "assistant", content: [], api: "x", provider: "fake", model: "fake-model", usage, stopReason: "stop", timestamp: 1 } as never);
    expect(seen).toEqual([]);
    await Bun.sleep(20);
    expect(seen).toEqual(["pi.ai.first_chunk:", "pi.ai.block:thinking", "stop=stop"]);
    expect(ended).toBe(true);
  });
});
