import { describe, expect, test } from "bun:test";
import { applyReportedCost, isOpenRouter, priceUsage } from "../../../src/providers/cost.ts";
import { addUsage, emptyUsage } from "../../../src/providers/event-stream.ts";
import type { Usage } from "../../../src/providers/types.ts";
import { testModel } from "./helpers.ts";

const model = testModel("http://127.0.0.1:9/v1", "anthropic-messages", {
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, tiers: [{ contextOver: 1000, input: 6, output: 22.5, cacheWrite: 7.5 }] },
});
const usage = (over: Partial<Usage>): Usage => Object.assign(emptyUsage(), over);

describe("priceUsage", () => {
  test("one-hour cache writes cost twice the input price, the rest of cacheWrite the cache-write price", () => {
    const u = priceUsage(usage({ input: 100, output: 10, cacheWrite: 40, cacheWrite1h: 30 }), model);
    expect(u.cost.cacheWrite).toBeCloseTo((10 * 3.75 + 30 * 2 * 3) / 1e6, 15);
    expect(u.cost.total).toBeCloseTo((100 * 3 + 10 * 15) / 1e6 + u.cost.cacheWrite, 15);
    expect(u.cost.totalFromProvider).toBe(false);
    expect(u.totalTokens).toBe(150);
  });

  test("above a tier the one-hour price follows the tier's input price", () => {
    const u = priceUsage(usage({ input: 1000, cacheWrite: 10, cacheWrite1h: 10 }), model);
    expect(u.cost.cacheWrite).toBeCloseTo((10 * 2 * 6) / 1e6, 15);
  });

  test("without cacheWrite1h every cache write is a five-minute one, and the usage gains no such field", () => {
    const u = priceUsage(usage({ cacheWrite: 10 }), model);
    expect(u.cost.cacheWrite).toBeCloseTo((10 * 3.75) / 1e6, 15);
    expect("cacheWrite1h" in u).toBe(false);
  });

  test("a total the provider reported stands; the parts are still the catalog's", () => {
    const u = usage({ input: 100, output: 10 });
    applyReportedCost(u, { cost: 0.5, is_byok: false });
    priceUsage(u, model);
    expect(u.cost).toMatchObject({ total: 0.5, totalFromProvider: true });
    expect(u.cost.input).toBeCloseTo((100 * 3) / 1e6, 15);
  });
});

describe("applyReportedCost (OpenRouter's usage.cost)", () => {
  const total = (reported: Parameters<typeof applyReportedCost>[1]) => {
    const u = usage({});
    applyReportedCost(u, reported);
    return u.cost.totalFromProvider ? u.cost.total : undefined;
  };
  test("OpenRouter paid upstream: its cost is the total", () => {
    expect(total({ cost: 0.25, is_byok: false })).toBe(0.25);
    expect(total({ cost: 0, is_byok: false })).toBe(0);
  });
  test("the user's own key: OpenRouter's fee plus the upstream cost, or its prompt and completion parts", () => {
    expect(total({ cost: 0.01, is_byok: true, cost_details: { upstream_inference_cost: 0.2 } })).toBeCloseTo(0.21, 15);
    const parts = { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.1, upstream_inference_completions_cost: 0.05 };
    expect(total({ cost: 0.01, is_byok: true, cost_details: parts })).toBeCloseTo(0.16, 15);
  });
  test("incomplete or invalid accounting leaves the catalog's price", () => {
    expect(total({ cost: 0.25 })).toBeUndefined();
    expect(total({ cost: -1, is_byok: false })).toBeUndefined();
    expect(total({ cost: "0.25", is_byok: false })).toBeUndefined();
    expect(total({ cost: Number.NaN, is_byok: false })).toBeUndefined();
    expect(total({ cost: 0.01, is_byok: true })).toBeUndefined();
    expect(total({ cost: 0.01, is_byok: true, cost_details: { upstream_inference_cost: null, upstream_inference_prompt_cost: 0.1 } })).toBeUndefined();
  });
  test("OpenRouter is the provider id or the openrouter.ai host", () => {
    expect(isOpenRouter({ ...model, provider: "openrouter" })).toBe(true);
    expect(isOpenRouter({ ...model, provider: "mine", baseUrl: "https://openrouter.ai/api/v1" })).toBe(true);
    expect(isOpenRouter({ ...model, provider: "mine", baseUrl: "https://openrouter.ai.example.com/v1" })).toBe(false);
    expect(isOpenRouter(model)).toBe(false);
  });
});

describe("addUsage", () => {
  const priced = (over: Partial<Usage>, reported?: number) => {
    const u = usage(over);
    if (reported !== undefined) applyReportedCost(u, { cost: reported, is_byok: false });
    return priceUsage(u, model);
  };
  test("a total is provider-reported only when every part is; nothing is said before a part is added", () => {
    const total = emptyUsage();
    expect("totalFromProvider" in total.cost).toBe(false);
    addUsage(total, priced({ input: 1 }, 0.5));
    expect(total.cost).toMatchObject({ total: 0.5, totalFromProvider: true });
    addUsage(total, priced({ input: 1 }, 0.25));
    expect(total.cost).toMatchObject({ total: 0.75, totalFromProvider: true });
    addUsage(total, priced({ input: 1000 }));
    expect(total.cost.totalFromProvider).toBe(false);
    addUsage(total, priced({ input: 1 }, 0.5));
    expect(total.cost.totalFromProvider).toBe(false);
  });
  test("cacheWrite1h is summed once either side carries it", () => {
    const total = emptyUsage();
    addUsage(total, priced({ cacheWrite: 5 }));
    expect("cacheWrite1h" in total).toBe(false);
    addUsage(total, priced({ cacheWrite: 5, cacheWrite1h: 2 }));
    addUsage(total, priced({ cacheWrite: 5 }));
    expect(total).toMatchObject({ cacheWrite: 15, cacheWrite1h: 2 });
  });
});
