import { expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { entryCommand, tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";
import { NO_REFERENCE } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The reference's own SDK examples (examples/sdk in its installed package, run in place, never
 * copied here) as a user runs them: `bun <example>` on the reference, `pion run <example>` on
 * pion, each against the fake provider as the settings' default model. Both must succeed, and the
 * model's reply must reach the example's output in pion whenever it does in the reference.
 */
const SDK = join(process.env.PION_REFERENCE_PKG ?? "", "examples/sdk");
// 09 signs in with OAuth and 12 uses its own hard-coded model and key: both need the internet; 14 starts MCP servers from npm.
const EXAMPLES = ["01-minimal", "02-custom-model", "03-custom-prompt", "04-skills", "05-tools", "06-extensions", "07-context-files", "08-prompt-templates", "10-settings", "11-sessions", "13-session-runtime"];

async function runExample(which: "pion" | "reference", example: string, args: string[] = []): Promise<{ code: number; replied: boolean; out: string }> {
  await using fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
  for (let i = 0; i < 6; i++) fake.enqueue({ blocks: [{ type: "text", text: `REPLY-${i}` }] });
  const file = example.includes("/") ? example : join(SDK, `${example}.ts`);
  const cmd = which === "pion" ? [...entryCommand(), "run", file, ...args] : [process.execPath, file, ...args];
  const proc = Bun.spawn(cmd, {
    cwd: dirs.cwd,
    env: { ...process.env, PION_HOME: dirs.home, PI_CODING_AGENT_DIR: dirs.home, HOME: dirs.home, PI_OFFLINE: "1", ANTHROPIC_API_KEY: "" },
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited, new Response(proc.stderr).text()]);
  return { code, replied: out.includes("REPLY-"), out };
}

describeWith("the reference's SDK examples under pion run", NO_REFERENCE ?? (existsSync(SDK) ? undefined : `${SDK} does not exist`), () => {
  for (const example of EXAMPLES) {
    test.concurrent(`${example}: runs as it does on the reference`, async () => {
      const [mine, theirs] = await Promise.all([runExample("pion", example), runExample("reference", example)]);
      expect(theirs.code).toBe(0);
      expect({ code: mine.code, replied: mine.replied }).toEqual({ code: theirs.code, replied: theirs.replied });
    }, 60_000);
  }

  // The reference's RpcClient example spawns the CLI at its own `dist/cli.js` under node; pion's
  // RpcClient starts pion. (On this machine's node the reference's own run of it fails to load.)
  test.concurrent("examples/rpc-client.ts: one prompt through an RPC child, its reply printed", async () => {
    const r = await runExample("pion", join(SDK, "..", "rpc-client.ts"), ["Explain"]);
    expect(r).toEqual({ code: 0, replied: true, out: "REPLY-0\n" });
  }, 60_000);
});
