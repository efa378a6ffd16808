import { describe, expect, test } from "bun:test";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, tinyProvider, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

/** Run limits: --max-turns / --max-cost, settings limits.*, prompt maxTurns / maxCostUsd. */

function setup(settings: Record<string, unknown> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, { small: tinyProvider(fake.url) });
  writeSettings(dirs.home, { retry: { maxRetries: 3, baseDelayMs: 10 }, ...settings });
  return { fake, dirs };
}

const toolCall = (id: string, usage?: { input: number; output: number }): FakeReply => ({
  blocks: [{ type: "toolCall", id, name: "bash", arguments: { command: `echo ${id}` } }],
  ...(usage ? { usage } : {}),
});
const say = (text: string): FakeReply => ({ blocks: [{ type: "text", text }] });
// fake/fake-model costs $3 per million input tokens: 100,000 input tokens are $0.30
const expensive = { input: 100000, output: 0 };
const lines = (out: string): Rec[] => out.split("\n").filter(Boolean).map((l) => JSON.parse(l));

async function run(p: Pion, cmd: Rec): Promise<{ recs: Rec[]; result: Rec; response: Rec }> {
  const from = p.records.length;
  const response = await p.request(cmd);
  const result = await p.waitFor((r) => r.type === "prompt_result" && r.id === response.id, from, 60_000);
  return { recs: p.records.slice(from), result, response };
}

describe("run limits over RPC", () => {
  test.concurrent("prompt maxTurns: the run stops after the tool results of the last allowed call; the next run has no limit", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue(toolCall("t1"), toolCall("t2"), say("the next prompt's answer"));
    const { recs, result } = await run(p, { type: "prompt", message: "loop", maxTurns: 2 });
    const why = "Run limit reached: max turns 2 (2 model calls made)";
    expect(result).toMatchObject({ stopReason: "limit", aborted: false, errorMessage: why });
    const settled = recs.find((r) => r.type === "agent_settled")!;
    expect(settled).toMatchObject({ aborted: false, stopReason: "limit", errorMessage: why, cost: result.cost });
    expect(fake.requests.length).toBe(2);
    const types = recs.map((r) => (r.type === "message_end" ? `message_end:${r.message.role}` : r.type)).filter((t) => !t.startsWith("message_update"));
    expect(types.slice(-7)).toEqual(["tool_execution_end", "message_start", "message_end:toolResult", "turn_end", "agent_end", "agent_settled", "prompt_result"]);
    expect(recs.find((r) => r.type === "agent_end")!.willRetry).toBe(false);
    const msgs = (await p.request({ type: "get_messages" })).data.messages as Rec[];
    expect(msgs.at(-1)).toMatchObject({ role: "toolResult", toolCallId: "t2" });

    const next = await run(p, { type: "prompt", message: "again" });
    expect(next.result).toMatchObject({ stopReason: "stop" });
    expect(next.result.errorMessage).toBeUndefined();
    expect(next.recs.find((r) => r.type === "agent_settled")!.stopReason).toBeUndefined();
    await p.close();
    await fake.stop();
  });

  test.concurrent("prompt maxCostUsd: the run stops once its calls cost that much", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue(toolCall("t1", expensive), toolCall("t2", expensive), say("never asked"));
    const { result } = await run(p, { type: "prompt", message: "spend", maxCostUsd: 0.5 });
    expect(result).toMatchObject({ stopReason: "limit", errorMessage: "Run limit reached: max cost $0.5 (spent $0.6)" });
    expect(result.cost).toBeCloseTo(0.6, 10);
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("retries count: a 529 and its retry use up maxTurns 2", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue({ kind: "http_error", status: 529 }, toolCall("t1"), say("never asked"));
    const { recs, result } = await run(p, { type: "prompt", message: "go", maxTurns: 2 });
    expect(recs.some((r) => r.type === "auto_retry_start")).toBe(true);
    expect(result).toMatchObject({ stopReason: "limit", errorMessage: "Run limit reached: max turns 2 (2 model calls made)" });
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a limit reached before a retry stops the run instead of retrying", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue(toolCall("t1"), { kind: "http_error", status: 529 }, say("never asked"));
    const { recs, result } = await run(p, { type: "prompt", message: "go", maxTurns: 2 });
    expect(recs.find((r) => r.type === "agent_end")!.willRetry).toBe(false);
    expect(recs.some((r) => r.type === "auto_retry_start")).toBe(false);
    expect(result).toMatchObject({ stopReason: "limit", errorMessage: "Run limit reached: max turns 2 (2 model calls made)" });
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("compaction counts: a threshold summary mid-run is the second call of maxTurns 2", async () => {
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    const longOutput: FakeReply = {
      blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "seq 1 100" } }],
      usage: { input: 3500, output: 10 },
    };
    fake.enqueue(longOutput, say("SUMMARY"), say("never asked"));
    const { recs, result } = await run(p, { type: "prompt", message: "go", maxTurns: 2 });
    expect(recs.find((r) => r.type === "compaction_end")).toMatchObject({ reason: "threshold", aborted: false });
    expect(result).toMatchObject({ stopReason: "limit", errorMessage: "Run limit reached: max turns 2 (2 model calls made)" });
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("settings limits apply to every run; a prompt's own limit wins; bad limits are refused naming the field", async () => {
    const { fake, dirs } = setup({ limits: { maxTurns: 1 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue(toolCall("t1"));
    const first = await run(p, { type: "prompt", message: "one" });
    expect(first.result).toMatchObject({ stopReason: "limit", errorMessage: "Run limit reached: max turns 1 (1 model call made)" });
    fake.enqueue(toolCall("t2"), say("done"));
    const second = await run(p, { type: "prompt", message: "two", maxTurns: 3 });
    expect(second.result).toMatchObject({ stopReason: "stop" });
    expect(fake.requests.length).toBe(3);
    for (const bad of [{ maxTurns: 0 }, { maxTurns: 1.5 }, { maxCostUsd: -1 }, { maxCostUsd: "1" }]) {
      const r = await p.request({ type: "prompt", message: "x", ...bad });
      expect(r).toMatchObject({ success: false, command: "prompt" });
      expect(r.error).toContain(Object.keys(bad)[0]!);
    }
    expect(fake.requests.length).toBe(3);
    await p.close();
    await fake.stop();
  });
});

describe("run limits in json and print mode", () => {
  test.concurrent("--max-turns: exit 1, the limit on stderr, agent_settled says why", async () => {
    const { fake, dirs } = setup();
    fake.enqueue(toolCall("t1"), say("never asked"));
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "--max-turns", "1", "go"], dirs);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("pion: Run limit reached: max turns 1 (1 model call made)\n");
    const recs = lines(r.stdout);
    expect(recs.at(-1)).toMatchObject({ type: "agent_settled", stopReason: "limit", errorMessage: "Run limit reached: max turns 1 (1 model call made)" });
    expect(recs.filter((x) => x.type === "message_end").at(-1)!.message).toMatchObject({ role: "toolResult", toolCallId: "t1" });
    expect(fake.requests.length).toBe(1);
    await fake.stop();
  });

  test.concurrent("-p --max-cost: exit 1 with the limit on stderr; the flag wins over settings", async () => {
    const { fake, dirs } = setup({ limits: { maxCostUsd: 100, maxTurns: 1 } });
    fake.enqueue(toolCall("t1", expensive), toolCall("t2", expensive), say("never asked"));
    const r = await runPion(["-p", "--model", "fake/fake-model", "--max-cost", "$0.5", "--max-turns", "5", "spend"], dirs);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("pion: Run limit reached: max cost $0.5 (spent $0.6)\n");
    expect(fake.requests.length).toBe(2);
    await fake.stop();
  });

  test.concurrent("--max-cost in json mode: exit 1, the limit on stderr and in agent_settled", async () => {
    const { fake, dirs } = setup();
    fake.enqueue(toolCall("t1", expensive), say("never asked"));
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "--max-cost", "0.25", "spend"], dirs);
    expect(r.code).toBe(1);
    const why = "Run limit reached: max cost $0.25 (spent $0.3)";
    expect(r.stderr).toContain(`pion: ${why}\n`);
    expect(lines(r.stdout).at(-1)).toMatchObject({ type: "agent_settled", stopReason: "limit", errorMessage: why });
    expect(fake.requests.length).toBe(1);
    await fake.stop();
  });

  test.concurrent("settings limits.maxTurns alone stops a json run", async () => {
    const { fake, dirs } = setup({ limits: { maxTurns: 1 } });
    fake.enqueue(toolCall("t1"), say("never asked"));
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "go"], dirs);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("Run limit reached: max turns 1");
    await fake.stop();
  });

  test.concurrent("a run under its limits exits 0", async () => {
    const { fake, dirs } = setup();
    fake.enqueue(toolCall("t1"), say("done"));
    const r = await runPion(["-p", "--model", "fake/fake-model", "--max-turns", "2", "--max-cost", "1", "go"], dirs);
    expect(r).toMatchObject({ code: 0, stdout: "done\n" });
    await fake.stop();
  });

  test.concurrent("bad limit flags are usage errors (exit 2)", async () => {
    const dirs = tempDirs();
    for (const [args, message] of [
      [["--max-turns", "0"], '--max-turns must be a whole number of at least 1, got "0"'],
      [["--max-turns", "2.5"], '--max-turns must be a whole number of at least 1, got "2.5"'],
      [["--max-cost", "cheap"], '--max-cost must be a positive number of dollars, got "cheap"'],
      [["--max-cost", "-1"], '--max-cost must be a positive number of dollars, got "-1"'],
    ] as const) {
      const r = await runPion(["-p", ...args, "go"], dirs);
      expect(r.code).toBe(2);
      expect(r.stderr).toBe(`pion: ${message} (see pion --help)\n`);
    }
  });
});
