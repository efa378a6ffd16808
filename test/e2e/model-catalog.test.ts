import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { newestModel } from "../../src/providers/catalog/choose.ts";
import { loadModels } from "../../src/providers/models.ts";
import type { Model } from "../../src/providers/types.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { BINARY, Pion, runPion, tempDirs, writeSettings, type Rec } from "../support/pion.ts";
import { recordProblems } from "../support/wire-check.ts";

const ROOT = resolve(import.meta.dir, "../..");
const FIXTURE = readFileSync(join(ROOT, "test/fixtures/models-dev/small.json"), "utf8");
/** The catalog entry as pion sees it without any models.json. */
const builtin = (provider: string, id: string): Model => loadModels(tempDirs().home, {}).find(provider, id)!;
const writeModels = (home: string, providers: Record<string, unknown>) => writeFileSync(join(home, "models.json"), JSON.stringify({ providers }));
// Each test runs several pion processes one after another: a generous timeout for a loaded machine.
const lines = (s: string) => s.split("\n").filter((l) => l.trim() !== "");

describe("pion models", () => {
  test.concurrent("lists the catalog as text and JSON, by provider and search, naming where each entry came from", async () => {
    const dirs = tempDirs();
    writeModels(dirs.home, {
      anthropic: { modelOverrides: { "claude-sonnet-5": { maxTokens: 1000 } } },
      local: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "k", models: [{ id: "llama-local", contextWindow: 8192 }] },
    });
    const text = await runPion(["models", "--provider", "anthropic"], dirs);
    expect(text.code).toBe(0);
    const rows = lines(text.stdout);
    expect(rows[0]).toMatch(/^PROVIDER\s+MODEL\s+NAME\s+CONTEXT\s+OUTPUT\s+THINKING\s+PRICE \/1M \(in\/out\)\s+STATUS\s+SOURCE$/);
    const cols = (id: string) => rows.find((r) => r.split(/\s{2,}/)[1] === id)?.split(/\s{2,}/);
    expect(cols("claude-sonnet-5")).toEqual(["anthropic", "claude-sonnet-5", "Claude Sonnet 5", "1M", "1K", "low..max", "$2/$10 cache $0.2/$2.5", "-", "models.json"]);
    expect(cols("claude-3-7-sonnet-20250219")?.slice(-2)).toEqual(["deprecated", "built-in"]);
    expect(rows.slice(1).every((r) => r.startsWith("anthropic "))).toBe(true);

    const json = await runPion(["models", "--search", "sonnet 5", "--json"], dirs);
    expect(json.code).toBe(0);
    const models: Rec[] = JSON.parse(json.stdout).models;
    expect(models.length).toBeGreaterThan(1);
    // The same search as --list-models: every word a subsequence of "provider id".
    const subsequence = (w: string, hay: string) => [...hay].reduce((at, ch) => (ch === w[at] ? at + 1 : at), 0) === w.length;
    for (const m of models) expect(["sonnet", "5"].every((w) => subsequence(w, `${m.provider} ${m.id}`.toLowerCase()))).toBe(true);
    expect(models.find((m) => m.provider === "anthropic" && m.id === "claude-sonnet-5")).toEqual({
      ...builtin("anthropic", "claude-sonnet-5"),
      maxTokens: 1000,
      source: "models.json",
      thinking: ["off", "low", "medium", "high", "xhigh", "max"],
    });

    const local = await runPion(["models", "--provider", "local", "--json"], dirs);
    expect(JSON.parse(local.stdout).models).toEqual([
      expect.objectContaining({ provider: "local", id: "llama-local", contextWindow: 8192, source: "models.json", thinking: ["off"] }),
    ]);
    const unknown = await runPion(["models", "--provider", "nope"], dirs);
    expect([unknown.code, unknown.stdout, unknown.stderr]).toEqual([1, "", "pion: Unknown provider: nope\n"]);
    const usage = await runPion(["models", "frobnicate"], dirs);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('unknown models command "frobnicate"');
  }, 60_000);

  test.skipIf(!existsSync(BINARY) && !process.env.CI)("dist/pion reads the catalog embedded in the binary", async () => {
    const r = await runPion(["models", "--provider", "openai", "--search", "gpt-5", "--json"], { ...tempDirs(), binary: true });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).models.find((m: Rec) => m.id === "gpt-5")).toMatchObject({ contextWindow: 400000, maxTokens: 128000, source: "built-in" });
  }, 60_000);
});

/** A local server for refresh: a good body, and each way a download can go wrong. */
function catalogServer() {
  const good = JSON.parse(FIXTURE);
  good.anthropic.models["claude-sonnet-5-5"] = { ...good.anthropic.models["claude-sonnet-5"], id: "claude-sonnet-5-5", name: "Claude Sonnet 5.5", release_date: "2026-11-20", last_updated: "2026-11-20" };
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      switch (new URL(req.url).pathname) {
        case "/good":
          return Response.json(good);
        case "/broken":
          return new Response('{"anthropic": {"id": ', { headers: { "content-type": "application/json" } });
        case "/shape":
          return Response.json({ anthropic: { id: "anthropic", name: "Anthropic", env: [], models: { x: { id: 5 } } } });
        case "/slow":
          // Headers at once, then a body that never comes.
          return new Response(new ReadableStream({ start: (c) => c.enqueue(new TextEncoder().encode("{")) }));
        case "/big": {
          let sent = 0;
          const chunk = new Uint8Array(1024 * 1024).fill(32);
          return new Response(new ReadableStream({ pull: (c) => (sent++ < 40 ? c.enqueue(chunk) : c.close()) }));
        }
        default:
          return new Response("gone", { status: 404 });
      }
    },
  });
  const url = (path: string) => `http://127.0.0.1:${server.port}${path}`;
  return { url, stop: () => server.stop(true) };
}

describe("pion models refresh", () => {
  test.concurrent("a good catalog is validated, written atomically and used by the next start; failures change nothing", async () => {
    const srv = catalogServer();
    const dirs = tempDirs();
    const cache = join(dirs.home, "cache", "models.jsonl");
    const ok = await runPion(["models", "refresh", "--url", srv.url("/good"), "--json"], dirs);
    expect(ok.code).toBe(0);
    // kompat is new; gpt-6, llama-5-70b, k-1, k-claude and claude-sonnet-5-5 too; the two sonnets differ from the built-in data.
    expect(JSON.parse(ok.stdout)).toEqual({ url: srv.url("/good"), path: cache, providers: 4, models: 7, addedProviders: 1, addedModels: 5, changedModels: 2 });
    expect(statSync(cache).mode & 0o777).toBe(0o600);
    const again = await runPion(["models", "refresh", "--url", srv.url("/good")], dirs);
    expect(lines(again.stdout)).toEqual([
      `Refreshed the model catalog from ${srv.url("/good")}: 4 providers, 7 models (0 providers and 0 models added, 0 models changed) -> ${cache}`,
    ]);

    const listed: Rec[] = JSON.parse((await runPion(["models", "--provider", "anthropic", "--json"], dirs)).stdout).models;
    const byId = new Map(listed.map((m) => [m.id, m]));
    expect(byId.get("claude-sonnet-5-5")).toMatchObject({ source: "refreshed", contextWindow: 1000000, releaseDate: "2026-11-20" });
    expect(byId.get("claude-opus-4-6")?.source).toBe("built-in");
    const st = new Pion({ ...dirs, env: { ANTHROPIC_API_KEY: "k" }, args: ["--mode", "rpc", "--provider", "anthropic"] });
    expect((await st.request({ type: "get_state" })).data.model).toMatchObject({ id: "claude-sonnet-5-5", source: "refreshed" });
    await st.close();

    const before = readFileSync(cache);
    const failures: [string[], Record<string, string>, RegExp][] = [
      [["--url", srv.url("/broken")], {}, /^pion: The catalog at .*\/broken is not JSON: /],
      [["--url", srv.url("/shape")], {}, /^pion: The catalog at .*\/shape is not in models\.dev's format: Invalid field "anthropic\.models\.x\.id": expected string, received 5$/],
      [["--url", srv.url("/missing")], {}, /^pion: Cannot download .*\/missing: HTTP 404/],
      [["--url", srv.url("/slow"), "--timeout", "0.3"], {}, /^pion: Downloading .*\/slow timed out after 0\.3 s$/],
      [["--url", srv.url("/big")], {}, /^pion: The catalog at .*\/big is larger than 32 MB$/],
      [["--url", "http://127.0.0.1:1/none"], {}, /^pion: Cannot download http:\/\/127\.0\.0\.1:1\/none: /],
      [["--url", "ftp://example.com/x"], {}, /^pion: Invalid catalog URL "ftp:\/\/example.com\/x"/],
      // PION_MODELS_URL, then settings.modelCatalogUrl, stand in for the default URL.
      [[], { PION_MODELS_URL: srv.url("/env-url") }, /^pion: Cannot download .*\/env-url: HTTP 404/],
    ];
    for (const [args, env, message] of failures) {
      const r = await runPion(["models", "refresh", ...args], { ...dirs, env });
      expect([r.code, r.stdout, lines(r.stderr).length]).toEqual([1, "", 1]);
      expect(r.stderr.trim()).toMatch(message);
      expect(readFileSync(cache).equals(before)).toBe(true);
    }
    writeSettings(dirs.home, { modelCatalogUrl: srv.url("/settings-url") });
    const fromSettings = await runPion(["models", "refresh"], dirs);
    expect(fromSettings.stderr).toContain("/settings-url: HTTP 404");
    srv.stop();
  }, 60_000);

  test.concurrent("a disk error is one line, exit 1, and the previous catalog keeps serving", async () => {
    const srv = catalogServer();
    const dirs = tempDirs();
    writeFileSync(join(dirs.home, "cache"), "a file where the cache folder should be");
    const r = await runPion(["models", "refresh", "--url", srv.url("/good")], dirs);
    expect(r.code).toBe(1);
    expect(lines(r.stderr)).toEqual([expect.stringMatching(/^pion: Cannot write the model catalog to .*cache\/models\.jsonl: /)]);
    expect(readFileSync(join(dirs.home, "cache"), "utf8")).toBe("a file where the cache folder should be");
    const listed = await runPion(["models", "--provider", "anthropic", "--json"], dirs);
    expect(JSON.parse(listed.stdout).models.every((m: Rec) => m.source === "built-in")).toBe(true);
    srv.stop();
  }, 60_000);
});

describe("catalog models through built-in providers", () => {
  test.concurrent("openai/gpt-5.4 via models.json: the catalog's limits, a reply priced with cache tokens, then at the long-context tier", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeModels(dirs.home, { openai: { baseUrl: `${fake.url}/v1`, apiKey: "test-key" } });
    const entry = builtin("openai", "gpt-5.4");
    const tier = entry.cost.tiers![0]!;
    expect(tier.contextOver).toBe(272000);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "openai/gpt-5.4"] });
    const model = (await p.request({ type: "get_state" })).data.model;
    expect(model).toEqual({ ...entry, baseUrl: `${fake.url}/v1` });
    expect(model).toMatchObject({ api: "openai-responses", contextWindow: 1050000, maxTokens: 128000, source: "built-in" });
    // Every model of the keyed provider is available, with the catalog's fields.
    const available: Rec[] = (await p.request({ type: "get_available_models" })).data.models;
    expect(available.find((m) => m.id === "gpt-5.4")).toEqual(model);
    expect(new Set(available.map((m) => m.provider))).toEqual(new Set(["openai"]));
    expect(available.length).toBe(loadModels(tempDirs().home, {}).models("openai").length);

    fake.enqueue({ blocks: [{ type: "text", text: "short" }], usage: { input: 1000, output: 200, cacheRead: 3000 } });
    fake.enqueue({ blocks: [{ type: "text", text: "long" }], usage: { input: 270000, output: 100, cacheRead: 10000 } });
    await p.request({ type: "prompt", message: "one" });
    const first = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant");
    const from = p.records.length;
    await p.waitFor("agent_settled");
    await p.request({ type: "prompt", message: "two" });
    const second = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant", from);
    expect(first.message.usage.cost).toEqual({
      input: (1000 * entry.cost.input) / 1e6,
      output: (200 * entry.cost.output) / 1e6,
      cacheRead: (3000 * entry.cost.cacheRead) / 1e6,
      cacheWrite: 0,
      total: expect.closeTo(((1000 * entry.cost.input) + 200 * entry.cost.output + 3000 * entry.cost.cacheRead) / 1e6, 12),
      totalFromProvider: false,
    });
    // 270,000 fresh + 10,000 cached tokens exceed the 272,000 tier: every token is priced at it.
    expect(second.message.usage.cost).toEqual({
      input: (270000 * tier.input) / 1e6,
      output: (100 * tier.output) / 1e6,
      cacheRead: (10000 * tier.cacheRead!) / 1e6,
      cacheWrite: 0,
      total: expect.closeTo((270000 * tier.input + 100 * tier.output + 10000 * tier.cacheRead!) / 1e6, 12),
      totalFromProvider: false,
    });
    expect(fake.requests.map((r) => (r.body as Rec).model)).toEqual(["gpt-5.4", "gpt-5.4"]);
    // The catalog's fields (tiers, reasoning options, source) match the published wire schemas.
    expect(p.records.flatMap(recordProblems)).toEqual([]);
    await p.close();
    await fake.stop();
  }, 60_000);

  test.concurrent("--provider anthropic picks the newest current model, none the installed SDK calls deprecated; cache writes are priced", async () => {
    const { DEPRECATED_MODELS } = await import(join(ROOT, "node_modules/@anthropic-ai/sdk/internal/data/deprecated-models.mjs"));
    expect(Object.keys(DEPRECATED_MODELS)).toContain("claude-sonnet-4-5");
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeModels(dirs.home, { anthropic: { baseUrl: fake.url, apiKey: "test-key" } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--provider", "anthropic"] });
    const model = (await p.request({ type: "get_state" })).data.model;
    expect(model.id).toBe("claude-sonnet-5");
    expect(Object.keys(DEPRECATED_MODELS)).not.toContain(model.id);
    expect(model.status).toBeUndefined();
    fake.enqueue({ blocks: [{ type: "text", text: "hi" }], usage: { input: 100, output: 50, cacheRead: 2000, cacheWrite: 400 } });
    await p.request({ type: "prompt", message: "hi" });
    const end = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant");
    const c = model.cost;
    expect(end.message.usage.cost.total).toBeCloseTo((100 * c.input + 50 * c.output + 2000 * c.cacheRead + 400 * c.cacheWrite) / 1e6, 12);
    expect(end.message.usage.cost.cacheWrite).toBeCloseTo((400 * 2.5) / 1e6, 12);
    expect((fake.requests[0]!.body as Rec).model).toBe("claude-sonnet-5");
    await p.close();
    // Nothing named: the first provider with a key in the environment, at its newest model.
    const q = new Pion({ ...tempDirs(), env: { OPENAI_API_KEY: "k" }, args: ["--mode", "rpc"] });
    const newestOpenAI = newestModel(loadModels(tempDirs().home, {}).models("openai"))!;
    expect(newestOpenAI.status).toBeUndefined();
    expect((await q.request({ type: "get_state" })).data.model).toMatchObject({ provider: "openai", id: newestOpenAI.id });
    await q.close();
    await fake.stop();
  }, 60_000);

  test.concurrent("an id the catalog does not list, on a known provider: one notice, the family's limits, and the id sent as given", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeModels(dirs.home, { anthropic: { baseUrl: fake.url, apiKey: "test-key" } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "anthropic/claude-sonnet-5-5"] });
    const model = (await p.request({ type: "get_state" })).data.model;
    const family = builtin("anthropic", "claude-sonnet-5");
    expect(model).toEqual({
      id: "claude-sonnet-5-5",
      name: "claude-sonnet-5-5",
      api: "anthropic-messages",
      provider: "anthropic",
      baseUrl: fake.url,
      reasoning: true,
      input: family.input,
      cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
      contextWindow: family.contextWindow,
      maxTokens: family.maxTokens,
      thinkingLevels: family.thinkingLevels,
      reasoningOptions: family.reasoningOptions,
      family: "claude-sonnet",
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    expect((fake.requests[0]!.body as Rec).model).toBe("claude-sonnet-5-5");
    expect(p.records.flatMap(recordProblems)).toEqual([]);
    await p.close();
    expect(lines(p.stderr)).toEqual([
      'pion models: Model "claude-sonnet-5-5" not found for provider "anthropic". Using custom model id.',
      "pion models: anthropic/claude-sonnet-5-5 is not in the model catalog; using the limits of anthropic/claude-sonnet-5 (refresh it with: pion models refresh)",
    ]);
    const unknownProvider = await runPion(["--mode", "rpc", "--model", "nope/claude-sonnet-5-5"], dirs);
    expect([unknownProvider.code, unknownProvider.stderr]).toEqual([1, 'pion: Model "nope/claude-sonnet-5-5" not found. Use --list-models to see available models.\n']);
    await fake.stop();
  }, 60_000);

  test.concurrent("a deprecated model still works with one notice naming its replacement; the SDK's own warnings reach stderr once, never stdout", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeModels(dirs.home, { anthropic: { baseUrl: fake.url, apiKey: "test-key" } });
    const run = async (model: string) => {
      fake.enqueue({ blocks: [{ type: "text", text: "a" }] }, { blocks: [{ type: "text", text: "b" }] });
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model] });
      for (const message of ["one", "two"]) {
        const from = p.records.length;
        await p.request({ type: "prompt", message });
        const end = await p.waitFor((r) => r.type === "agent_settled", from);
        expect(end.aborted).toBe(false);
      }
      const ends = p.records.filter((r) => r.type === "message_end" && r.message.role === "assistant");
      expect(ends.map((r) => r.message.stopReason)).toEqual(["stop", "stop"]);
      await p.close();
      expect(JSON.stringify(p.records)).not.toContain("deprecated");
      return lines(p.stderr);
    };
    // Deprecated in the catalog: pion's notice, once; the SDK does not list it.
    expect(await run("anthropic/claude-3-7-sonnet-20250219")).toEqual([
      "pion models: anthropic/claude-3-7-sonnet-20250219 is deprecated; a current model of its family: anthropic/claude-sonnet-5",
    ]);
    // Deprecated by the installed SDK only: its warning, once for two requests, on one line.
    expect(await run("anthropic/claude-sonnet-4-5")).toEqual([
      expect.stringMatching(/^pion sdk: The model 'claude-sonnet-4-5' is deprecated and will reach end-of-life on November 30th, 2026 Please migrate/),
    ]);
    await fake.stop();
  }, 60_000);
});
