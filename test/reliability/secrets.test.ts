/**
 * Secrets: an API key given by environment ("$VAR" in models.json), by --api-key, and
 * literally in models.json reaches the provider but never the session database (main file,
 * -wal, -shm), the JSONL files, an HTML export, stderr or stdout, after a prompt, a tool
 * call, a provider error, model listings and an export.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeSettings, type Rec } from "../support/pion.ts";

const model = { id: "m", name: "m", reasoning: false, input: ["text"], contextWindow: 100000, maxTokens: 4096, cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 } };

/** Every file under `dir`, recursively. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true })
    .map((f) => join(dir, String(f)))
    .filter((f) => statSync(f).isFile());
}

/** Names of the places among `sources` whose bytes contain `secret`. */
function leaks(secret: string, sources: Record<string, Uint8Array | string>): string[] {
  const needle = Buffer.from(secret);
  return Object.entries(sources)
    .filter(([, bytes]) => Buffer.from(typeof bytes === "string" ? Buffer.from(bytes) : bytes).includes(needle))
    .map(([name]) => name);
}

describe("secrets", () => {
  test("API keys from the environment, --api-key and models.json never reach sessions, exports, stderr or stdout", async () => {
    const tag = crypto.randomUUID().replaceAll("-", "");
    const keys = { env: `sk-env-${tag}`, flag: `sk-flag-${tag}`, literal: `sk-literal-${tag}` };
    const seenKeys = new Set<string>();
    const fake = startFakeProvider({
      onRequest: (req) => {
        const h = req.headers;
        for (const v of [h["x-api-key"], h.authorization?.replace(/^Bearer /, "")]) if (v) seenKeys.add(v);
      },
    });
    const dirs = tempDirs();
    const providers = {
      viaenv: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "$PION_RELIABILITY_SECRET", models: [model] },
      literal: { baseUrl: fake.url, api: "anthropic-messages", apiKey: keys.literal, models: [model] },
      viaflag: { baseUrl: `${fake.url}/v1`, api: "openai-completions", apiKey: "$PION_RELIABILITY_UNSET_KEY", models: [model] },
    };
    const modelsJson = join(dirs.home, "models.json");
    await Bun.write(modelsJson, JSON.stringify({ providers }));
    writeSettings(dirs.home, { retry: { enabled: false } });
    const exports: string[] = [];
    const stderrs: Record<string, string> = {};
    const stdouts: Record<string, string> = {};
    const liveDb: Record<string, Uint8Array> = {};

    const runs: [string, string[]][] = [
      ["env", ["--model", "viaenv/m"]],
      ["literal", ["--model", "literal/m"]],
      ["flag", ["--model", "viaflag/m", "--api-key", keys.flag]],
    ];
    for (const [name, args] of runs) {
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", ...args], env: { PION_RELIABILITY_SECRET: keys.env } });
      fake.enqueue(
        { blocks: [{ type: "text", text: "checking" }, { type: "toolCall", name: "bash", arguments: { command: "echo tool ran; env | grep -c PION_ || true" } }] },
        { blocks: [{ type: "text", text: "done with the tool" }] },
        { kind: "http_error", status: 401, message: "invalid credentials were sent with this request" },
      );
      let from = p.records.length;
      await p.request({ type: "prompt", message: `use the tool (${name})` });
      await p.waitFor("agent_settled", from);
      expect(p.records.slice(from).filter((r) => r.type === "tool_execution_end").length).toBe(1);
      from = p.records.length;
      await p.request({ type: "prompt", message: "now fail" });
      await p.waitFor("agent_settled", from);
      const failed = p.records.slice(from).find((r: Rec) => r.type === "message_end" && r.message.role === "assistant")!.message;
      expect(failed.stopReason).toBe("error");
      await p.request({ type: "get_available_models" });
      await p.request({ type: "get_state" });
      await p.request({ type: "get_session_stats" });
      const out = join(dirs.cwd, `export-${name}.html`);
      const exp = await p.request({ type: "export_html", outputPath: out });
      expect(exp.success).toBe(true);
      exports.push(exp.data?.path ?? out);
      // the database as it is while pion runs (the -wal file is gone after a clean close)
      for (const f of filesUnder(join(dirs.home, "sessions"))) if (/pion\.db/.test(f)) liveDb[`${name}: live ${f}`] = readFileSync(f);
      expect(await p.close()).toBe(0);
      stderrs[name] = p.stderr;
      stdouts[name] = JSON.stringify(p.records);
    }

    // the keys did reach the provider
    expect([...seenKeys].sort()).toEqual([keys.env, keys.flag, keys.literal].sort());

    const sources: Record<string, Uint8Array | string> = { ...liveDb };
    for (const f of filesUnder(dirs.home)) if (f !== modelsJson) sources[f] = readFileSync(f);
    for (const f of filesUnder(dirs.cwd)) sources[f] = readFileSync(f);
    for (const f of exports) sources[`export ${f}`] = readFileSync(f);
    for (const [name, s] of Object.entries(stderrs)) sources[`stderr of ${name}`] = s;
    for (const [name, s] of Object.entries(stdouts)) sources[`stdout of ${name}`] = s;
    if (process.env.PION_SECRETS_VERBOSE) console.log(Object.keys(sources));
    expect(Object.keys(sources).some((k) => k.endsWith(".jsonl"))).toBe(true);
    expect(Object.keys(sources).some((k) => k.endsWith("pion.db"))).toBe(true);
    expect(exports.length).toBe(3);
    // the scan itself finds a key where one is
    expect(leaks(keys.literal, { modelsJson: readFileSync(modelsJson) })).toEqual(["modelsJson"]);

    expect({ env: leaks(keys.env, sources), flag: leaks(keys.flag, sources), literal: leaks(keys.literal, sources) }).toEqual({ env: [], flag: [], literal: [] });
    await fake.stop();
  }, 60_000);
});
