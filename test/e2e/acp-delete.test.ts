// ACP mode: session/delete removes a stored session (database rows and JSONL file), refuses one
// another live pion process holds, and closes one this process has open first.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { setupAcp, startAcp, rpcErrorOf } from "../support/acp-client.ts";
import { Pion } from "../support/pion.ts";

setDefaultTimeout(60_000);

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };
const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

/** The JSONL file of `sessionId` under the home's session folder, found on disk. */
function jsonlOf(home: string, sessionId: string): string | undefined {
  for (const f of new Bun.Glob(`sessions/**/*_${sessionId}.jsonl`).scanSync({ cwd: home, absolute: true })) return f;
  return undefined;
}

describe("ACP mode: session/delete", () => {
  test.concurrent("initialize advertises delete; a deleted session leaves session/list, its JSONL file is gone, and load answers not found", async () => {
    const { fake, dirs, c } = setupAcp();
    const init = await c.agent.request("initialize", INIT);
    expect(init.agentCapabilities!.sessionCapabilities!.delete).toEqual({});
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    const { sessionId: kept } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "one" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "two" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("to be deleted") });
    await c.agent.request("session/prompt", { sessionId: kept, prompt: text("to be kept") });
    const file = jsonlOf(dirs.home, sessionId);
    expect(file && readFileSync(file, "utf8")).toContain("to be deleted");
    const listed = async () => (await c.agent.request("session/list", { cwd: dirs.cwd })).sessions.map((s) => s.sessionId).sort();
    expect(await listed()).toEqual([sessionId, kept].sort());

    // live in this process: closed first, then removed
    expect(await c.agent.request("session/delete", { sessionId })).toEqual({});
    expect(await listed()).toEqual([kept]);
    expect(existsSync(file!)).toBe(false);
    expect(existsSync(jsonlOf(dirs.home, kept)!)).toBe(true);
    expect((await rpcErrorOf(c.agent.request("session/prompt", { sessionId, prompt: text("after") }))).code).toBe(-32002);
    expect((await rpcErrorOf(c.agent.request("session/load", { sessionId, cwd: dirs.cwd, mcpServers: [] }))).code).toBe(-32002);
    expect(await c.close()).toBe(0);

    // a new process finds nothing of it, and the one kept opens with its conversation
    const c2 = startAcp({ ...dirs });
    await c2.agent.request("initialize", INIT);
    expect((await rpcErrorOf(c2.agent.request("session/resume", { sessionId, cwd: dirs.cwd }))).code).toBe(-32002);
    await c2.agent.request("session/load", { sessionId: kept, cwd: dirs.cwd, mcpServers: [] });
    expect(JSON.stringify(c2.updates.get(kept))).toContain("to be kept");
    expect(await c2.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("a session another live pion process holds is refused and stays; once that process exits it can be deleted", async () => {
    const { fake, dirs, c } = setupAcp();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("held elsewhere") });
    await c.agent.request("session/close", { sessionId });

    const rpc = new Pion({ ...dirs, args: ["--mode", "rpc", "--session", sessionId] });
    const state = await rpc.request({ type: "get_state" });
    expect(state.data.sessionId).toBe(sessionId);
    const file = state.data.sessionFile as string;
    expect(existsSync(file)).toBe(true);

    const err = await rpcErrorOf(c.agent.request("session/delete", { sessionId }));
    expect(err.code).toBe(-32600);
    expect(err.message).toContain(`another pion process (pid ${rpc.pid})`);
    expect((await c.agent.request("session/list", { cwd: dirs.cwd })).sessions.map((s) => s.sessionId)).toEqual([sessionId]);
    expect(existsSync(file)).toBe(true);
    expect(readFileSync(file, "utf8")).toContain("held elsewhere");
    // the other process still writes it
    fake.enqueue({ blocks: [{ type: "text", text: "still mine" }] });
    const from = rpc.records.length;
    rpc.send({ id: "p", type: "prompt", message: "and more" });
    await rpc.waitFor((r) => r.type === "agent_end", from, 30_000);
    expect(await rpc.close()).toBe(0);

    expect(await c.agent.request("session/delete", { sessionId })).toEqual({});
    expect((await c.agent.request("session/list", { cwd: dirs.cwd })).sessions).toEqual([]);
    expect(existsSync(file)).toBe(false);
    expect(existsSync(join(dirs.home, "sessions"))).toBe(true);
    expect(await c.close()).toBe(0);
    await fake.stop();
  });
});
