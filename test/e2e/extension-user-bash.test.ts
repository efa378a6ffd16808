import { expect, test } from "bun:test";
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";

const USER_BASH = resolve(import.meta.dir, "../fixtures/extensions/user-bash.ts");

test("user_bash: the host's bash command runs through an extension's operations, is answered by it, or fails with it", async () => {
  const dirs = tempDirs();
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--no-session", "-e", USER_BASH] });
  const cwd = realpathSync(dirs.cwd);

  const remote = await p.request({ id: "r1", type: "bash", command: "remote: echo hi; exit 2" });
  expect(remote).toMatchObject({ success: true, data: { output: `via operations in ${cwd}\nhi\n`, exitCode: 2, cancelled: false, truncated: false } });
  // Its output streamed as the local shell's does.
  expect(p.records.filter((x) => x.type === "bash_execution_update" && x.id === "r1").map((x) => x.delta).join("")).toBe(`via operations in ${cwd}\nhi\n`);

  const canned = await p.request({ type: "bash", command: "canned: rm -rf /" });
  expect(canned).toMatchObject({ success: true, data: { output: `canned for ${dirs.cwd}`, exitCode: 7, cancelled: false, truncated: false } });

  const broken = await p.request({ type: "bash", command: "broken: ls" });
  expect(broken.success).toBe(false);
  expect(broken.error).toContain("failed while handling this bash command");
  const error = p.records.find((x) => x.type === "extension_error");
  expect(error).toMatchObject({ event: "user_bash", error: expect.stringContaining("the remote is down") });

  const local = await p.request({ type: "bash", command: "echo plain" });
  expect(local).toMatchObject({ success: true, data: { output: "plain\n", exitCode: 0 } });

  // Every command that ran or was answered is in the session, in order; the failed one is not.
  const stored = (await p.request({ type: "get_messages" })).data.messages.filter((m: Rec) => m.role === "bashExecution");
  expect(stored.map((m: Rec) => [m.command, m.exitCode])).toEqual([
    ["remote: echo hi; exit 2", 2],
    ["canned: rm -rf /", 7],
    ["echo plain", 0],
  ]);
  expect(await p.close()).toBe(0);
});
