import { expect, test } from "bun:test";
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The reference's ssh.ts and bash-spawn-hook.ts, loaded unchanged from its installed package
 * (PION_REFERENCE_PKG), driving pion's built-in tools through the tool factories.
 */
const REFERENCE = process.env.PION_REFERENCE_PKG;
const EXAMPLES = join(REFERENCE ?? "", "examples/extensions");
const MISSING = !REFERENCE
  ? "PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent) is not set"
  : existsSync(join(EXAMPLES, "ssh.ts"))
    ? undefined
    : `${EXAMPLES}/ssh.ts does not exist`;

const calls = (...list: { name: string; arguments: Record<string, unknown> }[]): FakeReply[] => [
  ...list.map((c, i): FakeReply => ({ blocks: [{ type: "toolCall", id: `c${i}`, name: c.name, arguments: c.arguments }] })),
  { blocks: [{ type: "text", text: "done" }] },
];
const toolResults = (records: Rec[]) => records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);

describeWith("the reference's ssh.ts and bash-spawn-hook.ts", MISSING, () => {
  test.concurrent("ssh.ts --ssh host:/path runs read, write, edit and bash on the remote (a fake ssh that runs there)", async () => {
    const dirs = tempDirs();
    const remote = join(dirs.cwd, "..", "remote");
    mkdirSync(remote);
    writeFileSync(join(remote, "notes.txt"), "remote line\n");
    // `ssh HOST COMMAND` stand-in: runs COMMAND here and logs which host it was for.
    const bin = join(dirs.cwd, "..", "bin");
    mkdirSync(bin);
    const log = join(dirs.cwd, "..", "ssh.log");
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\nhost="$1"; shift\necho "$host" >> ${JSON.stringify(log)}\nexec bash -c "$*"\n`);
    chmodSync(join(bin, "ssh"), 0o755);
    const fake = startFakeProvider({
      replies: calls(
        { name: "read", arguments: { path: "notes.txt" } },
        { name: "write", arguments: { path: "made.txt", content: "written remotely" } },
        { name: "edit", arguments: { path: "notes.txt", edits: [{ oldText: "remote", newText: "edited" }] } },
        { name: "bash", arguments: { command: "pwd; cat made.txt notes.txt" } },
      ),
    });
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({
      ...dirs,
      env: { PATH: `${bin}:${process.env.PATH}` },
      args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", join(EXAMPLES, "ssh.ts"), "--ssh", `devbox:${remote}`],
    });
    expect(await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify")).toMatchObject({ message: `SSH mode: devbox:${remote}` });
    await p.request({ type: "prompt", message: "work remotely" });
    await p.waitFor("agent_settled");
    const results = toolResults(p.records);
    expect(results.map((r) => [r.toolName, r.isError, r.content[0].text])).toEqual([
      ["read", false, "remote line"],
      ["write", false, "Successfully wrote 16 bytes to made.txt"],
      ["edit", false, "Successfully replaced 1 block of text in notes.txt."],
      ["bash", false, `${remote}\nwritten remotelyedited line\n`],
    ]);
    expect(results[2]!.details.patch).toContain("-remote line\n+edited line");
    expect(results[2]!.details.diff).toContain("-1 remote line\n+1 edited line");
    // Everything went through ssh, to the remote folder; nothing happened locally.
    expect(readFileSync(join(remote, "made.txt"), "utf8")).toBe("written remotely");
    expect(existsSync(join(dirs.cwd, "made.txt"))).toBe(false);
    expect(new Set(readFileSync(log, "utf8").trim().split("\n"))).toEqual(new Set(["devbox"]));
    // The system prompt names the remote folder instead of the local one.
    const system = (fake.requests[0]!.body as { system: { text: string }[] }).system[0]!.text;
    expect(system).toContain(`Current working directory: ${remote} (via SSH: devbox)`);
    // The host's own bash command goes over ssh too (its user_bash handler), as in the reference.
    const host = await p.request({ type: "bash", command: "pwd; cat made.txt" });
    expect(host).toMatchObject({ success: true, data: { output: `${remote}\nwritten remotely`, exitCode: 0 } });
    expect(await p.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("bash-spawn-hook.ts sources ~/.profile and adds PI_SPAWN_HOOK before each command", async () => {
    const dirs = tempDirs();
    const userHome = join(dirs.cwd, "..", "user-home");
    mkdirSync(userHome);
    writeFileSync(join(userHome, ".profile"), "export FROM_PROFILE=sourced\n");
    const fake = startFakeProvider({ replies: calls({ name: "bash", arguments: { command: 'echo "$PI_SPAWN_HOOK $FROM_PROFILE ${ANTHROPIC_API_KEY:-no-key}"; pwd' } }) });
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({
      ...dirs,
      env: { HOME: userHome, ANTHROPIC_API_KEY: "sk-ant-not-for-commands-123" },
      args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", join(EXAMPLES, "bash-spawn-hook.ts")],
    });
    await p.request({ type: "prompt", message: "run it" });
    await p.waitFor("agent_settled");
    expect(toolResults(p.records).map((r) => [r.toolName, r.isError, r.content[0].text])).toEqual([["bash", false, `1 sourced no-key\n${dirs.cwd}\n`]]);
    // The tool the model saw is the built-in's.
    const tools = (fake.requests[0]!.body as { tools: { name: string; description: string }[] }).tools;
    expect(tools.filter((t) => t.name === "bash")).toHaveLength(1);
    expect(await p.close()).toBe(0);
    await fake.stop();
  });
});
