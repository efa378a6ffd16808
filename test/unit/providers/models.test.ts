import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { priceUsage } from "../../../src/providers/cost.ts";
import { emptyUsage } from "../../../src/providers/event-stream.ts";
import { registryPool, resolveCliModel } from "../../../src/providers/model-choice.ts";
import { loadModels, resolveKeySpec } from "../../../src/providers/models.ts";
import { clampThinkingLevel, thinkingLevelsFor } from "../../../src/providers/thinking.ts";

const home = () => mkdtempSync(join(tmpdir(), "pion-models-"));

describe("model resolution", () => {
  const keyed = loadModels(home(), { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k" });
  const pick = (model: string, provider?: string, reg = keyed) => {
    const r = resolveCliModel(registryPool(reg), { model, provider });
    return r.model ? { model: `${r.model.provider}/${r.model.id}`, thinkingLevel: r.thinkingLevel } : { error: r.error };
  };
  test("provider/id, exact id, name, fuzzy pattern, :thinking suffix", () => {
    expect(pick("anthropic/claude-sonnet-4-5").model).toBe("anthropic/claude-sonnet-4-5");
    expect(pick("gpt-5-mini").model).toBe("openai/gpt-5-mini");
    // A name is a fuzzy match, where an alias beats its dated snapshot.
    expect(pick("Claude Opus 4.1").model).toBe("anthropic/claude-opus-4-1");
    expect(pick("haiku").model).toBe("anthropic/claude-haiku-4-5");
    expect(pick("sonnet-4-5:high")).toEqual({ model: "anthropic/claude-sonnet-4-5", thinkingLevel: "high" });
    expect(pick("gpt-5", "openai").model).toBe("openai/gpt-5");
    expect(pick("no-such-thing")).toEqual({ error: 'Model "no-such-thing" not found. Use --list-models to see available models.' });
    // Within a provider, a fuzzy id match takes the id that sorts last.
    expect(pick("gpt-5.2", "openrouter").model).toBe("openrouter/openai/gpt-5.2-pro");
    expect(pick("anthropic/claude-sonnet-4.5", "openrouter").model).toBe("openrouter/anthropic/claude-sonnet-4.5");
    // Keys only break ties: without any, an id several providers list is ambiguous.
    expect(pick("gpt-5-mini", undefined, loadModels(home(), {})).error).toMatch(/^Model "gpt-5-mini" is ambiguous across providers: .*openai\/gpt-5-mini.* No matching provider is authenticated\./);
  });

  test("models.json adds providers and overrides; a bad provider or file is skipped with a warning naming the file and field", () => {
    const h = home();
    writeFileSync(
      join(h, "models.json"),
      JSON.stringify({
        providers: {
          local: { baseUrl: "http://127.0.0.1:1", api: "openai-completions", apiKey: "k", models: [{ id: "llama", contextWindow: 8000 }] },
          anthropic: { modelOverrides: { "claude-haiku-4-5": { maxTokens: 1234 } } },
        },
      }),
    );
    const r = loadModels(h, {});
    expect(r.find("local", "llama")).toMatchObject({ api: "openai-completions", contextWindow: 8000, reasoning: false, input: ["text"] });
    expect(r.find("anthropic", "claude-haiku-4-5")?.maxTokens).toBe(1234);
    expect(r.available().map((m) => m.provider)).toEqual(["local"]);
    const warnings: string[] = [];
    const warn = (m: string) => warnings.push(m);
    writeFileSync(
      join(h, "models.json"),
      JSON.stringify({ providers: { x: { baseUrl: "http://h", models: [{ id: 5 }] }, y: { baseUrl: "http://h", apiKey: "k", models: [{ id: "ok" }] } } }),
    );
    expect(loadModels(h, {}, undefined, { warn }).find("y", "ok")).toBeDefined();
    expect(warnings).toEqual([expect.stringMatching(/models\.json: provider "x" skipped: Invalid field "models\.0\.id"/)]);
    writeFileSync(join(h, "models.json"), "{nope");
    expect(loadModels(h, {}, undefined, { warn }).find("y", "ok")).toBeUndefined();
    expect(warnings[1]).toMatch(/models\.json ignored: it is not valid JSON/);
  });

  test("a models.json baseUrl moves every model of a catalog provider, those with an endpoint of their own too", () => {
    const h = home();
    const own = loadModels(h, {}).models("zenmux");
    expect(new Set(own.map((m) => m.baseUrl)).size).toBeGreaterThan(1);
    writeFileSync(join(h, "models.json"), JSON.stringify({ providers: { zenmux: { baseUrl: "http://127.0.0.1:9/v1", apiKey: "k" } } }));
    const moved = loadModels(h, {}).models("zenmux");
    expect(moved.length).toBe(own.length);
    expect(new Set(moved.map((m) => m.baseUrl))).toEqual(new Set(["http://127.0.0.1:9/v1"]));
    // Their APIs stay: the anthropic-messages ones still speak that API to the new host.
    expect(moved.map((m) => m.api)).toEqual(own.map((m) => m.api));
  });

  test("api keys: literal, $ENV, !command, environment variables, --api-key", () => {
    expect(resolveKeySpec("literal-key", {})).toBe("literal-key");
    expect(resolveKeySpec("$MY_KEY", { MY_KEY: "v" })).toBe("v");
    expect(resolveKeySpec("$MISSING", {})).toBeUndefined();
    expect(resolveKeySpec("!echo from-cmd", {})).toBe("from-cmd");
    expect(loadModels(home(), { ANTHROPIC_API_KEY: "a" }).apiKey("anthropic")).toBe("a");
    expect(loadModels(home(), {}, { provider: "openai", apiKey: "flag" }).apiKey("openai")).toBe("flag");
  });
});

describe("cost and thinking levels", () => {
  test("cost is broken down by the model's per-million prices", () => {
    const model = loadModels(home(), {}).find("anthropic", "claude-haiku-4-5");
    const u = emptyUsage();
    Object.assign(u, { input: 1000, output: 500, cacheRead: 2000, cacheWrite: 100 });
    priceUsage(u, { ...model!, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } });
    expect(u.totalTokens).toBe(3600);
    expect(u.cost.input).toBeCloseTo(0.003, 12);
    expect(u.cost.output).toBeCloseTo(0.0075, 12);
    expect(u.cost.cacheRead).toBeCloseTo(0.0006, 12);
    expect(u.cost.cacheWrite).toBeCloseTo(0.000375, 12);
    expect(u.cost.total).toBeCloseTo(0.011475, 12);
  });

  test("levels per model and clamping", () => {
    const model = loadModels(home(), {}).find("anthropic", "claude-haiku-4-5");
    const plain = { ...model!, reasoning: false };
    expect(thinkingLevelsFor(plain)).toEqual(["off"]);
    expect(thinkingLevelsFor(model)).toEqual(["off", "minimal", "low", "medium", "high"]);
    expect(thinkingLevelsFor({ ...model!, thinkingLevels: ["xhigh", "max"] })).toEqual(["off", "minimal", "low", "medium", "high", "xhigh", "max"]);
    expect(clampThinkingLevel(model, "max")).toBe("high");
    expect(clampThinkingLevel(plain, "high")).toBe("off");
  });
});
