import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { familyTemplate, newestModel, replacementFor } from "../../../src/providers/catalog/choose.ts";
import { convertCatalog } from "../../../src/providers/catalog/convert.ts";
import { CatalogFile, encodeCatalog } from "../../../src/providers/catalog/file-format.ts";
import { Catalog, refreshedCatalogPath } from "../../../src/providers/catalog/load.ts";
import { ModelsDevSchema } from "../../../src/providers/catalog/models-dev.ts";
import { priceUsage, pricesFor } from "../../../src/providers/cost.ts";
import { emptyUsage } from "../../../src/providers/event-stream.ts";
import { chooseModel } from "../../../src/providers/model-choice.ts";
import { loadModels } from "../../../src/providers/models.ts";

const ROOT = resolve(import.meta.dir, "../../..");
const FIXTURE = join(ROOT, "test/fixtures/models-dev/small.json");
const tmp = () => mkdtempSync(join(tmpdir(), "pion-catalog-"));
const fixture = () => v.parse(ModelsDevSchema, JSON.parse(readFileSync(FIXTURE, "utf8")));

describe("the catalog generator (bun run catalog) on a small models.dev file", () => {
  const out = tmp();
  const gen = Bun.spawnSync(["bun", join(ROOT, "src/providers/catalog/gen-catalog.ts"), FIXTURE, out], { stderr: "pipe" });
  const file = () => new CatalogFile(readFileSync(join(out, "builtin.jsonl")), "builtin.jsonl");

  test("keeps the providers pion can talk to, with their API and base URL", () => {
    expect(gen.exitCode).toBe(0);
    expect(gen.stderr.toString()).toContain("4 providers, 6 models");
    const f = file();
    // bedrock (its own SDK) and templated (a ${VAR} URL) are left out.
    expect(f.ids()).toEqual(["anthropic", "groq", "kompat", "openai"]);
    expect(f.all().map((p) => [p.id, p.api, p.baseUrl])).toEqual([
      ["anthropic", "anthropic-messages", "https://api.anthropic.com"],
      ["groq", "openai-completions", "https://api.groq.com/openai/v1"],
      ["kompat", "openai-completions", "https://api.kompat.example/v1"],
      ["openai", "openai-responses", "https://api.openai.com/v1"],
    ]);
    expect(JSON.parse(readFileSync(join(out, "builtin-index.json"), "utf8")).env).toEqual({
      anthropic: ["ANTHROPIC_API_KEY"],
      groq: ["GROQ_API_KEY"],
      kompat: ["KOMPAT_API_KEY", "KOMPAT_TOKEN"],
      openai: ["OPENAI_API_KEY"],
    });
  });

  test("each model carries limits, modalities, reasoning options, prices with cache and tiers, dates and status", () => {
    const anthropic = file().provider("anthropic")!;
    expect(anthropic.models).toEqual([
      {
        id: "claude-3-7-sonnet-20250219",
        name: "Claude Sonnet 3.7",
        family: "claude-sonnet",
        reasoning: true,
        reasoningOptions: [{ type: "budget_tokens", min: 1024, max: 63999 }],
        input: ["text", "image"],
        contextWindow: 200000,
        maxTokens: 64000,
        cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
        releaseDate: "2025-02-19",
        lastUpdated: "2025-02-19",
        status: "deprecated",
      },
      {
        id: "claude-sonnet-5",
        name: "Claude Sonnet 5",
        family: "claude-sonnet",
        reasoning: true,
        reasoningOptions: [{ type: "toggle" }, { type: "effort", values: ["low", "medium", "high", "xhigh", "max"] }],
        thinkingLevels: ["xhigh", "max"],
        input: ["text", "image"],
        contextWindow: 1000000,
        maxTokens: 128000,
        cost: { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5, tiers: [{ contextOver: 200000, input: 4, output: 15, cacheRead: 0.4 }] },
        releaseDate: "2026-06-30",
        lastUpdated: "2026-06-30",
      },
    ]);
    // Image-output and embedding models are dropped; the older context_over_200k price becomes a tier.
    expect(file().provider("openai")!.models.map((m) => [m.id, m.cost])).toEqual([
      ["gpt-6", { input: 1.25, output: 10, tiers: [{ contextOver: 200000, input: 2.5, output: 20 }] }],
    ]);
  });

  test("a model served through another API of its provider keeps its own API and URL; one through an unknown SDK is dropped", () => {
    const kompat = file().provider("kompat")!;
    expect(kompat.models.map((m) => [m.id, m.api, m.baseUrl, m.name])).toEqual([
      ["k-1", undefined, undefined, "K-1 ünïcode"],
      ["k-claude", "anthropic-messages", "https://api.kompat.example/anthropic/v1", "K Claude"],
    ]);
  });

  test("a file that is not in models.dev's format fails with the field named", () => {
    const bad = join(tmp(), "bad.json");
    writeFileSync(bad, JSON.stringify({ x: { id: "x", name: "X", env: "NOPE", models: {} } }));
    const r = Bun.spawnSync(["bun", join(ROOT, "src/providers/catalog/gen-catalog.ts"), bad, tmp()], { stderr: "pipe" });
    expect(r.exitCode).toBe(1);
    expect(r.stderr.toString()).toContain('Invalid field "x.env"');
  });
});

describe("the catalog file format", () => {
  test("byte ranges index each provider line, multi-byte text included", () => {
    const data = convertCatalog(fixture(), "test");
    const f = new CatalogFile(Buffer.from(encodeCatalog(data)), "mem");
    expect(f.header.source).toBe("test");
    expect(f.header.date).toBe("2026-06-30");
    for (const p of data.providers) expect(f.provider(p.id)).toEqual(p);
    expect(f.provider("nope")).toBeUndefined();
    expect(f.provider("constructor")).toBeUndefined();
  });
});

describe("built-in and refreshed data", () => {
  test("the entry updated last wins; the refreshed one on a tie; new models and providers join", () => {
    const home = tmp();
    const data = fixture();
    data.anthropic!.models["claude-sonnet-5-5"] = { ...data.anthropic!.models["claude-sonnet-5"]!, id: "claude-sonnet-5-5", name: "Claude Sonnet 5.5" };
    // Older than the built-in entry: the built-in one stays.
    data.anthropic!.models["claude-opus-4-6"] = { ...data.anthropic!.models["claude-sonnet-5"]!, id: "claude-opus-4-6", last_updated: "2020-01-01" };
    mkdirSync(join(home, "cache"));
    writeFileSync(refreshedCatalogPath(home), encodeCatalog(convertCatalog(data, "refresh")));
    const catalog = new Catalog(home);
    const anthropic = catalog.provider("anthropic")!;
    const byId = new Map(anthropic.models.map((m) => [m.id, m]));
    expect(byId.get("claude-sonnet-5-5")?.source).toBe("refreshed");
    expect(byId.get("claude-sonnet-5")?.source).toBe("refreshed");
    expect(byId.get("claude-opus-4-6")).toMatchObject({ source: "built-in", name: "Claude Opus 4.6" });
    expect(byId.get("claude-haiku-4-5")?.source).toBe("built-in");
    expect(catalog.has("kompat")).toBe(true);
    expect(catalog.env("kompat")).toEqual(["KOMPAT_API_KEY", "KOMPAT_TOKEN"]);
    expect(catalog.provider("kompat")!.models.every((m) => m.source === "refreshed")).toBe(true);
  });

  test("a damaged cache is ignored (built-in data serves)", () => {
    const home = tmp();
    mkdirSync(join(home, "cache"));
    writeFileSync(refreshedCatalogPath(home), "garbage");
    const catalog = new Catalog(home);
    expect(catalog.provider("anthropic")!.models.length).toBeGreaterThan(10);
  });
});

describe("prices", () => {
  const cost = { input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5, tiers: [{ contextOver: 200000, input: 4, output: 15, cacheRead: 0.4 }, { contextOver: 500000, input: 6, output: 20 }] };
  test("a request whose input exceeds a tier's size is priced at the highest such tier; missing tier cache prices keep the base", () => {
    expect(pricesFor(cost, 200000)).toEqual({ input: 2, output: 10, cacheRead: 0.2, cacheWrite: 2.5 });
    expect(pricesFor(cost, 200001)).toEqual({ input: 4, output: 15, cacheRead: 0.4, cacheWrite: 2.5 });
    expect(pricesFor(cost, 600000)).toEqual({ input: 6, output: 20, cacheRead: 0.2, cacheWrite: 2.5 });
  });
  test("usage is priced from the entry, cache tokens counting toward the tier", () => {
    const model = { ...loadModels(tmp(), {}).find("anthropic", "claude-sonnet-5")!, cost };
    const u = Object.assign(emptyUsage(), { input: 1000, output: 100, cacheRead: 199500, cacheWrite: 0 });
    priceUsage(u, model);
    expect(u.cost.input).toBeCloseTo((1000 * 4) / 1e6, 12);
    expect(u.cost.output).toBeCloseTo((100 * 15) / 1e6, 12);
    expect(u.cost.cacheRead).toBeCloseTo((199500 * 0.4) / 1e6, 12);
    expect(u.cost.total).toBeCloseTo(u.cost.input + u.cost.output + u.cost.cacheRead, 12);
  });
});

describe("choosing among catalog models", () => {
  const anthropic = loadModels(tmp(), {}).models("anthropic");
  test("newest current tool-calling model; a deprecated one never", () => {
    expect(newestModel(anthropic)?.id).toBe("claude-sonnet-5");
    const deprecated = anthropic.filter((m) => m.status === "deprecated");
    expect(deprecated.length).toBeGreaterThan(0);
    expect(newestModel(deprecated.concat(anthropic.filter((m) => m.id === "claude-opus-4-1")))?.id).toBe("claude-opus-4-1");
  });
  test("an unknown id follows its family's newest model", () => {
    expect(familyTemplate(anthropic, "claude-sonnet-5-5")?.id).toBe("claude-sonnet-5");
    expect(familyTemplate(anthropic, "claude-opus-5")?.id).toBe("claude-opus-4-8");
    expect(familyTemplate(anthropic, "mystery")).toBeUndefined();
  });
  test("a deprecated model's replacement is its family's newest", () => {
    const old = anthropic.find((m) => m.id === "claude-3-7-sonnet-20250219")!;
    expect(old.status).toBe("deprecated");
    expect(replacementFor(anthropic, old)?.id).toBe("claude-sonnet-5");
  });
  test("nothing named: the first provider with a *_API_KEY or models.json key, preferred ones first; a generic token does not choose", () => {
    const home = tmp();
    const pick = (env: Record<string, string>) => chooseModel(loadModels(home, env), {}).model;
    expect(pick({ GITHUB_TOKEN: "g", HF_TOKEN: "h" })).toBeUndefined();
    expect(pick({ GITHUB_TOKEN: "g", ZHIPU_API_KEY: "z" })?.provider).toBe("zai");
    expect(pick({ ZHIPU_API_KEY: "z", GROQ_API_KEY: "q" })?.provider).toBe("groq");
    writeFileSync(join(home, "models.json"), JSON.stringify({ providers: { mine: { baseUrl: "http://127.0.0.1:9", apiKey: "k", models: [{ id: "m" }] } } }));
    expect(pick({ ZHIPU_API_KEY: "z" })?.provider).toBe("mine");
    expect(pick({ ZHIPU_API_KEY: "z", ANTHROPIC_API_KEY: "a" })).toMatchObject({ provider: "anthropic", id: "claude-sonnet-5" });
    // A named provider works with whatever key variable it has.
    expect(chooseModel(loadModels(home, { GITHUB_TOKEN: "g" }), { provider: "github-models" }).model?.provider).toBe("github-models");
  });
});
