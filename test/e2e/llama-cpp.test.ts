import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { llamaServerBinary, startLlamaServer, type LlamaServer } from "../support/llama-server.ts";
import { Pion, runPion, tempDirs, writeSettings, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";
import { REPLY, REPLY_TOKENS, tinyModel } from "../support/tiny-model.ts";

/**
 * The llama.cpp provider against a real llama-server (scripts/llama-server.sh builds it) serving
 * a tiny random-weight Qwen2 model that always answers REPLY: discovery of models and context
 * size, streaming, usage, stop reasons, overflow recovery and the errors a user sees.
 */
const found = llamaServerBinary();
const missing = "missing" in found ? found.missing : undefined;

/** The end-of-turn token the server counts in completion_tokens. */
const OUTPUT_TOKENS = REPLY_TOKENS + 1;

const assistantEnds = (recs: Rec[]) => recs.filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message);

function setup(server: LlamaServer, settings: Record<string, unknown> = {}, models?: Record<string, unknown>) {
  const dirs = tempDirs();
  writeSettings(dirs.home, { retry: { enabled: false }, ...settings });
  if (models) writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers: models }));
  return { dirs, env: { LLAMA_BASE_URL: server.url } };
}

async function prompt(p: Pion, message: string, timeoutMs = 30_000): Promise<Rec[]> {
  const from = p.records.length;
  p.send({ type: "prompt", message });
  await p.waitFor("agent_settled", from, timeoutMs);
  return p.records.slice(from);
}

describeWith("llama.cpp provider against a real llama-server", missing, () => {
  let server: LlamaServer;
  beforeAll(async () => {
    if ("missing" in found) return;
    server = await startLlamaServer(found);
  });
  afterAll(async () => {
    await server?.stop();
  });

  test("json mode: text streams in order, usage and the stop reason are the server's", async () => {
    const { dirs, env } = setup(server);
    const r = await runPion(["--mode", "json", "--no-session", "--model", "llama.cpp/tiny", "say hello"], { ...dirs, env });
    expect(r.code).toBe(0);
    const recs = r.stdout.trim().split("\n").map((l) => JSON.parse(l) as Rec);
    const events = recs.filter((x) => x.type === "message_update").map((x) => x.assistantMessageEvent);
    expect(events.map((e) => e.type)).toEqual(["text_start", ...Array(REPLY_TOKENS).fill("text_delta"), "text_end"]);
    expect(events.filter((e) => e.type === "text_delta").map((e) => e.delta).join("")).toBe(REPLY);
    const [reply] = assistantEnds(recs);
    expect(reply).toMatchObject({ provider: "llama.cpp", model: "tiny", api: "openai-completions", stopReason: "stop", content: [{ type: "text", text: REPLY }] });
    expect(reply.usage.output).toBe(OUTPUT_TOKENS);
    // Prompt tokens are the server's count: the part it had cached is cacheRead, the rest input.
    expect(reply.usage.input + reply.usage.cacheRead).toBeGreaterThan(100);
    expect(reply.usage.totalTokens).toBe(reply.usage.input + reply.usage.cacheRead + reply.usage.output);
    expect(reply.usage.cost.total).toBe(0);
  });

  test("rpc: the model list comes from the server when asked, with the context size from /props", async () => {
    const { dirs, env } = setup(server);
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--no-session"] });
    try {
      const list = await p.request({ type: "get_available_models" });
      const llama = (list.data.models as Rec[]).filter((m) => m.provider === "llama.cpp");
      expect(llama).toEqual([
        expect.objectContaining({ id: "tiny", api: "openai-completions", baseUrl: `${server.url}/v1`, contextWindow: 2048, maxTokens: 2048, input: ["text"] }),
      ]);
      expect((await p.request({ type: "set_model", provider: "llama.cpp", modelId: "tiny" })).success).toBe(true);
      const [reply] = assistantEnds(await prompt(p, "hello"));
      expect(reply).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: REPLY }] });
    } finally {
      await p.close();
    }
  });

  test("max tokens reached: stopReason length with the text so far", async () => {
    const { dirs, env } = setup(server, {}, { "llama.cpp": { modelOverrides: { tiny: { maxTokens: 2 } } } });
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--no-session", "--model", "llama.cpp/tiny"] });
    try {
      const recs = await prompt(p, "hello");
      const replies = assistantEnds(recs);
      expect(replies).toHaveLength(1);
      expect(replies[0]).toMatchObject({ stopReason: "length", content: [{ type: "text", text: "Hello from" }], usage: { output: 2 } });
      expect(recs.some((r) => r.type === "compaction_start")).toBe(false);
    } finally {
      await p.close();
    }
  });

  test("a prompt beyond -c 2048: the server's context error is an overflow; compaction makes room and the request is retried", async () => {
    // A reserve of 1 token: no compaction before the request, so the server is the one that refuses it.
    const { dirs, env } = setup(server, { compaction: { keepRecentTokens: 300, reserveTokens: 1 } });
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--no-session", "--model", "llama.cpp/tiny"] });
    try {
      for (const word of ["alpha", "beta"]) expect(assistantEnds(await prompt(p, `${word} `.repeat(400)))[0].stopReason).toBe("stop");
      const recs = await prompt(p, "gamma ".repeat(800), 60_000);
      const replies = assistantEnds(recs);
      expect(replies[0].stopReason).toBe("error");
      expect(replies[0].errorMessage).toMatch(/^400 request \(\d+ tokens\) exceeds the available context size \(2048 tokens\)/);
      expect(recs.find((r) => r.type === "compaction_start")).toMatchObject({ reason: "overflow" });
      expect(recs.find((r) => r.type === "compaction_end")).toMatchObject({ reason: "overflow", willRetry: true });
      expect(replies.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: REPLY }] });
    } finally {
      await p.close();
    }
  });

  test("a prompt that alone exceeds the context: one compaction attempt, then an error that says why", async () => {
    const { dirs, env } = setup(server);
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--no-session", "--model", "llama.cpp/tiny"] });
    try {
      const recs = await prompt(p, "word ".repeat(2100));
      expect(assistantEnds(recs)).toHaveLength(1);
      expect(recs.find((r) => r.type === "compaction_start")).toMatchObject({ reason: "overflow" });
      const end = recs.find((r) => r.type === "compaction_end");
      expect(end).toMatchObject({ reason: "overflow", willRetry: false });
      expect(end!.errorMessage).toContain("does not fit the context window of llama.cpp/tiny (2048 tokens)");
    } finally {
      await p.close();
    }
  });

  test("LLAMA_BASE_URL and no other provider: pion starts on the server's model", async () => {
    const { dirs, env } = setup(server);
    const r = await runPion(["--no-session", "-p", "hi"], { ...dirs, env });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(REPLY);
  });

  test("--list-models asks the server named by LLAMA_BASE_URL", async () => {
    const { dirs, env } = setup(server);
    const r = await runPion(["--list-models", "tiny"], { ...dirs, env });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/llama\.cpp\s+tiny\s+2K?/);
  });
});

describeWith("llama.cpp provider: other servers", missing, () => {
  test("a server started with --api-key: LLAMA_API_KEY is sent as a Bearer token; without it the error is the server's", async () => {
    const server = await startLlamaServer(found as { bin: string; vocab: string }, ["--api-key", "sekret"]);
    try {
      const dirs = tempDirs();
      writeSettings(dirs.home, { retry: { enabled: false } });
      const args = ["--mode", "json", "--no-session", "--model", "llama.cpp/tiny", "hi"];
      const ok = await runPion(args, { ...dirs, env: { LLAMA_BASE_URL: `${server.url}/v1/`, LLAMA_API_KEY: "sekret" } });
      expect(ok.code).toBe(0);
      expect(ok.stdout).toContain(REPLY);
      const denied = await runPion(args, { ...dirs, env: { LLAMA_BASE_URL: server.url } });
      expect(denied.code).not.toBe(0);
      expect(denied.stderr).toContain(`llama.cpp server at ${server.url} answered /v1/models with HTTP 401`);
    } finally {
      await server.stop();
    }
  });
  test("router mode: every model of --models-dir is listed with its --ctx-size, and the one chosen is loaded on demand", async () => {
    const kit = found as { bin: string; vocab: string };
    const dir = mkdtempSync(join(tmpdir(), "llama-models-"));
    for (const name of ["tiny-a", "tiny-b"]) symlinkSync(tinyModel(kit.vocab), join(dir, `${name}.gguf`));
    const server = await startLlamaServer(kit, ["--models-dir", dir]);
    try {
      const { dirs, env } = setup(server);
      const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--no-session"] });
      try {
        const list = await p.request({ type: "get_available_models" });
        const llama = (list.data.models as Rec[]).filter((m) => m.provider === "llama.cpp");
        expect(llama.map((m) => [m.id, m.contextWindow])).toEqual([["tiny-a", 2048], ["tiny-b", 2048]]);
        expect((await p.request({ type: "set_model", provider: "llama.cpp", modelId: "tiny-b" })).success).toBe(true);
        const [reply] = assistantEnds(await prompt(p, "hello", 60_000));
        expect(reply).toMatchObject({ model: "tiny-b", stopReason: "stop", content: [{ type: "text", text: REPLY }] });
      } finally {
        await p.close();
      }
    } finally {
      await server.stop();
    }
  });

  test("a router that loads nothing on demand: naming the provider says it has no model ready", async () => {
    const kit = found as { bin: string; vocab: string };
    const dir = mkdtempSync(join(tmpdir(), "llama-models-"));
    symlinkSync(tinyModel(kit.vocab), join(dir, "tiny-a.gguf"));
    const server = await startLlamaServer(kit, ["--models-dir", dir, "--no-models-autoload"]);
    try {
      const { dirs, env } = setup(server);
      const r = await runPion(["--no-session", "--provider", "llama.cpp", "-p", "hi"], { ...dirs, env });
      expect(r.code).not.toBe(0);
      expect(r.stderr).toContain(`The llama.cpp server at ${server.url} has no model ready`);
    } finally {
      await server.stop();
    }
  });
});

describe("llama.cpp provider: no server", () => {
  test("the server is down: naming the provider fails at start-up with the URL", async () => {
    const dirs = tempDirs();
    const url = "http://127.0.0.1:9"; // discard port: nothing listens
    const r = await runPion(["--mode", "json", "--no-session", "--model", "llama.cpp/tiny", "hi"], { ...dirs, env: { LLAMA_BASE_URL: url } });
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`Could not reach the llama.cpp server at ${url} (LLAMA_BASE_URL)`);
  });

  test("the server is down: listings go on without it and say why on stderr", async () => {
    const dirs = tempDirs();
    const url = "http://127.0.0.1:9";
    const p = new Pion({ ...dirs, env: { LLAMA_BASE_URL: url }, args: ["--mode", "rpc", "--no-session"] });
    try {
      const list = await p.request({ type: "get_available_models" });
      expect(list.success).toBe(true);
      expect((list.data.models as Rec[]).some((m) => m.provider === "llama.cpp")).toBe(false);
      expect(p.stderr).toContain(`Could not reach the llama.cpp server at ${url}`);
      const set = await p.request({ type: "set_model", provider: "llama.cpp", modelId: "tiny" });
      expect(set.success).toBe(false);
      expect(set.error).toContain(url);
    } finally {
      await p.close();
    }
  });

});
