import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, promptToResult, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

/**
 * The reference 1.6's nested fields, through the binary for each provider API: the provider's
 * response id on the assistant message, Anthropic's one-hour cache writes in usage, and whether
 * the cost's total is the provider's own figure.
 */
const PRICES = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
const model = (id: string) => ({ id, name: id, reasoning: false, input: ["text"], contextWindow: 200000, maxTokens: 8192, cost: PRICES });

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, {
    // OpenRouter by its provider id: its usage chunk's `cost` is the billed total.
    openrouter: { baseUrl: `${fake.url}/v1`, api: "openai-completions", apiKey: "k", models: [model("or-model")] },
  });
  return { fake, ...dirs };
}

async function promptOnce(provider: string, modelId: string, usage: Record<string, unknown>) {
  const { fake, home, cwd } = setup();
  fake.enqueue({ blocks: [{ type: "text", text: "hi" }], usage });
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--provider", provider, "--model", modelId, "--thinking", "off"] });
  const recs = await promptToResult(p, "hello");
  const end = recs.findLast((r) => r.type === "message_end" && r.message.role === "assistant")!;
  const settled = recs.find((r) => r.type === "agent_settled")!;
  const result = recs.find((r) => r.type === "prompt_result")!;
  const messages: Rec[] = (await p.request({ type: "get_messages" })).data.messages;
  const sessionFile: string = (await p.request({ type: "get_state" })).data.sessionFile;
  const stats = (await p.request({ type: "get_session_stats" })).data;
  await p.close();
  await fake.stop();
  expect(p.wireIssues).toEqual([]);
  const stored = readFileSync(sessionFile, "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l))
    .filter((e) => e.type === "message" && e.message.role === "assistant")
    .map((e) => e.message);
  return { message: end.message, settled, result, listed: messages.filter((m) => m.role === "assistant"), stored, stats };
}

describe("responseId, cacheWrite1h and totalFromProvider", () => {
  test.concurrent("anthropic-messages: msg_ id; one-hour writes counted and priced at twice the input price", async () => {
    const r = await promptOnce("fake", "fake-plain", { input: 100, output: 10, cacheRead: 5, cacheWrite: 7, cacheWrite1h: 3 });
    expect(r.message.responseId).toMatch(/^msg_01\w{22}$/);
    // The reference's key order: responseId after timestamp, cacheWrite1h after cost, totalFromProvider last in cost.
    expect(Object.keys(r.message).slice(0, 9)).toEqual(["role", "content", "api", "provider", "model", "usage", "stopReason", "timestamp", "responseId"]);
    expect(Object.keys(r.message.usage)).toEqual(["input", "output", "cacheRead", "cacheWrite", "totalTokens", "cost", "cacheWrite1h"]);
    expect(Object.keys(r.message.usage.cost)).toEqual(["input", "output", "cacheRead", "cacheWrite", "total", "totalFromProvider"]);
    const cacheWriteCost = (4 * PRICES.cacheWrite + 3 * 2 * PRICES.input) / 1e6;
    expect(r.message.usage).toMatchObject({ cacheWrite: 7, cacheWrite1h: 3, totalTokens: 122, cost: { totalFromProvider: false } });
    expect(r.message.usage.cost.cacheWrite).toBeCloseTo(cacheWriteCost, 15);
    expect(r.message.usage.cost.total).toBeCloseTo((100 * 3 + 10 * 15 + 5 * 0.3) / 1e6 + cacheWriteCost, 15);
    expect(r.listed).toEqual([r.message]);
    expect(r.stored).toEqual([r.message]);
    for (const total of [r.settled.usage, r.result.usage]) expect(total).toEqual(r.message.usage);
    expect(r.stats.tokens).toMatchObject({ cacheWrite: 7 });
    expect(r.stats.cost).toBeCloseTo(r.message.usage.cost.total, 15);
  });

  test.concurrent("anthropic-messages: cacheWrite1h is 0, not absent, when nothing was written for an hour", async () => {
    const r = await promptOnce("fake", "fake-plain", { input: 10, output: 5 });
    expect(r.message.usage.cacheWrite1h).toBe(0);
    expect(r.result.usage.cacheWrite1h).toBe(0);
  });

  test.concurrent("openai-completions: chatcmpl- id; no cacheWrite1h; the catalog's total", async () => {
    const r = await promptOnce("fake-openai", "fake-chat", { input: 100, output: 10, reasoning: 4, billing: { cost: 0.5, is_byok: false } });
    expect(r.message.responseId).toMatch(/^chatcmpl-\w{29}$/);
    expect(Object.keys(r.message.usage)).toEqual(["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]);
    // reasoning tokens counted apart, a part of output; summed into the run's totals
    expect([r.message.usage.reasoning, r.message.usage.output, r.result.usage.reasoning]).toEqual([4, 10, 4]);
    // Not OpenRouter: a `cost` in the usage chunk is not believed.
    expect(r.message.usage.cost).toMatchObject({ totalFromProvider: false });
    expect(r.message.usage.cost.total).toBeCloseTo((100 * 3 + 10 * 15) / 1e6, 15);
    expect(r.listed).toEqual([r.message]);
    expect(r.stored).toEqual([r.message]);
    expect(r.result.usage).toEqual(r.message.usage);
  });

  test.concurrent("openai-completions on OpenRouter: the billed cost is the total (totalFromProvider), in the totals too", async () => {
    const r = await promptOnce("openrouter", "or-model", { input: 100, output: 10, billing: { cost: 0.5, is_byok: false } });
    expect(r.message.responseId).toMatch(/^chatcmpl-/);
    expect(r.message.usage.cost).toMatchObject({ total: 0.5, totalFromProvider: true });
    expect(r.message.usage.cost.input).toBeCloseTo((100 * 3) / 1e6, 15); // the parts stay the catalog's
    expect(r.stored).toEqual([r.message]);
    for (const total of [r.settled.usage, r.result.usage]) expect(total.cost).toMatchObject({ total: 0.5, totalFromProvider: true });
    expect(r.result.cost).toBe(0.5);
    expect(r.stats.cost).toBe(0.5);
  });

  test.concurrent("openai-completions on OpenRouter with the user's own key: OpenRouter's fee plus the upstream cost", async () => {
    const billing = { cost: 0.01, is_byok: true, cost_details: { upstream_inference_cost: 0.2 } };
    const r = await promptOnce("openrouter", "or-model", { input: 100, output: 10, billing });
    expect(r.message.usage.cost.total).toBeCloseTo(0.21, 15);
    expect(r.message.usage.cost.totalFromProvider).toBe(true);
  });

  test.concurrent("openai-responses: resp_ id; no cacheWrite1h; the catalog's total", async () => {
    const r = await promptOnce("fake-responses", "fake-resp", { input: 100, output: 10, cacheRead: 5, reasoning: 3 });
    expect(r.message.responseId).toMatch(/^resp_\w{48}$/);
    expect(r.message.usage.reasoning).toBe(3);
    expect(Object.keys(r.message.usage)).toEqual(["input", "output", "cacheRead", "cacheWrite", "reasoning", "totalTokens", "cost"]);
    expect(r.message.usage.cost.totalFromProvider).toBe(false);
    expect(r.listed).toEqual([r.message]);
    expect(r.stored).toEqual([r.message]);
    expect(r.result.usage).toEqual(r.message.usage);
  });
});
