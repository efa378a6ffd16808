import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runPion } from "../support/pion.ts";

/**
 * The start-up model of the reference agent and of pion, given the same flags, settings.json and
 * models.json (the reference's agent folder is pion's home): `get_state`'s model and thinking
 * level, or the same error line and a failing exit.
 */
const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test.concurrent : test.skip;

const m = (id: string, name = id) => ({ id, name });
const MODELS = {
  providers: {
    acme: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "acme-key", models: [m("acme-pro-20250101", "Acme Pro"), m("acme-pro", "Acme Pro"), m("acme-mini", "Acme Mini")] },
    zeta: { baseUrl: "http://127.0.0.1:9/v1", api: "openai-completions", apiKey: "zeta-key", models: [m("acme-mini"), m("zeta-large")] },
  },
};

type Outcome = { model?: string; thinkingLevel?: string; error?: string };

function agentDir(settings: Record<string, unknown>): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-modelref-"));
  writeFileSync(join(dir, "models.json"), JSON.stringify(MODELS));
  writeFileSync(join(dir, "settings.json"), JSON.stringify(settings));
  return dir;
}

const GET_STATE = '{"type":"get_state"}\n';

function outcome(code: number, stdout: string, stderr: string, prefix: string): Outcome {
  const state = stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l)).find((r) => r.command === "get_state");
  if (code === 0 && state?.data?.model) return { model: `${state.data.model.provider}/${state.data.model.id}`, thinkingLevel: state.data.thinkingLevel };
  const line = stderr.split("\n").find((l) => l.startsWith(prefix));
  return { error: line?.slice(prefix.length) };
}

async function reference(args: string[], dir: string): Promise<Outcome> {
  const child = Bun.spawn(["bun", join(REF!, "dist/cli.js"), "--mode", "rpc", "--no-session", ...args], {
    cwd: dir,
    env: { ...process.env, PI_CODING_AGENT_DIR: dir },
    stdin: new Blob([GET_STATE]),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return outcome(code, out, err, "Error: ");
}

async function pion(args: string[], dir: string): Promise<Outcome> {
  const r = await runPion(["--mode", "rpc", "--no-session", ...args], { home: dir, cwd: dir, stdin: GET_STATE });
  return outcome(r.code ?? 1, r.stdout, r.stderr, "pion: ");
}

const CASES: [string, string[], Record<string, unknown>][] = [
  ["the settings' default provider and model", [], { defaultProvider: "zeta", defaultModel: "zeta-large" }],
  ["a default model without a default provider is not used", [], { defaultModel: "zeta-large" }],
  ["enabledModels without the default: its first model", [], { defaultProvider: "zeta", defaultModel: "zeta-large", enabledModels: ["acme-*"] }],
  ["enabledModels holding the default: the default, with a level from its pattern", [], { defaultProvider: "zeta", defaultModel: "zeta-large", enabledModels: ["acme-mini", "zeta-*:high"] }],
  ["--models over enabledModels; an id on two providers adds both", ["--models", "acme-mini:high"], { enabledModels: ["zeta-*"] }],
  ["--models that match nothing: a warning, then the default", ["--models", "nomatch*,zzz"], { defaultProvider: "zeta", defaultModel: "zeta-large" }],
  ["--model naming an id two keyed providers list: an error", ["--model", "acme-mini"], {}],
  ["--model by name, with a level", ["--model", "Acme Pro:low"], {}],
  ["--model with a provider, fuzzy", ["--provider", "zeta", "--model", "mini"], {}],
  ["--model beats the scope", ["--model", "zeta/acme-mini", "--thinking", "medium"], { enabledModels: ["acme-*"] }],
  ["--model: a custom id on a named provider", ["--model", "acme/acme-ultra"], {}],
  ["--model: an unknown name", ["--model", "nosuch-model-zz"], {}],
  ["--model: an unknown provider", ["--provider", "nope", "--model", "x"], {}],
  ["--model: an invalid level stays in the id", ["--model", "zeta-large:bogus"], {}],
];

describe("start-up model: pion and the reference on the same flags and files", () => {
  for (const [name, args, settings] of CASES) {
    refTest(name, async () => {
      const dir = agentDir(settings);
      const [ref, ours] = await Promise.all([reference(args, dir), pion(args, dir)]);
      expect(ref.model ?? ref.error).toBeDefined();
      expect(ours).toEqual(ref);
    }, 60_000);
  }
});
