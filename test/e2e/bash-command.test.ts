import { describe, expect, test } from "bun:test";
import { readFileSync, statSync } from "node:fs";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  return { fake, p, ...dirs };
}

describe("the host's bash command", () => {
  test.concurrent("streams chunks with the command's id, answers with the result, runs in the cwd", async () => {
    const { fake, p, cwd } = setup();
    const r = await p.request({ id: "req-1", type: "bash", command: "pwd; echo one; sleep 0.2; echo two >&2; exit 3" });
    expect(r).toEqual({
      id: "req-1",
      type: "response",
      command: "bash",
      success: true,
      data: { output: `${cwd}\none\ntwo\n`, exitCode: 3, cancelled: false, truncated: false },
    });
    const updates = p.records.filter((x) => x.type === "bash_execution_update");
    expect(updates.length).toBeGreaterThanOrEqual(2);
    for (const u of updates) expect(u.id).toBe("req-1");
    expect(updates.map((u) => u.delta).join("")).toBe(`${cwd}\none\ntwo\n`);
    expect(p.records.indexOf(updates.at(-1)!)).toBeLessThan(p.records.indexOf(r));
    await p.close();
    await fake.stop();
  });

  test.concurrent("results reach the model in the next prompt, unless excludeFromContext", async () => {
    const { fake, p } = setup();
    await p.request({ type: "bash", command: "echo first" });
    await p.request({ type: "bash", command: "echo hidden", excludeFromContext: true });
    await p.request({ type: "bash", command: "echo second" });
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    await p.request({ type: "prompt", message: "what ran?" });
    await p.waitFor("agent_settled");
    const msgs = (fake.requests[0]!.body as { messages: { role: string; content: Rec[] }[] }).messages;
    const texts = msgs.map((m) => m.content.map((c) => c.text).join(""));
    expect(texts).toEqual(["Ran `echo first`\n```\nfirst\n\n```", "Ran `echo second`\n```\nsecond\n\n```", "what ran?"]);
    const stored = (await p.request({ type: "get_messages" })).data.messages.filter((m: Rec) => m.role === "bashExecution");
    expect(stored.map((m: Rec) => [m.command, m.excludeFromContext ?? false])).toEqual([
      ["echo first", false],
      ["echo hidden", true],
      ["echo second", false],
    ]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("large output is truncated; the full output file is complete when the response arrives", async () => {
    const { fake, p } = setup();
    const r = await p.request({ type: "bash", command: "seq 1 200000" });
    expect(r.data.truncated).toBe(true);
    expect(r.data.output.trim().split("\n").at(-1)).toBe("200000");
    const full = readFileSync(r.data.fullOutputPath, "utf8");
    expect(full.length).toBe(statSync(r.data.fullOutputPath).size);
    expect(full.split("\n").length).toBe(200001);
    const streamed = p.records.filter((x) => x.type === "bash_execution_update").map((u) => u.delta).join("");
    expect(streamed).toBe(full);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort_bash kills the process group and the response says cancelled", async () => {
    const { fake, p } = setup();
    p.send({ id: "b", type: "bash", command: "echo started; sleep 30 & sleep 30; echo never" });
    await p.waitFor("bash_execution_update");
    // the queue is not held by the running command
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    await p.request({ type: "abort_bash" });
    const r = await p.waitFor((x) => x.type === "response" && x.id === "b");
    expect(r.data).toMatchObject({ output: "started\n", cancelled: true });
    await p.close();
    await fake.stop();
  });
});
