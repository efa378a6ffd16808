// ACP mode at the edges of a connection and of a run: version negotiation, cancel with
// prompts queued behind the running one, and stdin closing while requests are in flight.
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { setupAcp, startAcp } from "../support/acp-client.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { spawnPiped, tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";

setDefaultTimeout(60_000);

const setup = setupAcp;

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };
const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];

/** What `p` settled with, or "still waiting" after `ms` (a hang fails the test instead of timing it out). */
const within = <T>(p: Promise<T>, ms = 10_000): Promise<T | "still waiting"> =>
  Promise.race([p, Bun.sleep(ms).then(() => "still waiting" as const)]);

describe("ACP mode: connection and run edges", () => {
  test.concurrent("initialize answers version 1 to a version pion does not speak (newer or older)", async () => {
    const { fake, c } = setup();
    expect((await c.agent.request("initialize", { ...INIT, protocolVersion: 99 })).protocolVersion).toBe(1);
    expect((await c.agent.request("initialize", { ...INIT, protocolVersion: 0 })).protocolVersion).toBe(1);
    expect((await c.agent.request("initialize", INIT)).protocolVersion).toBe(1);
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("session/cancel answers the running prompt and every queued one with cancelled; the queued ones never reach the model", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    // the first reply streams one chunk, then holds the connection open until the cancel
    fake.enqueue({ blocks: [{ type: "text", text: ["partial ", "never sent"] }], stallAfterChunks: 2 });
    const running = c.agent.request("session/prompt", { sessionId, prompt: text("running one") });
    await fake.waitForRequests(1, 30_000);
    const queued = [
      c.agent.request("session/prompt", { sessionId, prompt: text("queued two") }),
      c.agent.request("session/prompt", { sessionId, prompt: text("queued three") }),
    ];
    await c.agent.notify("session/cancel", { sessionId });
    expect(await within(running.then((r) => r.stopReason))).toBe("cancelled");
    expect(await Promise.all(queued.map((p) => within(p.then((r) => r.stopReason))))).toEqual(["cancelled", "cancelled"]);
    // the session goes on, and what was queued is gone: the next run sends only its own prompt
    fake.enqueue({ blocks: [{ type: "text", text: "fresh" }] });
    expect((await c.agent.request("session/prompt", { sessionId, prompt: text("after the cancel") })).stopReason).toBe("end_turn");
    expect(fake.requests.length).toBe(2);
    const body = JSON.stringify(fake.requests[1]!.body);
    expect(body).toContain("after the cancel");
    expect(body).not.toContain("queued two");
    expect(body).not.toContain("queued three");
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("requests read before stdin closes are answered before exit (initialize and session/new, then EOF)", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
    const proc = spawnPiped(["--mode", "acp"], dirs, { stdin: "pipe" });
    const lines = [
      { jsonrpc: "2.0", id: 1, method: "initialize", params: INIT },
      { jsonrpc: "2.0", id: 2, method: "session/new", params: { cwd: dirs.cwd, mcpServers: [] } },
    ];
    proc.stdin.write(lines.map((l) => `${JSON.stringify(l)}\n`).join(""));
    proc.stdin.end();
    const [out, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const records = out.split("\n").filter((l) => l.length > 0).map((l) => JSON.parse(l) as { id?: number; result?: Record<string, unknown> });
    const answers = records.filter((r) => r.id !== undefined);
    expect(answers.map((r) => r.id), stderr).toEqual([1, 2]);
    expect(answers[0]!.result).toMatchObject({ protocolVersion: 1, agentInfo: { name: "pion" } });
    expect(typeof answers[1]!.result!.sessionId).toBe("string");
    expect(code).toBe(0);
    await fake.stop();
  });

  test.concurrent("a prompt running when stdin closes finishes and is answered; a permission it then needs is refused, not waited on", async () => {
    const { fake, dirs, c } = setup({ args: ["--permission-mode", "ask"], permission: () => new Promise(() => {}) });
    await c.agent.request("initialize", INIT);
    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "w", name: "write", arguments: { path: "x.txt", content: "x" } }], chunkDelayMs: 200 });
    fake.enqueue({ blocks: [{ type: "text", text: "could not write" }] });
    const p = c.agent.request("session/prompt", { sessionId, prompt: text("write it") });
    await fake.waitForRequests(1, 30_000);
    c.proc.stdin.end();
    expect(await within(p.then((r) => r.stopReason), 30_000)).toBe("end_turn");
    const end = (c.updates.get(sessionId) as acp.ToolCallUpdate[]).findLast((u) => u.toolCallId === "w")!;
    expect(end.status).toBe("failed");
    expect(fake.requests.length).toBe(2);
    expect(await c.proc.exited).toBe(0);
    await fake.stop();
  });
});
