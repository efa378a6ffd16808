import { describe, expect, test } from "bun:test";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadModels } from "../../../src/providers/models.ts";
import { clampThinkingLevel, nearestLevel, thinkingBudget, thinkingControl, thinkingLevelsFor } from "../../../src/providers/thinking.ts";
import type { Model, ThinkingLevel } from "../../../src/providers/types.ts";

const registry = loadModels(mkdtempSync(join(tmpdir(), "pion-thinking-")), {});
const catalog = (provider: string, id: string): Model => {
  const m = registry.find(provider, id);
  if (!m) throw new Error(`${provider}/${id} is not in the catalog`);
  return m;
};

describe("levels each catalog model offers", () => {
  // [provider, id, kind, levels]: pion levels map to effort values of the same name, "off" to `none`
  // or the API's disabled form, and nothing else is invented.
  const cases: [string, string, string, ThinkingLevel[]][] = [
    ["anthropic", "claude-opus-4-6", "effort", ["off", "low", "medium", "high", "max"]],
    ["anthropic", "claude-sonnet-5", "effort", ["off", "low", "medium", "high", "xhigh", "max"]],
    ["anthropic", "claude-opus-4-7", "effort", ["off", "low", "medium", "high", "xhigh", "max"]],
    // effort + budget without "max": the generation before adaptive thinking keeps budgets
    ["anthropic", "claude-opus-4-5", "budget", ["off", "minimal", "low", "medium", "high"]],
    ["anthropic", "claude-3-7-sonnet-20250219", "budget", ["off", "minimal", "low", "medium", "high"]],
    ["anthropic", "claude-3-5-sonnet-20241022", "none", ["off"]],
    ["kimi-for-coding", "k2p5", "toggle", ["off", "high"]],
    ["openai", "gpt-5", "effort", ["minimal", "low", "medium", "high"]],
    ["openai", "gpt-5.1", "effort", ["off", "low", "medium", "high"]],
    ["openai", "gpt-5.2", "effort", ["off", "low", "medium", "high", "xhigh"]],
    ["openai", "gpt-5-pro", "effort", ["high"]],
    ["openai", "gpt-5-chat-latest", "fixed", ["off", "minimal", "low", "medium", "high"]],
    ["openai", "gpt-4.1", "none", ["off"]],
    ["google", "gemini-2.5-flash", "budget", ["off", "low", "medium", "high"]],
    ["google", "gemini-2.5-pro", "budget", ["low", "medium", "high"]],
    ["zai", "glm-4.5", "toggle", ["off", "high"]],
    ["deepseek", "deepseek-v4-flash", "effort", ["off", "high", "max"]],
    ["deepseek", "deepseek-reasoner", "fixed", ["off", "minimal", "low", "medium", "high"]],
  ];
  for (const [provider, id, kind, levels] of cases) {
    test(`${provider}/${id}: ${kind}, ${levels.join(" ")}`, () => {
      const m = catalog(provider, id);
      expect(thinkingControl(m).kind).toBe(kind as ReturnType<typeof thinkingControl>["kind"]);
      expect(thinkingLevelsFor(m)).toEqual(levels);
    });
  }

  test("models.json declarations: thinkingLevels extend a model without options; effort names that are not levels are left out", () => {
    const base = catalog("anthropic", "claude-3-7-sonnet-20250219");
    const fixed: Model = { ...base, reasoningOptions: undefined, thinkingLevels: ["xhigh", "max"] };
    expect(thinkingLevelsFor(fixed)).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    const odd: Model = { ...catalog("openai", "gpt-5"), reasoningOptions: [{ type: "effort", values: ["none", "default", "high"] }] };
    expect(thinkingLevelsFor(odd)).toEqual(["off", "high"]);
    // the Messages API takes no "minimal" or "none" effort: off is its disabled form
    const claude: Model = { ...base, reasoningOptions: [{ type: "effort", values: ["none", "minimal", "low", "high"] }] };
    expect(thinkingLevelsFor(claude)).toEqual(["off", "low", "high"]);
    expect(thinkingLevelsFor(undefined)).toEqual(["off"]);
  });
});

describe("clamping to the nearest offered level", () => {
  test("the nearest level in off..max; a tie goes to the higher one", () => {
    expect(nearestLevel(["off", "low", "medium", "high"], "minimal")).toBe("low");
    expect(nearestLevel(["off", "low", "medium", "high", "max"], "xhigh")).toBe("max");
    expect(nearestLevel(["off", "high"], "minimal")).toBe("off");
    expect(nearestLevel(["off", "high"], "low")).toBe("high");
    expect(nearestLevel(["minimal", "low", "medium", "high"], "off")).toBe("minimal");
    expect(nearestLevel(["high"], "off")).toBe("high");
    expect(nearestLevel(["off", "minimal", "low", "medium", "high"], "max")).toBe("high");
  });

  test("per model", () => {
    expect(clampThinkingLevel(catalog("openai", "gpt-5.1"), "minimal")).toBe("low");
    expect(clampThinkingLevel(catalog("openai", "gpt-5-pro"), "low")).toBe("high");
    expect(clampThinkingLevel(catalog("openai", "gpt-5"), "off")).toBe("minimal");
    expect(clampThinkingLevel(catalog("anthropic", "claude-opus-4-6"), "minimal")).toBe("low");
    expect(clampThinkingLevel(catalog("zai", "glm-4.5"), "medium")).toBe("high");
    expect(clampThinkingLevel(catalog("anthropic", "claude-3-5-sonnet-20241022"), "high")).toBe("off");
  });
});

describe("thinking budgets", () => {
  test("within the option's range and below max_tokens, keeping room for the answer", () => {
    expect(thinkingBudget("medium", { min: 1024 }, 64000)).toEqual({ budget: 10240, maxTokens: 64000 });
    expect(thinkingBudget("high", { min: 0, max: 8000 }, 64000)).toEqual({ budget: 8000, maxTokens: 64000 });
    expect(thinkingBudget("minimal", { min: 2048 }, 64000)).toEqual({ budget: 2048, maxTokens: 64000 });
    expect(thinkingBudget("max", {}, 16000)).toEqual({ budget: 14976, maxTokens: 16000 });
    // an output limit too small for the smallest budget grows to fit it and the answer
    expect(thinkingBudget("low", {}, 1500)).toEqual({ budget: 1024, maxTokens: 2048 });
  });
});
