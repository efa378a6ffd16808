import { describe, expect, test } from "bun:test";
import { startFakeProvider } from "../support/fake-provider.ts";
import { GATED_COMMAND, Pion, releaseGate, tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 } });
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  return { fake, p, cwd: dirs.cwd };
}

describe("for embedders", () => {
  test.concurrent("prompt_result once per command id, after agent_settled with run totals (retries included)", async () => {
    const { fake, p, cwd } = setup();
    fake.enqueue({ kind: "http_error", status: 529 });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t", name: "bash", arguments: { command: GATED_COMMAND } }], usage: { input: 100, output: 10 } });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }], usage: { input: 200, output: 20 } });
    fake.enqueue({ blocks: [{ type: "text", text: "done too" }], usage: { input: 0, output: 0 } });
    await p.request({ id: "main", type: "prompt", message: "go" });
    await p.waitFor("tool_execution_start");
    await p.request({ id: "steer-1", type: "steer", message: "also this" });
    await p.request({ type: "steer", message: "no id" });
    releaseGate(cwd);
    const settled = await p.waitFor("agent_settled");
    expect(settled.usage).toMatchObject({ input: 300, output: 30, totalTokens: 330 });
    expect(settled.cost).toBeCloseTo((300 * 3 + 30 * 15) / 1e6, 12);
    await p.waitFor((r) => r.type === "prompt_result" && r.id === "steer-1");
    const results = p.records.filter((r) => r.type === "prompt_result");
    expect(results.map((r) => r.id)).toEqual(["main", "steer-1"]);
    expect(results[0]).toEqual({ type: "prompt_result", id: "main", stopReason: "stop", aborted: false, usage: settled.usage, cost: settled.cost });
    expect(p.records.indexOf(results[0]!)).toBeGreaterThan(p.records.indexOf(settled));
    await p.close();
    await fake.stop();
  });

  test.concurrent("a failed or aborted run reports it in prompt_result; cleared queue entries are reported aborted", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 400, message: "bad request" });
    await p.request({ id: "a", type: "prompt", message: "x" });
    const r = await p.waitFor((x) => x.type === "prompt_result" && x.id === "a");
    expect(r).toMatchObject({ stopReason: "error", aborted: false, errorMessage: expect.stringContaining("bad request") });
    await p.request({ id: "q", type: "follow_up", message: "later" });
    await p.request({ type: "clear_queue" });
    expect(await p.waitFor((x) => x.type === "prompt_result" && x.id === "q")).toMatchObject({ stopReason: "aborted", aborted: true });
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b"] }], stallAfterChunks: 3 });
    await p.request({ id: "b", type: "prompt", message: "y" });
    await p.waitFor("message_update");
    await p.request({ type: "abort" });
    expect(await p.waitFor((x) => x.type === "prompt_result" && x.id === "b")).toMatchObject({ stopReason: "aborted", aborted: true });
    await p.close();
    await fake.stop();
  });

  test.concurrent("get_capabilities", async () => {
    const { fake, p } = setup();
    const caps = (await p.request({ type: "get_capabilities" })).data;
    expect(caps.name).toBe("pion");
    expect(caps.version).toMatch(/^\d+\.\d+\.\d+/);
    expect(caps.commands).toContain("prompt");
    expect(caps.commands).toContain("set_host_tools");
    expect(caps.commands).not.toContain("host_tool_result");
    expect(caps.events).toContain("prompt_result");
    expect(caps.features).toMatchObject({ sessionSearch: true, hostTools: true });
    await p.close();
    await fake.stop();
  });
});
