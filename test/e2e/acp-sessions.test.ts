// ACP mode: what an editor keeps about a session beside its conversation (usage_update,
// session_info_update) and the session lifecycle (resume, close, fork, $/cancel_request).
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { setupAcp, startAcp, rpcErrorOf } from "../support/acp-client.ts";

setDefaultTimeout(60_000);

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };
const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

type Update<K extends acp.SessionUpdate["sessionUpdate"]> = Extract<acp.SessionUpdate, { sessionUpdate: K }>;
const ofKind = <K extends acp.SessionUpdate["sessionUpdate"]>(updates: acp.SessionUpdate[] | undefined, kind: K): Update<K>[] =>
  (updates ?? []).filter((u): u is Update<K> => u.sessionUpdate === kind);

const errorOf = rpcErrorOf;

/** Waits (polling the recorded updates, no fixed sleep) until `ok` holds or 10 s pass. */
async function until(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !ok(); i++) await Bun.sleep(10);
}

describe("ACP mode: session info and lifecycle", () => {
  test.concurrent("initialize advertises list, resume, close, fork, delete and additionalDirectories", async () => {
    const { fake, c } = setupAcp();
    const init = await c.agent.request("initialize", INIT);
    const caps = init.agentCapabilities!.sessionCapabilities as Record<string, unknown>;
    expect(caps).toMatchObject({ list: {}, resume: {}, close: {}, fork: {}, delete: {}, additionalDirectories: {} });
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("usage_update after each model response: context used, the model's window, the session's cost so far", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "one" }], usage: { input: 1000, output: 200 } });
    await c.agent.request("session/prompt", { sessionId, prompt: text("first") });
    fake.enqueue({ blocks: [{ type: "text", text: "two" }], usage: { input: 2000, output: 100 } });
    await c.agent.request("session/prompt", { sessionId, prompt: text("second") });
    const usage = ofKind(c.updates.get(sessionId), "usage_update");
    // fake-model: window 200000, $3 / $15 per million input / output tokens
    expect(usage.map((u) => [u.used, u.size, u.cost?.currency])).toEqual([
      [1200, 200000, "USD"],
      [2100, 200000, "USD"],
    ]);
    expect(usage[0]!.cost!.amount).toBeCloseTo(0.006, 9);
    expect(usage[1]!.cost!.amount).toBeCloseTo(0.006 + 0.0075, 9);
    // each follows the reply it counts
    const ups = c.updates.get(sessionId)!;
    expect(ups.indexOf(usage[0]!)).toBeGreaterThan(ups.findIndex((u) => u.sessionUpdate === "agent_message_chunk"));
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("session_info_update: the first prompt titles the session once; session/list shows the title", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "a" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "b" }] });
    const before = Date.now();
    await c.agent.request("session/prompt", { sessionId, prompt: text("Fix the parser") });
    await c.agent.request("session/prompt", { sessionId, prompt: text("and the tests") });
    const info = ofKind(c.updates.get(sessionId), "session_info_update");
    expect(info.map((u) => u.title)).toEqual(["Fix the parser"]);
    expect(Date.parse(info[0]!.updatedAt!)).toBeGreaterThanOrEqual(before - 1000);
    const list = await c.agent.request("session/list", { cwd: dirs.cwd });
    expect(list.sessions.find((s) => s.sessionId === sessionId)!.title).toBe("Fix the parser");
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("a named session (--name) is announced with its name, which a prompt does not replace", async () => {
    const { fake, dirs, c } = setupAcp({ args: ["--name", "release work"] });
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    await until(() => ofKind(c.updates.get(sessionId), "session_info_update").length > 0);
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("something else") });
    expect(ofKind(c.updates.get(sessionId), "session_info_update").map((u) => u.title)).toEqual(["release work"]);
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("session/resume in a new process reattaches without replaying; the next prompt sees the earlier conversation", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "noted: forty-two" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("remember forty-two") });
    expect(await c.close()).toBe(0);

    const c2 = startAcp({ ...dirs });
    await c2.agent.request("initialize", INIT);
    const r = await c2.agent.request("session/resume", { sessionId, cwd: dirs.cwd, mcpServers: [] });
    expect(r.configOptions!.find((o) => o.id === "model")!.currentValue).toBe("fake/fake-model");
    fake.enqueue({ blocks: [{ type: "text", text: "it was forty-two" }] });
    expect((await c2.agent.request("session/prompt", { sessionId, prompt: text("what was it?") })).stopReason).toBe("end_turn");
    const replayed = (c2.updates.get(sessionId) ?? []).filter((u) => u.sessionUpdate === "user_message_chunk");
    expect(replayed).toEqual([]);
    const chunks = ofKind(c2.updates.get(sessionId), "agent_message_chunk").map((u) => (u.content as { text: string }).text);
    expect(chunks).toEqual(["it was forty-two"]);
    const body = JSON.stringify(fake.requests.at(-1)!.body);
    expect(body).toContain("remember forty-two");
    expect(body).toContain("noted: forty-two");
    expect((await errorOf(c2.agent.request("session/resume", { sessionId: "no-such-session", cwd: dirs.cwd }))).code).toBe(-32002);
    expect(await c2.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("session/close cancels the running prompt and frees the session: later requests for it answer session not found", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: ["partial ", "never sent"] }], stallAfterChunks: 2 });
    const running = c.agent.request("session/prompt", { sessionId, prompt: text("long one") });
    await fake.waitForRequests(1, 30_000);
    expect(await c.agent.request("session/close", { sessionId })).toEqual({});
    expect((await running).stopReason).toBe("cancelled");
    expect((await errorOf(c.agent.request("session/prompt", { sessionId, prompt: text("after close") }))).code).toBe(-32002);
    expect((await errorOf(c.agent.request("session/set_mode", { sessionId, modeId: "ask" }))).code).toBe(-32002);
    expect(fake.requests.length).toBe(1);
    // the store keeps it: a closed session can be resumed, and its lock was given up
    const again = await c.agent.request("session/resume", { sessionId, cwd: dirs.cwd });
    expect(again.configOptions!.length).toBeGreaterThan(0);
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("session/fork makes a new session holding the source's conversation; the source goes on unchanged", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "source answer" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("source question") });
    const fork = await c.agent.request<{ sessionId: string; configOptions?: acp.SessionConfigOption[] }>("session/fork", {
      sessionId,
      cwd: dirs.cwd,
      mcpServers: [],
    });
    expect(typeof fork.sessionId).toBe("string");
    expect(fork.sessionId).not.toBe(sessionId);
    expect(fork.configOptions!.find((o) => o.id === "model")!.currentValue).toBe("fake/fake-model");
    fake.enqueue({ blocks: [{ type: "text", text: "fork answer" }] });
    await c.agent.request("session/prompt", { sessionId: fork.sessionId, prompt: text("fork question") });
    const forkBody = JSON.stringify(fake.requests.at(-1)!.body);
    expect(forkBody).toContain("source question");
    expect(forkBody).toContain("source answer");
    fake.enqueue({ blocks: [{ type: "text", text: "source again" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("source follow-up") });
    expect(JSON.stringify(fake.requests.at(-1)!.body)).not.toContain("fork question");
    const ids = (await c.agent.request("session/list", { cwd: dirs.cwd })).sessions.map((s) => s.sessionId);
    expect(ids).toContain(sessionId);
    expect(ids).toContain(fork.sessionId);
    expect((await errorOf(c.agent.request("session/fork", { sessionId: "no-such-session", cwd: dirs.cwd }))).code).toBe(-32002);
    expect((await errorOf(c.agent.request("session/fork", { cwd: dirs.cwd }))).code).toBe(-32602);
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("$/cancel_request for a queued prompt drops only it; for the running one, stops the run", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: ["slow ", "but ", "finished"] }], chunkDelayMs: 300 });
    const running = c.agent.request("session/prompt", { sessionId, prompt: text("running one") });
    await fake.waitForRequests(1, 30_000);
    const cancelQueued = new AbortController();
    const queued = c.agent.request("session/prompt", { sessionId, prompt: text("queued one") }, { cancellationSignal: cancelQueued.signal });
    // a request answered after the prompt was sent: pion has queued the prompt by then
    await c.agent.request("session/list", { cwd: dirs.cwd });
    cancelQueued.abort();
    expect((await queued).stopReason).toBe("cancelled");
    expect((await running).stopReason).toBe("end_turn");
    expect(fake.requests.length).toBe(1);

    fake.enqueue({ blocks: [{ type: "text", text: ["partial ", "never sent"] }], stallAfterChunks: 2 });
    const cancelRunning = new AbortController();
    const stalled = c.agent.request("session/prompt", { sessionId, prompt: text("stalled one") }, { cancellationSignal: cancelRunning.signal });
    await fake.waitForRequests(2, 30_000);
    cancelRunning.abort();
    expect((await stalled).stopReason).toBe("cancelled");
    fake.enqueue({ blocks: [{ type: "text", text: "fine" }] });
    expect((await c.agent.request("session/prompt", { sessionId, prompt: text("next") })).stopReason).toBe("end_turn");
    expect(await c.close()).toBe(0);
    await fake.stop();
  });
});
