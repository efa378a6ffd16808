import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync, readdirSync, readFileSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { entryCommand, Pion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * `pion run <program>`: a program written for the reference's SDK runs on pion's modules, and the
 * two whole-program entry points work in it: `runRpcMode(runtime)` serves the runtime's session
 * (its extension factories, custom tools, model and session file) with pion's RPC mode, and
 * `main(args, { extensionFactories })` is pion's command line with those extensions.
 */
const PROGRAMS = join(import.meta.dir, "../fixtures/programs");
const RPC_PROGRAM = join(PROGRAMS, "rpc-runtime.ts");
const CLI_PROGRAM = join(PROGRAMS, "cli-main.ts");

function setup(fake: FakeProvider): { home: string; cwd: string } {
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
  return dirs;
}

/** The session files in the sessions folder of `cwd` (pion's, or the reference's agent dir). */
function sessionFiles(home: string, cwd: string): string[] {
  const root = join(home, "sessions");
  if (!existsSync(root)) return [];
  return readdirSync(root)
    .filter((d) => d.startsWith("--") && d.includes(cwd.split("/").at(-1)!))
    .flatMap((d) => readdirSync(join(root, d)).map((f) => join(root, d, f)));
}

/** What the program's session does: its commands, the greeting, the custom tool's result, the tools the model was offered. */
async function drive(agent: RpcAgent, fake: FakeProvider): Promise<Rec> {
  const state = (await agent.request({ type: "get_state" })) as Rec;
  const commands = ((await agent.request({ type: "get_commands" })) as { data: { commands: Rec[] } }).data.commands.filter((c) => c.source === "extension");
  let from = agent.records.length;
  await agent.request({ type: "prompt", message: "/hello world" });
  const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  from = agent.records.length;
  await agent.request({ type: "prompt", message: "stamp it" });
  const end = await agent.waitFor("tool_execution_end", from);
  await agent.waitFor("agent_settled", from);
  return {
    model: (state.data as { model: Rec }).model.id,
    commands: commands.map((c) => ({ name: c.name, description: c.description, sourceInfo: c.sourceInfo })),
    note: note.message,
    result: (end.result as Rec).content,
    tools: fake.requests.map((r) => ((r.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name)),
  };
}

function script(fake: FakeProvider): void {
  fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "stamp", arguments: { text: "x" } }] });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
}

const EXPECTED = {
  model: "fake-model",
  commands: [{ name: "hello", description: "Greets", sourceInfo: { path: "<inline:1>", source: "inline", scope: "temporary", origin: "top-level" } }],
  note: "hello world from a b",
  result: [{ type: "text", text: "stamped: x" }],
  tools: [
    ["read", "bash", "edit", "write", "stamp"],
    ["read", "bash", "edit", "write", "stamp"],
  ],
};

describe("pion run: runRpcMode(runtime)", () => {
  test.concurrent("serves the runtime's session: its extension factory, custom tool, model and argv; the conversation goes to the runtime's session file; exit 0 at EOF", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    script(fake);
    const p = new Pion({ ...dirs, args: ["run", RPC_PROGRAM, "a", "b"] });
    expect(await drive(p, fake)).toEqual(EXPECTED);
    expect(await p.close()).toBe(0);
    const files = sessionFiles(dirs.home, dirs.cwd);
    expect(files).toHaveLength(1);
    const lines = readFileSync(files[0]!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as Rec);
    expect(lines[0]).toMatchObject({ type: "session", version: 3, cwd: dirs.cwd });
    expect(lines.map((l) => (l.message as Rec | undefined)?.role ?? l.type)).toEqual(["session", "model_change", "thinking_level_change", "user", "assistant", "toolResult", "assistant"]);
    expect(p.wireIssues).toEqual([]);
  });

  test.concurrent("a runtime on SessionManager.inMemory writes no session file", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    script(fake);
    const p = new Pion({ ...dirs, args: ["run", RPC_PROGRAM, "a", "b"], env: { PROGRAM_IN_MEMORY: "1" } });
    expect((await drive(p, fake)).result).toEqual(EXPECTED.result);
    expect(await p.close()).toBe(0);
    expect(sessionFiles(dirs.home, dirs.cwd)).toEqual([]);
  });
});

describeWith("pion run: runRpcMode(runtime), pion against the reference running the same program", NO_REFERENCE, () => {
  test("the same commands, greeting, tool result, offered tools and one session file", async () => {
    const run = async (which: "pion" | "reference") => {
      await using fake = startFakeProvider();
      const dirs = setup(fake);
      script(fake);
      let agent: RpcAgent;
      if (which === "pion") agent = new Pion({ ...dirs, args: ["run", RPC_PROGRAM, "a", "b"] });
      else agent = referenceRpc(["a", "b"], dirs, {}, onReference(RPC_PROGRAM));
      const seen = await drive(agent, fake);
      expect(await agent.close()).toBe(0);
      return { ...seen, files: sessionFiles(dirs.home, dirs.cwd).length };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(theirs).toEqual({ ...EXPECTED, files: 1 });
    expect(mine).toEqual(theirs);
  }, 60_000);
});

/** `program` copied into a folder whose node_modules is the reference's, so `bun` runs it on the reference's package. */
function onReference(program: string): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-program-"));
  copyFileSync(program, join(dir, "program.ts"));
  symlinkSync(dirname(dirname(process.env.PION_REFERENCE_PKG!)), join(dir, "node_modules"));
  return join(dir, "program.ts");
}

describeWith("pion run: main(args, { extensionFactories }), pion against the reference running the same program", NO_REFERENCE, () => {
  test("the same commands in the same order, and the factory's command answers the same", async () => {
    const run = async (which: "pion" | "reference") => {
      await using fake = startFakeProvider();
      const dirs = setup(fake);
      const args = ["--mode", "rpc", "--no-session"];
      const agent: RpcAgent = which === "pion" ? new Pion({ ...dirs, args: ["run", CLI_PROGRAM, ...args] }) : referenceRpc(args, dirs, {}, onReference(CLI_PROGRAM));
      const commands = ((await agent.request({ type: "get_commands" })) as { data: { commands: Rec[] } }).data.commands.map((c) => [c.name, c.source, (c.sourceInfo as Rec).path]);
      await agent.request({ type: "prompt", message: "/brand" });
      const note = (await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify")).message;
      expect(await agent.close()).toBe(0);
      return { commands, note };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
  }, 60_000);
});

describe("pion run: main(args, { extensionFactories })", () => {
  test.concurrent("is pion's command line with the program's extensions: RPC mode lists and runs its command", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    const p = new Pion({ ...dirs, args: ["run", CLI_PROGRAM, "--mode", "rpc", "--no-session"] });
    const commands = ((await p.request({ type: "get_commands" })) as { data: { commands: Rec[] } }).data.commands;
    // The CLI's built-in commands too, before the factories' as the reference's CLI lists them.
    expect(commands.filter((c) => c.source === "extension").map((c) => [c.name, c.path])).toEqual([["llama", "builtin:llama.cpp"], ["mcp", "builtin:mcp"], ["brand", "<inline:1>"]]);
    await p.request({ type: "prompt", message: "/brand" });
    expect((await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify")).message).toBe("acme-agent");
    expect(await p.close()).toBe(0);
  });

  test.concurrent("-p answers on stdout; --version prints pion's; exit codes are the command line's", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    fake.enqueue({ blocks: [{ type: "text", text: "reviewed" }] });
    const run = async (args: string[]) => {
      const proc = Bun.spawn([...entryCommand(), "run", CLI_PROGRAM, ...args], { cwd: dirs.cwd, env: { ...process.env, PION_HOME: dirs.home }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      return { out, err, code: await proc.exited };
    };
    expect(await run(["-p", "review this"])).toMatchObject({ out: "reviewed\n", code: 0 });
    expect((fake.requests[0]!.body as { messages: Rec[] }).messages.at(-1)).toMatchObject({ role: "user" });
    const version = await run(["--version"]);
    expect(version).toMatchObject({ code: 0 });
    expect(version.out).toMatch(/^\d+\.\d+\.\d+\S* \S+\n$/);
    expect(await run(["--mode", "nonsense"])).toMatchObject({ out: "", code: 2 });
  });
});

describe("pion run: the command line", () => {
  test.concurrent("a program file that does not exist is a usage error; a prompt that starts with `run` is still a prompt", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    // Each word is a prompt of its own, as without `run`.
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ran them" }] });
    const run = async (args: string[]) => {
      const proc = Bun.spawn([...entryCommand(), ...args], { cwd: dirs.cwd, env: { ...process.env, PION_HOME: dirs.home }, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
      const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
      return { out, err, code: await proc.exited };
    };
    const missing = await run(["run", "nowhere.ts"]);
    expect(missing).toMatchObject({ out: "", code: 2 });
    expect(missing.err).toContain(`pion run: no program at ${join(dirs.cwd, "nowhere.ts")}`);
    expect(fake.requests).toHaveLength(0);
    expect(await run(["run", "the tests"])).toMatchObject({ out: "ran them\n", code: 0 });
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("the tests");
  });

  test.concurrent("a program's own dependencies load from its node_modules (in the binary too); its stdout, argv and exit code are its own", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-program-"));
    mkdirSync(join(dir, "node_modules/greet-lib/lib"), { recursive: true });
    writeFileSync(join(dir, "node_modules/greet-lib/package.json"), JSON.stringify({ name: "greet-lib", type: "module", exports: { ".": "./lib/index.js" } }));
    writeFileSync(join(dir, "node_modules/greet-lib/lib/index.js"), "export const greet = (who) => `hi ${who}`;\n");
    writeFileSync(join(dir, "program.mjs"), `import { greet } from "greet-lib";\nimport { VERSION } from "@earendil-works/pi-coding-agent";\nconsole.log(greet(process.argv.slice(2).join("+")), typeof VERSION);\nprocess.exitCode = 3;\n`);
    const proc = Bun.spawn([...entryCommand(), "run", join(dir, "program.mjs"), "x", "y"], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const [out, err] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text()]);
    expect({ out, err, code: await proc.exited }).toEqual({ out: "hi x+y string\n", err: "", code: 3 });
  });

  test.concurrent("runRpcMode given something other than a runtime is a clear error the program can catch", async () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-program-"));
    const program = join(dir, "bad.ts");
    writeFileSync(program, `import { runRpcMode } from "@earendil-works/pi-coding-agent";\ntry { await runRpcMode({}); } catch (err) { console.log(err.message); }\n`);
    const proc = Bun.spawn([...entryCommand(), "run", program], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect({ out, code: await proc.exited }).toEqual({ out: "runRpcMode(runtime) takes an AgentSessionRuntime (from createAgentSessionRuntime)\n", code: 0 });
  });

  test.concurrent("an extension inside a program's CLI cannot take stdio again: main refuses a second time", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    const dir = mkdtempSync(join(tmpdir(), "pion-program-"));
    const program = join(dir, "twice.ts");
    await Bun.write(
      program,
      `import { main } from "@earendil-works/pi-coding-agent";
await main(["--mode", "rpc", "--no-session"], { extensionFactories: [(pi) => pi.registerCommand("again", { handler: async (_a, ctx) => {
  try { await main(["--version"]); ctx.ui.notify("returned", "info"); } catch (err) { ctx.ui.notify(err.message, "info"); }
} })] });
`,
    );
    const p = new Pion({ ...dirs, args: ["run", program] });
    await p.request({ type: "prompt", message: "/again" });
    expect((await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify")).message).toBe("main cannot run here: the process's stdin and stdout are already served by main");
    expect(await p.close()).toBe(0);
  });
});
