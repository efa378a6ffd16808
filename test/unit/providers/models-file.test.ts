import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { priceUsage } from "../../../src/providers/cost.ts";
import { emptyUsage } from "../../../src/providers/event-stream.ts";
import { headerCredentials, readModelsFiles } from "../../../src/providers/models-file.ts";
import { loadModels } from "../../../src/providers/models.ts";
import { thinkingLevelsFor } from "../../../src/providers/thinking.ts";

const FIXTURES = join(import.meta.dir, "../../fixtures/models-json");
const home = () => mkdtempSync(join(tmpdir(), "pion-models-file-"));

function load(files: Record<string, unknown>[], env: Record<string, string | undefined> = {}, extra?: Parameters<typeof loadModels>[3]) {
  const h = home();
  const paths = files.map((f, i) => {
    const p = join(h, `models-${i}.json`);
    writeFileSync(p, JSON.stringify(f));
    return p;
  });
  const warnings: string[] = [];
  const reg = loadModels(h, env, undefined, { paths, warn: (m) => warnings.push(m), ...extra });
  return { reg, warnings };
}

const fixture = (name: string) => {
  const warnings: string[] = [];
  const reg = loadModels(home(), {}, undefined, { paths: [join(FIXTURES, name)], warn: (m) => warnings.push(m) });
  return { reg, warnings };
};

describe("the reference's own models.json examples load unchanged", () => {
  test("docs/models.md: Ollama, with $schema", () => {
    const { reg, warnings } = fixture("models-md-ollama.json");
    expect(warnings).toEqual([]);
    expect(reg.find("ollama", "qwen2.5-coder:7b")).toMatchObject({ api: "openai-completions", baseUrl: "http://localhost:11434/v1", contextWindow: 128000, maxTokens: 16384 });
    expect(reg.apiKey("ollama")).toBe("ollama");
  });

  test("docs/models.md and providers.md: a built-in provider moved to a proxy or a region keeps its models", () => {
    for (const [name, pid, url] of [
      ["models-md-proxy.json", "anthropic", "https://proxy.example.com/v1"],
      ["providers-md-openrouter-region.json", "openrouter", "https://us.openrouter.ai/api/v1"],
    ] as const) {
      const { reg, warnings } = fixture(name);
      expect(warnings).toEqual([]);
      const models = reg.models(pid);
      expect(models.length).toBeGreaterThan(5);
      expect(new Set(models.map((m) => m.baseUrl))).toEqual(new Set([url]));
    }
  });

  test("docs/providers.md: an Azure Foundry deployment on Chat Completions", () => {
    const { reg, warnings } = fixture("providers-md-azure.json");
    expect(warnings).toEqual([]);
    expect(reg.find("azure", "your-deployment")).toMatchObject({ api: "openai-completions", baseUrl: "https://your-resource.services.ai.azure.com" });
  });

  test("docs/models.md: inputLimits, promptCache and sampling entries", () => {
    const { reg, warnings } = fixture("models-md-model-entries.json");
    expect(warnings).toEqual([]);
    expect(reg.find("local", "vision-model")?.inputLimits).toEqual({ images: { resize: { maxWidth: 1568, maxHeight: 1568, maxBytes: 524288, jpegQuality: 75 } } });
    expect(reg.find("local", "qwen-thinking-model")).toMatchObject({ samplingParams: { temperature: 1, top_p: 0.95 }, samplingParamsByThinkingLevel: { high: { top_k: 20 } } });
    expect(reg.find("claude-proxy", "claude-sonnet-5")?.promptCache).toEqual({ short: 300, long: 3600 });
  });

  test("providers and models on APIs pion lacks are skipped with one warning each, the rest works", () => {
    const { reg, warnings } = fixture("unimplemented-apis.json");
    expect(warnings.map((w) => w.replace(/^.*models-json\/unimplemented-apis\.json: /, ""))).toEqual([
      'provider "older-x" uses API "another-future-api", which pion does not implement: skipped',
      'provider "future-x" uses API "some-future-api", which pion does not implement: skipped',
      'provider "mixed" uses API "some-future-api", which pion does not implement: its models on it are skipped',
    ]);
    expect(reg.models("gem").map((m) => m.id)).toEqual(["gemini-x"]);
    expect(reg.models("bedrock-x").map((m) => m.id)).toEqual(["b1"]);
    expect(reg.models("mixed").map((m) => m.id)).toEqual(["works"]);
    expect(reg.find("ok", "m1")).toBeDefined();
  });
});

describe("models.json fields", () => {
  test("cost.tiers[].inputTokensAbove: the highest tier the whole input (cache reads and writes too) exceeds prices the request", () => {
    const tiers = [
      { inputTokensAbove: 200000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 },
      { inputTokensAbove: 100000, input: 4, output: 20, cacheRead: 0.4, cacheWrite: 5 },
    ];
    const { reg } = load([{ providers: { p: { baseUrl: "http://h/v1", api: "openai-completions", models: [{ id: "m", cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, tiers } }] } } }]);
    const model = reg.find("p", "m")!;
    expect(model.cost.tiers).toEqual([
      { contextOver: 200000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 },
      { contextOver: 100000, input: 4, output: 20, cacheRead: 0.4, cacheWrite: 5 },
    ]);
    const price = (input: number, cacheRead: number) => priceUsage({ ...emptyUsage(), input, cacheRead, output: 1e6 }, model).cost.output;
    expect(price(100000, 0)).toBe(15);
    expect(price(50000, 60000)).toBe(20);
    expect(price(1000, 250000)).toBe(22.5);
  });

  test("modelOverrides merge object fields (cost, compat, samplingParams) with the model's, replace the others", () => {
    const { reg } = load([
      {
        providers: {
          p: {
            baseUrl: "http://h/v1",
            api: "openai-completions",
            compat: { supportsStore: true, maxTokensField: "max_tokens" },
            models: [{ id: "m", cost: { input: 1, output: 2 }, samplingParams: { a: 1 }, compat: { maxTokensField: "max_completion_tokens" } }],
            modelOverrides: { m: { cost: { output: 9 }, samplingParams: { b: 2 }, contextWindow: 5000 } },
          },
        },
      },
    ]);
    expect(reg.find("p", "m")).toMatchObject({
      cost: { input: 1, output: 9 },
      samplingParams: { a: 1, b: 2 },
      contextWindow: 5000,
      compat: { supportsStore: true, maxTokensField: "max_completion_tokens" },
    });
  });

  test("thinkingLevelMap: null removes a level, xhigh and max only when mapped", () => {
    const { reg } = load([
      { providers: { p: { baseUrl: "http://h/v1", api: "openai-completions", models: [{ id: "m", reasoning: true, thinkingLevelMap: { minimal: null, xhigh: "extra" } }] } } },
    ]);
    expect(thinkingLevelsFor(reg.find("p", "m"))).toEqual(["off", "low", "medium", "high", "xhigh"]);
  });

  test("headers resolve like apiKey; one that does not resolve is left out with a warning; the guard learns the resolved ones", () => {
    const file = {
      providers: {
        p: {
          baseUrl: "http://h/v1",
          api: "openai-completions",
          authHeader: true,
          headers: { "x-team": "$TEAM_TOKEN", "x-cmd": "!printf secret-from-cmd", "x-missing": "${NOPE_UNSET}", "x-lit": "plain", "x-esc": "$$5" },
          models: [{ id: "m", headers: { "x-model": "Bearer ${MODEL_TOKEN}" } }],
        },
      },
    };
    const env = { TEAM_TOKEN: "team-secret-123", MODEL_TOKEN: "model-secret-456" };
    const { reg, warnings } = load([file], env);
    expect(reg.find("p", "m")).toMatchObject({
      authHeader: true,
      headers: { "x-team": "team-secret-123", "x-cmd": "secret-from-cmd", "x-lit": "plain", "x-esc": "$5", "x-model": "Bearer model-secret-456" },
    });
    expect(reg.find("p", "m")!.headers!["x-missing"]).toBeUndefined();
    expect(warnings).toEqual([expect.stringContaining('provider "p": header "x-missing" did not resolve (NOPE_UNSET is not set)')]);
    const creds = headerCredentials(reg.fileProviders!(), env);
    expect(reg.credentials()).toEqual(expect.arrayContaining(creds));
    expect(creds).toEqual([
      { label: "TEAM_TOKEN", envNames: ["TEAM_TOKEN"], value: "team-secret-123" },
      { label: "p header x-cmd", envNames: [], value: "secret-from-cmd" },
      { label: "NOPE_UNSET", envNames: ["NOPE_UNSET"], value: undefined },
      { label: "p header x-model", envNames: ["MODEL_TOKEN"], value: "Bearer model-secret-456" },
    ]);
  });

  test("a schema error skips only its provider; unknown fields are accepted", () => {
    const { reg, warnings } = load([
      {
        $schema: "https://pi.dev/schemas/models.schema.json",
        futureTopLevel: 1,
        providers: {
          bad: { baseUrl: "http://h/v1", api: "openai-completions", models: [{ id: "m", contextWindow: "big" }] },
          noUrl: { api: "openai-completions", models: [{ id: "m" }] },
          good: { baseUrl: "http://h/v1", api: "openai-completions", oauth: "radius", somethingNew: true, models: [{ id: "m", whatever: [1] }] },
        },
      },
    ]);
    expect(warnings).toEqual([
      expect.stringMatching(/provider "bad" skipped: Invalid field "models\.0\.contextWindow"/),
      expect.stringMatching(/provider "noUrl" skipped: it needs a baseUrl/),
    ]);
    expect(reg.find("good", "m")).toBeDefined();
  });
});

describe("several models.json files and run-time providers", () => {
  test("the first file wins field by field within a provider; models are the union by id", () => {
    const pion = { providers: { p: { apiKey: "pion-key", headers: { a: "1" }, models: [{ id: "shared", maxTokens: 111 }, { id: "mine" }] } } };
    const ref = { providers: { p: { baseUrl: "http://ref/v1", api: "openai-completions", apiKey: "ref-key", headers: { a: "2", b: "3" }, models: [{ id: "shared", maxTokens: 222 }, { id: "theirs" }] }, q: { baseUrl: "http://q/v1", api: "openai-completions", models: [{ id: "x" }] } } };
    const { reg, warnings } = load([pion, ref]);
    expect(warnings).toEqual([]);
    expect(reg.apiKey("p")).toBe("pion-key");
    expect(reg.models("p").map((m) => [m.id, m.maxTokens, m.baseUrl])).toEqual([
      ["shared", 111, "http://ref/v1"],
      ["mine", 16384, "http://ref/v1"],
      ["theirs", 16384, "http://ref/v1"],
    ]);
    expect(reg.find("p", "mine")?.headers).toEqual({ a: "1", b: "3" });
    expect(reg.find("q", "x")).toBeDefined();
  });

  test("extraProviders come below the files", () => {
    const { reg } = load([{ providers: { llamacpp: { models: [{ id: "from-file", contextWindow: 4096 }] } } }], {}, {
      extraProviders: [{ id: "llamacpp", api: "openai-completions", baseUrl: "http://127.0.0.1:8080/v1", models: [{ id: "from-file" }, { id: "found", contextWindow: 32768 }] }],
    });
    // The run-time provider stands where a catalog provider would: a models.json entry of the same id replaces its model.
    expect(reg.models("llamacpp").map((m) => [m.id, m.contextWindow, m.baseUrl])).toEqual([
      ["found", 32768, "http://127.0.0.1:8080/v1"],
      ["from-file", 4096, "http://127.0.0.1:8080/v1"],
    ]);
  });

  test("readModelsFiles: a missing file is nothing", () => {
    expect(readModelsFiles({ paths: [join(home(), "none.json")], known: () => false, warn: () => {} }).size).toBe(0);
  });
});
