// ACP mode: a session's `additionalDirectories` are the writable roots of pion's workspace-write
// sandbox beside the cwd; session/list reports them for the sessions open in this process.
import { expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import type * as acp from "@agentclientprotocol/sdk";
import { setupAcp, rpcErrorOf } from "../support/acp-client.ts";
import type { FakeBlock } from "../support/fake-provider.ts";
import { describeWith } from "../support/requires.ts";

setDefaultTimeout(90_000);

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };
const text = (t: string): acp.ContentBlock[] => [{ type: "text", text: t }];
const bash = (id: string, command: string): FakeBlock => ({ type: "toolCall", id, name: "bash", arguments: { command } });
const missing = existsSync("/usr/bin/bwrap") || Bun.which("bwrap") ? undefined : "bubblewrap (apt install bubblewrap)";
// Outside /tmp, which is private inside the sandbox.
const OUTSIDE_TMP = "/var/tmp";

describeWith("ACP additionalDirectories", missing, () => {
  test.concurrent("with --sandbox workspace-write a command may write in the session's additional directories and nowhere else outside the cwd", async () => {
    const { fake, dirs, c } = setupAcp({ args: ["--sandbox", "workspace-write"] });
    const extra = mkdtempSync(join(OUTSIDE_TMP, "pion-acp-extra-"));
    const other = mkdtempSync(join(OUTSIDE_TMP, "pion-acp-other-"));
    const init = await c.agent.request("initialize", INIT);
    expect(init.agentCapabilities!.sessionCapabilities!.additionalDirectories).toEqual({});
    const rel = await rpcErrorOf(c.agent.request("session/new", { cwd: dirs.cwd, additionalDirectories: ["relative/dir"], mcpServers: [] }));
    expect([rel.code, rel.message]).toEqual([-32602, expect.stringContaining("additionalDirectories must be absolute paths: relative/dir")]);

    const { sessionId } = await c.agent.request("session/new", { cwd: dirs.cwd, additionalDirectories: [extra], mcpServers: [] });
    fake.enqueue({ blocks: [bash("x", `echo one > ${extra}/a.txt`), bash("o", `echo one > ${other}/a.txt`), bash("c", "echo one > in-cwd.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("write") });
    expect(readFileSync(join(extra, "a.txt"), "utf8")).toBe("one\n");
    expect(existsSync(join(other, "a.txt"))).toBe(false);
    expect(readFileSync(join(dirs.cwd, "in-cwd.txt"), "utf8")).toBe("one\n");
    const listed = (await c.agent.request("session/list", { cwd: dirs.cwd })).sessions.find((s) => s.sessionId === sessionId)!;
    expect(listed.additionalDirectories).toEqual([extra]);

    // session/resume naming another list: the session is reopened with it (the list is the whole list)
    await c.agent.request("session/resume", { sessionId, cwd: dirs.cwd, additionalDirectories: [other] });
    fake.enqueue({ blocks: [bash("x2", `echo two > ${extra}/b.txt`), bash("o2", `echo two > ${other}/b.txt`)] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await c.agent.request("session/prompt", { sessionId, prompt: text("write again") });
    expect(existsSync(join(extra, "b.txt"))).toBe(false);
    expect(readFileSync(join(other, "b.txt"), "utf8")).toBe("two\n");
    const again = (await c.agent.request("session/list", { cwd: dirs.cwd })).sessions.find((s) => s.sessionId === sessionId)!;
    expect(again.additionalDirectories).toEqual([other]);
    expect(await c.close()).toBe(0);
    await fake.stop();
    for (const d of [extra, other]) rmSync(d, { recursive: true, force: true });
  });
});
