import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

describe("models and thinking levels", () => {
  test.concurrent("set_model, cycle_model, available models, thinking levels", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const avail = (await p.request({ type: "get_available_models" })).data.models.map((m: Rec) => `${m.provider}/${m.id}`);
    expect(avail).toEqual(["fake/fake-model", "fake/fake-plain", "fake-openai/fake-chat", "fake-responses/fake-resp"]);
    const st = (await p.request({ type: "get_state" })).data;
    expect(st.thinkingLevel).toBe("medium");
    expect(st.model).toEqual({
      id: "fake-model",
      name: "fake-model",
      api: "anthropic-messages",
      provider: "fake",
      baseUrl: fake.url,
      reasoning: true,
      input: ["text", "image"],
      cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
      contextWindow: 200000,
      maxTokens: 8192,
      source: "models.json",
    });
    expect((await p.request({ type: "get_available_thinking_levels" })).data).toEqual({ levels: ["off", "minimal", "low", "medium", "high"] });
    expect((await p.request({ type: "set_thinking_level", level: "xhigh" })).success).toBe(true);
    expect((await p.request({ type: "get_state" })).data.thinkingLevel).toBe("high");
    expect((await p.request({ type: "set_thinking_level", level: "bogus" })).success).toBe(false);
    expect((await p.request({ type: "cycle_thinking_level" })).data).toEqual({ level: "off" });
    const bad = await p.request({ type: "set_model", provider: "fake", modelId: "nope" });
    expect(bad).toMatchObject({ success: false, error: "Model not found: fake/nope" });
    await p.request({ type: "set_thinking_level", level: "low" });
    const from = p.records.length;
    const set = await p.request({ type: "set_model", provider: "fake", modelId: "fake-plain" });
    expect(set.data).toMatchObject({ id: "fake-plain", provider: "fake", reasoning: false });
    expect(p.records.slice(from).find((r) => r.type === "thinking_level_changed")).toEqual({ type: "thinking_level_changed", level: "off", requested: "low" });
    expect((await p.request({ type: "get_available_thinking_levels" })).data).toEqual({ levels: ["off"] });
    expect((await p.request({ type: "cycle_thinking_level" })).data).toBeNull();
    const cyc = (await p.request({ type: "cycle_model" })).data;
    expect(cyc).toMatchObject({ model: { id: "fake-chat" }, isScoped: false });
    const entries = (await p.request({ type: "get_entries" })).data.entries.map((e: Rec) => e.type);
    expect(entries.filter((t: string) => t === "model_change").length).toBe(3);
    await p.close();
    await fake.stop();
  });

  test.concurrent("--models scopes cycle_model; one model gives null", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake-model", "--models", "fake/fake-model,fake-resp"] });
    const a = (await p.request({ type: "cycle_model" })).data;
    expect(a).toMatchObject({ model: { id: "fake-resp" }, isScoped: true });
    const b = (await p.request({ type: "cycle_model" })).data;
    expect(b).toMatchObject({ model: { id: "fake-model" }, isScoped: true });
    await p.close();
    const q = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake-model", "--models", "fake-model"] });
    expect((await q.request({ type: "cycle_model" })).data).toBeNull();
    await q.close();
    await fake.stop();
  });

  test.concurrent("keys: $ENV in models.json, --api-key, and a provider without a key", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url, {
      envkeyed: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "$PION_TEST_SECRET", models: [{ id: "m1" }] },
    });
    const noKey = await runPion(["--mode", "rpc", "--model", "envkeyed/m1"], dirs);
    expect(noKey.code).toBe(1);
    expect(noKey.stderr).toContain("No API key");
    fake.enqueue({ blocks: [{ type: "text", text: "a" }] }, { blocks: [{ type: "text", text: "b" }] });
    const p = new Pion({ ...dirs, env: { PION_TEST_SECRET: "from-env" }, args: ["--mode", "rpc", "--model", "envkeyed/m1"] });
    await p.request({ type: "prompt", message: "x" });
    await p.waitFor("agent_settled");
    expect(fake.requests[0]!.headers["x-api-key"]).toBe("from-env");
    await p.close();
    const q = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--api-key", "from-flag"] });
    await q.request({ type: "prompt", message: "y" });
    await q.waitFor("agent_settled");
    expect(fake.requests[1]!.headers["x-api-key"]).toBe("from-flag");
    await q.close();
    await fake.stop();
  });

  test.concurrent("the scripted provider serves replies from a file, then a clear error", async () => {
    const dirs = tempDirs();
    const file = join(dirs.cwd, "replies.json");
    writeFileSync(file, JSON.stringify([{ content: [{ type: "toolCall", name: "bash", arguments: { command: "echo scripted" } }] }, { text: "all done" }]));
    const r = await runPion(["--mode", "json", "--provider", "scripted", "--model", "replies.json", "go"], dirs);
    expect(r.code).toBe(0);
    const recs = r.stdout.trim().split("\n").map((l) => JSON.parse(l));
    expect(recs.find((x: Rec) => x.type === "tool_execution_end").result.content[0].text).toBe("scripted\n");
    expect(recs.filter((x: Rec) => x.type === "message_end" && x.message.role === "assistant").at(-1).message.content).toEqual([{ type: "text", text: "all done" }]);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--provider", "scripted", "--model", resolve(dirs.cwd, "replies.json")] });
    await p.request({ type: "prompt", message: "one" });
    await p.waitFor((x) => x.type === "agent_settled");
    const from = p.records.length;
    await p.request({ type: "prompt", message: "two" });
    const end = await p.waitFor((x) => x.type === "message_end" && x.message.role === "assistant", from);
    expect(end.message.stopReason).toBe("error");
    expect(end.message.errorMessage).toContain("no reply left");
    await p.close();
  });
});
