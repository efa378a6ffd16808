import { describe, expect, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeSettings } from "../support/pion.ts";

/**
 * models.json as the reference has it, end to end: pion reads the file, and the request the fake
 * provider records shows each field. One pion per case; the cases run concurrently.
 */

type Body = Record<string, unknown> & { messages?: Record<string, unknown>[] };
const model = (id: string, over: Record<string, unknown> = {}) => ({ id, reasoning: true, contextWindow: 200000, maxTokens: 8192, ...over });

interface Case {
  name: string;
  provider: (url: string) => Record<string, unknown>;
  args?: string[];
  settings?: Record<string, unknown>;
  env?: Record<string, string>;
  check: (req: FakeRequest, out: { stderr: string }) => void;
}

const cases: Case[] = [
  {
    name: "provider compat applies to its models; a model's compat overrides it per field",
    provider: (url) => ({
      baseUrl: `${url}/v1`,
      api: "openai-completions",
      apiKey: "k",
      compat: { maxTokensField: "max_tokens", supportsStore: true, supportsUsageInStreaming: false },
      models: [model("m", { compat: { supportsUsageInStreaming: true } })],
    }),
    check: (req) => {
      const b = req.body as Body;
      expect([b.max_tokens, b.max_completion_tokens, b.store, b.stream_options]).toEqual([8192, undefined, false, { include_usage: true }]);
    },
  },
  {
    name: "headers resolve from the environment and a command; authHeader sends the key as Bearer; an unresolved header is left out",
    provider: (url) => ({
      baseUrl: url,
      api: "anthropic-messages",
      apiKey: "$CUSTOM_KEY",
      authHeader: true,
      headers: { "x-team": "${TEAM_TOKEN}", "x-cmd": "!printf from-command", "x-gone": "$UNSET_FOR_SURE" },
      models: [model("m")],
    }),
    env: { CUSTOM_KEY: "key-abcdef-123", TEAM_TOKEN: "team-token-456" },
    check: (req, out) => {
      expect(req.headers).toMatchObject({ authorization: "Bearer key-abcdef-123", "x-api-key": "key-abcdef-123", "x-team": "team-token-456", "x-cmd": "from-command" });
      expect(req.headers["x-gone"]).toBeUndefined();
      expect(out.stderr).toContain('header "x-gone" did not resolve (UNSET_FOR_SURE is not set)');
    },
  },
  {
    name: "samplingParams and the effective level's samplingParamsByThinkingLevel go into the body",
    provider: (url) => ({
      baseUrl: `${url}/v1`,
      api: "openai-responses",
      apiKey: "k",
      models: [model("m", { samplingParams: { temperature: 1, top_p: 0.95 }, samplingParamsByThinkingLevel: { low: { temperature: 0.6 } } })],
    }),
    args: ["--thinking", "low"],
    check: (req) => expect(req.body).toMatchObject({ temperature: 0.6, top_p: 0.95, reasoning: { effort: "low" } }),
  },
  {
    name: "settings thinkingBudgets set the Messages API budget",
    provider: (url) => ({ baseUrl: url, api: "anthropic-messages", apiKey: "k", models: [model("m", { maxTokens: 32000 })] }),
    settings: { thinkingBudgets: { medium: 4321 } },
    args: ["--thinking", "medium"],
    check: (req) => expect((req.body as Body).thinking).toEqual({ type: "enabled", budget_tokens: 4321 }),
  },
  {
    name: "thinkingFormat qwen-chat-template from the model's compat",
    provider: (url) => ({
      baseUrl: `${url}/v1`,
      api: "openai-completions",
      apiKey: "k",
      models: [model("m", { compat: { thinkingFormat: "qwen-chat-template" } })],
    }),
    args: ["--thinking", "high"],
    check: (req) => expect((req.body as Body).chat_template_kwargs).toEqual({ enable_thinking: true, preserve_thinking: true }),
  },
];

function setup(c: Pick<Case, "provider" | "settings">, url: string, extra: Record<string, unknown> = {}) {
  const dirs = tempDirs();
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ $schema: "https://pi.dev/schemas/models.schema.json", providers: { custom: c.provider(url), ...extra } }));
  if (c.settings) writeSettings(dirs.home, c.settings);
  return dirs;
}

describe("models.json end to end", () => {
  for (const c of cases) {
    test.concurrent(c.name, async () => {
      await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
      const dirs = setup(c, fake.url);
      const out = await runPion(["-p", "hi", "--no-session", "--model", "custom/m", ...(c.args ?? [])], { ...dirs, env: c.env });
      expect({ code: out.code, failures: fake.failures }).toEqual({ code: 0, failures: [] });
      c.check(fake.requests[0]!, out);
    });
  }

  test.concurrent("providers on APIs pion lacks: one warning each on stderr, the rest of the file works", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "fine" }] }] });
    const dirs = tempDirs();
    copyFileSync(join(import.meta.dir, "../fixtures/models-json/unimplemented-apis.json"), join(dirs.home, "models.json"));
    const file = JSON.parse(await Bun.file(join(dirs.home, "models.json")).text());
    file.providers.ok.baseUrl = `${fake.url}/v1`;
    writeFileSync(join(dirs.home, "models.json"), JSON.stringify(file));
    const out = await runPion(["-p", "hi", "--no-session", "--model", "ok/m1"], dirs);
    expect(out.code).toBe(0);
    expect(out.stdout.trim()).toBe("fine");
    const warnings = out.stderr.split("\n").filter((l) => l.includes("which pion does not implement"));
    expect(warnings.length).toBe(3);
    expect(warnings[0]).toContain('provider "older-x" uses API "another-future-api"');
  });

  test.concurrent("thinkingLevelMap: a null level is not offered, a mapped xhigh is", async () => {
    await using fake = startFakeProvider();
    const dirs = setup({ provider: (url) => ({ baseUrl: `${url}/v1`, api: "openai-completions", apiKey: "k", models: [model("m", { thinkingLevelMap: { minimal: null, low: null, xhigh: "max" } })] }) }, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--no-session", "--model", "custom/m"] });
    try {
      const res = await p.request({ type: "get_available_thinking_levels" });
      expect(res.data.levels).toEqual(["off", "medium", "high", "xhigh"]);
    } finally {
      await p.close();
    }
  });
});

describe("models.json header secrets and the credential guard", () => {
  test.concurrent("a header's variable is kept from child processes and a command-resolved value is masked", async () => {
    await using fake = startFakeProvider();
    const secret = `cmd-secret-${crypto.randomUUID().slice(0, 8)}`;
    const dirs = setup(
      { provider: (url) => ({ baseUrl: url, api: "anthropic-messages", apiKey: "k", headers: { "x-team": "$HEADER_SECRET_VAR", "x-cmd": `!printf ${secret}` }, models: [model("m")] }) },
      fake.url,
    );
    const p = new Pion({ ...dirs, env: { HEADER_SECRET_VAR: "var-secret-123456" }, args: ["--mode", "rpc", "--no-session", "--model", "custom/m"] });
    try {
      const r = await p.request({ type: "bash", command: `env; echo ${secret}` });
      const output = r.data.output as string;
      expect(output).not.toContain("HEADER_SECRET_VAR");
      expect(output).not.toContain(secret);
      expect(output).toContain("[redacted: custom header x-cmd]");
    } finally {
      await p.close();
    }
  });
});
