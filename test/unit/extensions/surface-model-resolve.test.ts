import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { modelResolveExports } from "../../../src/extensions/surface/coding-model-resolve.ts";
import { loadModels } from "../../../src/providers/models.ts";
import type { Model } from "../../../src/providers/types.ts";
import { reduceCli, reduceScope, referenceResolve, type ResolveCase } from "../../support/reference-model-resolve.ts";
import { toJson } from "../../support/reference-calls.ts";

const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test : test.skip;
type Fn = (...args: any[]) => any;
const { resolveCliModel, resolveModelScopeWithDiagnostics: resolveScope } = modelResolveExports as Record<string, Fn>;

const model = (id: string, name = id, over: Record<string, unknown> = {}) => ({ id, name, reasoning: true, input: ["text"], contextWindow: 100000, maxTokens: 8000, cost: { input: 1, output: 2, cacheRead: 0, cacheWrite: 0 }, ...over });

/** Providers that exercise the matching rules: dated ids and aliases, one id on several providers, ids with `/`, `:` and `[`. */
const MODELS_JSON = {
  providers: {
    acme: {
      baseUrl: "http://127.0.0.1:1/v1",
      api: "openai-completions",
      apiKey: "acme-key",
      models: [model("acme-pro-20250101", "Acme Pro"), model("acme-pro-20250601", "Acme Pro"), model("acme-pro", "Acme Pro (latest)"), model("acme-mini", "Acme Mini"), model("qwen/qwen3-coder:exacto"), model("model[1m]"), model("shared-7b")],
    },
    zeta: {
      baseUrl: "http://127.0.0.1:2/v1",
      api: "openai-completions",
      models: [model("acme-mini", "Zeta's Acme Mini"), model("Mixed-Case-Model"), model("zeta-large-latest"), model("zeta-large-20240101"), model("shared-7b")],
    },
    gw: {
      baseUrl: "http://127.0.0.1:3/v1",
      api: "openai-completions",
      apiKey: "gw-key",
      models: [model("zai/glm-5", "GLM 5 via gateway"), model("acme/acme-mini"), model("shared-7b"), model("openai/gpt-4o-mini")],
    },
    other: {
      baseUrl: "http://127.0.0.1:4/v1",
      api: "openai-completions",
      apiKey: "other-key",
      models: [model("shared-7b")],
    },
  },
};

const CLI_TEXTS = [
  "acme-mini", "ACME-MINI", " acme-mini ", "acme/acme-mini", "zeta/acme-mini", "gw/acme/acme-mini", "ACME/Acme-Mini",
  "acme-pro", "acme-pro-2025", "Acme Pro", "acme pro", "acme-pro:high", "acme-pro:max", "acme-pro:bogus", "acme-pro-20250101:low",
  "qwen/qwen3-coder:exacto", "qwen3-coder", "acme/qwen/qwen3-coder:exacto:high", "model[1m]", "mixed-case-model", "zeta-large", "zeta/zeta-large:off",
  "zai/glm-5", "glm-5", "gw/zai/glm-5", "shared-7b", "shared", "other/shared-7b", "zeta/shared-7b",
  "acme/new-model", "acme/new-model:high", "acme/new-model:weird", "zeta/brand-new", "nope/claude-x", "nosuch", "nosuch:high", "",
  "sonnet", "claude-sonnet-4-5", "anthropic/sonnet:xhigh", "opus", "haiku", "gpt-4o-mini", "openai/gpt-4o-mini", "gemini", "gpt-5", "anthropic/claude-sonnet-99",
  "Claude Opus 4.1", "openrouter/gpt-5.2", "claude-sonnet-4", "claude-sonnet-4.5", "deepseek", "grok", "o3:high", "sonnet:bogus", "kimi", "gpt-5.2",
];

const CLI_CASES: ResolveCase[] = [
  ...CLI_TEXTS.map((model): ResolveCase => ({ kind: "cli", model })),
  ...["acme-mini", "shared-7b", "zai/glm-5", "glm-5"].map((model): ResolveCase => ({ kind: "cli", model, inlineApiKey: true })),
  { kind: "cli", provider: "ACME", model: "mini" },
  { kind: "cli", provider: "zeta", model: "acme-mini" },
  { kind: "cli", provider: "zeta", model: "new-one:high" },
  { kind: "cli", provider: "zeta", model: "new-one:high", thinking: "low" },
  { kind: "cli", provider: "zeta", model: "new-one", thinking: "off" },
  { kind: "cli", provider: "acme", model: "acme/acme-mini" },
  { kind: "cli", provider: "nope", model: "x" },
  { kind: "cli", provider: "anthropic", model: "sonnet" },
  { kind: "cli", provider: "acme" },
];

const SCOPE_CASES: ResolveCase[] = [
  ["acme-*"], ["*mini*:low"], ["acme/*:high", "zeta/*"], ["model[1m]"], ["nosuch"], ["acme-pro:bogus"], ["acme-mini"], ["shared-7b"],
  ["Acme Pro", "acme/acme-pro-20250101"], ["*sonnet*"], ["anthropic/claude-*:medium"], ["[ag]*"], ["gw/*"], ["ACME/ACME-P*"], ["acme-pro:high", "acme-pro"],
  ["acme-pro-2025?????"], ["qwen/qwen3-coder:exacto"], ["*:exacto"], ["haiku", "opus:high", "nosuch*", "zai/glm-5"], [],
  ["acme-{pro,mini}*"], ["*-[0-9]*"], ["acme/**"], ["**/acme-mini"], ["?cme-mini:xhigh"], ["gw/*/*"], ["*/glm-5"], ["[!a]*-7b"], ["acme/*:bogus"],
].map((patterns): ResolveCase => ({ kind: "scope", patterns }));

/** pion's answers over the given models, in the reference's terms. */
async function pionAnswers(models: Model[], usable: string[], cases: ResolveCase[]): Promise<unknown[]> {
  const have = new Set(usable);
  const runtime = { getModels: () => models, hasConfiguredAuth: (p: string) => have.has(p), getAvailable: async () => models.filter((m) => have.has(m.provider)) };
  const out: unknown[] = [];
  for (const c of cases) {
    if (c.kind === "cli") out.push(reduceCli(resolveCliModel({ cliProvider: c.provider, cliModel: c.model, cliThinking: c.thinking, inlineApiKey: c.inlineApiKey, modelRuntime: runtime })));
    else out.push(reduceScope(await resolveScope(c.patterns, runtime)));
  }
  return toJson(out) as unknown[];
}

const labels = (cases: ResolveCase[]) => cases.map((c) => JSON.stringify(c));
const paired = (cases: ResolveCase[], results: unknown[]) => Object.fromEntries(labels(cases).map((l, i) => [l, results[i]]));

describe("resolveCliModel and resolveModelScopeWithDiagnostics against the reference", () => {
  refTest("the reference's own ModelRuntime over a models.json (and its catalog): the same model, level, warning and error for every case", async () => {
    const agentDir = mkdtempSync(join(tmpdir(), "pion-modelres-"));
    writeFileSync(join(agentDir, "models.json"), JSON.stringify(MODELS_JSON));
    writeFileSync(join(agentDir, "auth.json"), "{}");
    const cases = [...CLI_CASES, ...SCOPE_CASES];
    const ref = await referenceResolve(REF!, { agentDir, env: { ANTHROPIC_API_KEY: "test" }, cases });
    expect(ref.usable).toContain("acme");
    expect(ref.usable).not.toContain("zeta");
    expect(paired(cases, await pionAnswers(ref.models, ref.usable, cases))).toEqual(paired(cases, ref.results));
  }, 60_000);

  refTest("pion's own catalog and models.json: the reference's functions over pion's models agree with pion's", async () => {
    const home = mkdtempSync(join(tmpdir(), "pion-modelres-home-"));
    writeFileSync(join(home, "models.json"), JSON.stringify(MODELS_JSON));
    const registry = loadModels(home, { ANTHROPIC_API_KEY: "k", OPENAI_API_KEY: "k", OPENROUTER_API_KEY: "k" });
    const models = registry.all();
    const usable = registry.providers().filter((p) => registry.apiKey(p) !== undefined);
    const cases = [...CLI_CASES, ...SCOPE_CASES];
    const ref = await referenceResolve(REF!, { models, usable, cases });
    expect(paired(cases, await pionAnswers(models, usable, cases))).toEqual(paired(cases, ref.results));
  }, 60_000);
});

describe("resolveCliModel and resolveModelScopeWithDiagnostics over pion's ModelRegistry", () => {
  const models = [
    { provider: "acme", id: "acme-pro-20250101", name: "Acme Pro" },
    { provider: "acme", id: "acme-pro", name: "Acme Pro" },
    { provider: "acme", id: "acme-mini", name: "Acme Mini" },
    { provider: "zeta", id: "acme-mini", name: "Zeta Mini" },
    { provider: "zeta", id: "zeta-large", name: "Zeta Large" },
  ].map((m) => ({ ...m, api: "openai-completions", baseUrl: "http://x", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 })) as Model[];
  const keyed = new Set(["acme"]);
  // The shape of pion's extension-facing ModelRegistry (coding-models.ts).
  const registry = { getAll: () => models, getAvailable: () => models.filter((m) => keyed.has(m.provider)), hasConfiguredAuth: (m: { provider: string }) => keyed.has(m.provider) };
  const cli = (o: Record<string, unknown>) => resolveCliModel({ modelRuntime: registry, ...o });

  test("credentials break a tie between providers; the suffix is a thinking level; a dated id loses to its alias", () => {
    expect(cli({ cliModel: "acme-mini" }).model).toMatchObject({ provider: "acme", id: "acme-mini" });
    expect(cli({ cliModel: "ACME PRO:high" })).toMatchObject({ model: { id: "acme-pro" }, thinkingLevel: "high", error: undefined });
    expect(cli({ cliModel: "zeta/acme-mini" }).model).toMatchObject({ provider: "zeta" });
    expect(cli({ cliModel: "acme-mini", inlineApiKey: true }).error).toBe('Model "acme-mini" is ambiguous across providers: acme/acme-mini, zeta/acme-mini. --api-key does not choose a provider. Use --provider or provider/model.');
    expect(cli({})).toEqual({ model: undefined, warning: undefined, error: undefined });
  });

  test("unknown names: an error, or on a named provider a custom id (reasoning on when a level is asked for)", () => {
    expect(cli({ cliModel: "nothing" })).toEqual({ model: undefined, warning: undefined, error: 'Model "nothing" not found. Use --list-models to see available models.' });
    expect(cli({ cliProvider: "nope", cliModel: "x" }).error).toBe('Unknown provider "nope". Use --list-models to see available providers/models.');
    const custom = cli({ cliProvider: "ZETA", cliModel: "zeta-next:high" });
    expect(custom).toMatchObject({ model: { provider: "zeta", id: "zeta-next", reasoning: true }, thinkingLevel: "high", warning: 'Model "zeta-next" not found for provider "zeta". Using custom model id.' });
    // With --thinking, the suffix stays in the id.
    expect(cli({ cliModel: "zeta/zeta-next:high", cliThinking: "off" }).model).toMatchObject({ id: "zeta-next:high", reasoning: false });
    expect(() => cli({ cliModel: "x", modelRuntime: {} })).toThrow(TypeError);
  });

  test("a scope covers the models with credentials: globs, levels, and a warning per pattern that matches nothing", async () => {
    const r = await resolveScope(["acme-pro*:low", "zeta-large", "*mini*", "acme-pro:bogus"], registry);
    expect(r.scopedModels.map((s: { model: Model; thinkingLevel?: string }) => [`${s.model.provider}/${s.model.id}`, s.thinkingLevel])).toEqual([
      ["acme/acme-pro-20250101", "low"],
      ["acme/acme-pro", "low"],
      ["acme/acme-mini", undefined],
    ]);
    expect(r.diagnostics).toEqual([
      { type: "warning", code: "no-match", message: 'No models match pattern "zeta-large"', pattern: "zeta-large" },
      { type: "warning", code: "invalid-thinking-level", message: 'Invalid thinking level "bogus" in pattern "acme-pro:bogus". Using default instead.', pattern: "acme-pro:bogus" },
    ]);
  });

  test("the real ModelRegistry of pion's extension surface is accepted", async () => {
    const { ModelRegistry } = await import("../../../src/extensions/surface/coding-models.ts");
    const r = resolveCliModel({ cliModel: "surely-no-model-has-this-name-xyz", modelRuntime: new ModelRegistry() });
    expect(r.error).toBe('Model "surely-no-model-has-this-name-xyz" not found. Use --list-models to see available models.');
    expect((await resolveScope(["surely-no-model-xyz*"], new ModelRegistry())).diagnostics.map((d: { code: string }) => d.code)).toEqual(["no-match"]);
  });
});
