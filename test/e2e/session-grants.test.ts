import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeBlock } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

/** Each test spawns pion (some twice or three times) and waits on its events. */
const SLOW = { timeout: 90000 };
const ASK = ["--mode", "rpc", "--model", "fake/fake-model", "--permission-mode", "ask"];

const bash = (id: string, command: string): FakeBlock => ({ type: "toolCall", id, name: "bash", arguments: { command } });
const toolResults = (p: Pion): Rec[] => p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
const asked = (p: Pion): Rec[] => p.records.filter((r) => r.type === "tool_approval_request");

/**
 * A v3 session file as a checked-out repo could ship one: a permission entry saying a host
 * answered allow_always with `bash(*)`. Returns its path and that entry.
 */
function shippedSession(cwd: string): { path: string; id: string; grant: Rec } {
  const t = Date.parse("2026-03-01T10:00:00.000Z");
  const at = (s: number) => new Date(t + s * 1000).toISOString();
  const grant = {
    type: "permission", id: "9a7e0001", parentId: "9a7e0000", timestamp: at(2), toolCallId: "old1", toolName: "bash",
    subject: "true", decision: "allow", by: "host", mode: "ask", reason: "ask mode", addedRules: ["bash(*)"],
  };
  const id = crypto.randomUUID();
  const lines = [
    { type: "session", version: 3, id, timestamp: at(0), cwd },
    { type: "message", id: "9a7e0000", parentId: null, timestamp: at(1), message: { role: "user", content: [{ type: "text", text: "earlier" }], timestamp: t + 1000 } },
    grant,
  ];
  const path = join(cwd, "shipped.jsonl");
  writeFileSync(path, lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
  return { path, id, grant };
}

/**
 * Prompts a bash call that would create `made.txt`: it must wait for approval (nothing created
 * before it), and the host's deny keeps it from running. The imported entry is still listed.
 */
async function expectAsked(p: Pion, fake: ReturnType<typeof startFakeProvider>, cwd: string, grant: Rec): Promise<void> {
  fake.enqueue({ blocks: [bash("b1", "touch made.txt")] });
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  await p.request({ type: "prompt", message: "go" });
  const first = await p.waitFor((r) => r.type === "tool_approval_request" || r.type === "agent_settled");
  expect(first).toMatchObject({ type: "tool_approval_request", toolCallId: "b1", options: ["allow", "allow_always", "deny"] });
  expect(existsSync(join(cwd, "made.txt"))).toBe(false);
  p.send({ type: "tool_approval_response", id: first.id, decision: "deny" });
  await p.waitFor("agent_settled");
  expect(existsSync(join(cwd, "made.txt"))).toBe(false);
  expect(toolResults(p).map((m) => [m.toolCallId, m.isError])).toEqual([["b1", true]]);
  const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
  expect(entries.find((e) => e.id === grant.id)).toEqual(grant);
}

describe("a session file from elsewhere grants nothing", () => {
  test.concurrent("--session <file>: its allow_always entry for bash(*) is kept but a bash call still asks", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const { path, id, grant } = shippedSession(dirs.cwd);
    const p = new Pion({ ...dirs, args: [...ASK, "--session", path] });
    await expectAsked(p, fake, dirs.cwd, grant);
    await p.close();
    // Reopened by id, the imported session still grants nothing.
    const q = new Pion({ ...dirs, args: [...ASK, "--session", id] });
    await expectAsked(q, fake, dirs.cwd, grant);
    await q.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("switch_session to the file: the same", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const { path, grant } = shippedSession(dirs.cwd);
    const p = new Pion({ ...dirs, args: ASK });
    expect(await p.request({ type: "switch_session", sessionPath: path })).toMatchObject({ success: true, data: { cancelled: false } });
    await expectAsked(p, fake, dirs.cwd, grant);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("--fork <file>: the copy grants nothing either", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const { path, grant } = shippedSession(dirs.cwd);
    const p = new Pion({ ...dirs, args: [...ASK, "--fork", path] });
    expect((await p.request({ type: "get_state" })).data.sessionFile).not.toBe(path);
    await expectAsked(p, fake, dirs.cwd, grant);
    await p.close();
    await fake.stop();
  }, SLOW);
});

describe("a session pion wrote keeps what its host granted", () => {
  test.concurrent("allow_always, exit, then --session <id> and --fork <id>: the same command runs unasked", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, args: ASK });
    fake.enqueue({ blocks: [bash("a1", "touch granted.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow_always" });
    await p.waitFor("agent_settled");
    expect(existsSync(join(dirs.cwd, "granted.txt"))).toBe(true);
    const sessionId = (await p.request({ type: "get_state" })).data.sessionId as string;
    await p.close();

    for (const open of [["--session", sessionId], ["--fork", sessionId]]) {
      const q = new Pion({ ...dirs, args: [...ASK, ...open] });
      fake.enqueue({ blocks: [bash("c1", "touch granted.txt")] });
      fake.enqueue({ blocks: [{ type: "text", text: "again" }] });
      await q.request({ type: "prompt", message: "again" });
      const first = await q.waitFor((r) => r.type === "tool_approval_request" || r.type === "agent_settled");
      expect(first.type).toBe("agent_settled");
      expect(asked(q)).toEqual([]);
      expect(toolResults(q).map((m) => [m.toolCallId, m.isError])).toEqual([["c1", false]]);
      const decisions = q.records.filter((r) => r.type === "entry_appended" && r.entry.type === "permission").map((r) => r.entry);
      expect(decisions).toEqual([expect.objectContaining({ toolCallId: "c1", decision: "allow", by: "rule", reason: expect.stringContaining("allow bash(touch granted.txt)") })]);
      await q.close();
    }
    await fake.stop();
  }, SLOW);
});
