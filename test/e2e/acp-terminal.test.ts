import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { setupAcp, type AcpTestClient } from "../support/acp-client.ts";
import type { FakeProvider } from "../support/fake-provider.ts";

setDefaultTimeout(60_000);

const WITH_TERMINAL: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: { terminal: true } };

const methods = (c: AcpTestClient) => c.terminals.calls.map((x) => x.method);

async function until(what: string, ok: () => boolean): Promise<void> {
  for (let i = 0; i < 1000; i++) {
    if (ok()) return;
    await Bun.sleep(10);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A session whose model calls bash with `args` once, then answers "done". */
async function bashCall(o: { init?: acp.InitializeRequest; args: Record<string, unknown>; env?: Record<string, string>; cliArgs?: string[]; files?: Record<string, string> }) {
  const { fake, dirs, c } = setupAcp({ env: o.env, args: o.cliArgs });
  for (const [name, text] of Object.entries(o.files ?? {})) writeFileSync(join(dirs.cwd, name), text);
  await c.agent.request("initialize", o.init ?? WITH_TERMINAL);
  const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
  fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: o.args }] });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const prompt = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "run it" }] });
  return { fake, dirs, c, sessionId: s.sessionId, prompt };
}

/** The bash result as the model got it in its second request. */
function seenByModel(fake: FakeProvider): string {
  return JSON.stringify(fake.requests[1]?.body ?? null);
}

function callUpdates(c: AcpTestClient, sessionId: string): acp.ToolCallUpdate[] {
  return (c.updates.get(sessionId) ?? []).filter((u) => u.sessionUpdate === "tool_call_update" && u.toolCallId === "t1") as acp.ToolCallUpdate[];
}

async function finish(c: AcpTestClient, fake: FakeProvider): Promise<void> {
  expect(await c.close()).toBe(0);
  await fake.stop();
}

describe("ACP: bash in the editor's terminal", () => {
  test.concurrent("the command runs through terminal/*; the call shows the terminal; output and exit code reach the model", async () => {
    const { fake, dirs, c, sessionId, prompt } = await bashCall({ args: { command: "echo to-out; echo to-err >&2; exit 3" } });
    expect((await prompt).stopReason).toBe("end_turn");
    expect(methods(c)).toEqual(["terminal/create", "terminal/wait_for_exit", "terminal/output", "terminal/release"]);
    const create = c.terminals.calls[0]!.params as acp.CreateTerminalRequest;
    expect(create).toMatchObject({ sessionId, command: "bash", args: ["-c", "echo to-out; echo to-err >&2; exit 3"], cwd: dirs.cwd });
    expect(create.outputByteLimit).toBeGreaterThan(0);
    expect(create.env!.some((v) => v.name === "PATH")).toBe(true);
    expect(c.terminals.calls.every((x) => x.params.terminalId === undefined || x.params.terminalId === "term-1")).toBe(true);
    const ups = callUpdates(c, sessionId);
    // the bash tool's empty first result, then the terminal as soon as it exists
    expect(ups.slice(0, 2) as unknown).toEqual([
      { sessionUpdate: "tool_call_update", toolCallId: "t1", status: "in_progress", content: [] },
      { sessionUpdate: "tool_call_update", toolCallId: "t1", content: [{ type: "terminal", terminalId: "term-1" }] },
    ]);
    const end = ups.at(-1)!;
    expect(end.status).toBe("failed");
    expect(end.content![0]).toEqual({ type: "terminal", terminalId: "term-1" });
    expect(JSON.stringify(end.content)).toContain("Command exited with code 3");
    const seen = seenByModel(fake);
    expect(seen).toContain("to-out");
    expect(seen).toContain("to-err");
    expect(seen).toContain("Command exited with code 3");
    await finish(c, fake);
  });

  test.concurrent("a command the user kills in the editor ends the call as killed by a signal", async () => {
    const { fake, c, prompt } = await bashCall({ args: { command: "sleep 30" } });
    await until("terminal/create", () => methods(c).includes("terminal/create"));
    await until("terminal/wait_for_exit", () => methods(c).includes("terminal/wait_for_exit"));
    c.terminals.killByUser("term-1");
    expect((await prompt).stopReason).toBe("end_turn");
    expect(methods(c)).not.toContain("terminal/kill");
    expect(methods(c).at(-1)).toBe("terminal/release");
    expect(seenByModel(fake)).toContain("Command exited with code unknown (killed by a signal)");
    await finish(c, fake);
  });

  test.concurrent("session/cancel kills the terminal's command and releases it; the prompt ends cancelled", async () => {
    const { fake, c, sessionId, prompt } = await bashCall({ args: { command: "sleep 30" } });
    await until("terminal/wait_for_exit", () => methods(c).includes("terminal/wait_for_exit"));
    const started = performance.now();
    await c.agent.notify("session/cancel", { sessionId });
    expect((await prompt).stopReason).toBe("cancelled");
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(methods(c)).toContain("terminal/kill");
    expect(methods(c).at(-1)).toBe("terminal/release");
    const end = callUpdates(c, sessionId).at(-1)!;
    expect(end.status).toBe("failed");
    expect(end.content![0]).toEqual({ type: "terminal", terminalId: "term-1" });
    await finish(c, fake);
  });

  test.concurrent("the bash tool's timeout kills the terminal's command", async () => {
    const { fake, c, prompt } = await bashCall({ args: { command: "echo before; sleep 30", timeout: 1 } });
    expect((await prompt).stopReason).toBe("end_turn");
    expect(methods(c)).toEqual(["terminal/create", "terminal/wait_for_exit", "terminal/kill", "terminal/output", "terminal/release"]);
    const seen = seenByModel(fake);
    expect(seen).toContain("before");
    expect(seen).toContain("Command timed out after 1 seconds");
    await finish(c, fake);
  });

  test.concurrent("a key printed in the terminal is masked in what the model sees; the terminal's environment has none", async () => {
    const tag = crypto.randomUUID().replaceAll("-", "");
    const key = `sk-ant-api03-${tag}`;
    const { fake, c, prompt } = await bashCall({ args: { command: "cat key.txt" }, env: { ANTHROPIC_API_KEY: key }, files: { "key.txt": `ANTHROPIC_API_KEY=${key}\n` } });
    expect((await prompt).stopReason).toBe("end_turn");
    expect(methods(c)[0]).toBe("terminal/create");
    const env = (c.terminals.calls[0]!.params as acp.CreateTerminalRequest).env!;
    expect(env.some((v) => v.name === "ANTHROPIC_API_KEY" || v.value.includes(tag))).toBe(false);
    const seen = seenByModel(fake);
    expect(seen).toContain("[redacted: ANTHROPIC_API_KEY]");
    expect(seen).not.toContain(tag);
    await finish(c, fake);
  });

  test.concurrent("without the terminal capability, or with pion's sandbox on, bash runs in pion's own shell", async () => {
    for (const o of [{ init: { protocolVersion: 1, clientCapabilities: {} } }, { cliArgs: ["--sandbox", "workspace-write"] }]) {
      const { fake, c, sessionId, prompt } = await bashCall({ ...o, args: { command: "echo local-shell" } });
      expect((await prompt).stopReason).toBe("end_turn");
      expect(methods(c)).toEqual([]);
      expect(JSON.stringify(callUpdates(c, sessionId))).not.toContain('"terminal"');
      expect(seenByModel(fake)).toContain("local-shell");
      await finish(c, fake);
    }
  });
});
