/**
 * A session change rebinds extensions as in the reference: the old instance sees session_shutdown,
 * every extension's factory runs again on the module already loaded (module-level state persists,
 * a new instance registers anew), then the new instance sees session_start and resources_discover
 * (reason "startup"). Flag values persist; a setActiveTools choice and the old instance's pi.events
 * subscriptions do not. A cancelled switch keeps the instance. The fixture logs each step to a file.
 */
import { expect, test } from "bun:test";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

const REBIND = resolve(import.meta.dir, "../fixtures/extensions/rebind.ts");
const TOOLS = resolve(import.meta.dir, "../fixtures/extensions/tools.ts");

/** The log's lines since the last call, instance ids replaced by letters in the order their factories ran. */
function reader(file: string) {
  const letters = new Map<string, string>();
  let seen = 0;
  return (): Rec[] => {
    const lines = existsSync(file) ? readFileSync(file, "utf8").split("\n").filter(Boolean) : [];
    const fresh = lines.slice(seen).map((l) => JSON.parse(l) as Rec);
    seen = lines.length;
    for (const r of fresh) {
      if (r.step === "factory") letters.set(r.id, String.fromCharCode(65 + letters.size));
      for (const key of ["id", "from"]) if (key in r) r[key] = letters.get(r[key]) ?? `unknown ${r[key]}`;
    }
    return fresh;
  };
}

const ALL_TOOLS = ["read", "bash", "edit", "write"];

function start(env: Record<string, string>, extensions: string[]) {
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hello" }] }] });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const logFile = join(dirname(dirs.home), "rebind.log");
  const args = ["--mode", "rpc", "--model", "fake/fake-model", ...extensions.flatMap((e) => ["-e", e]), "--rebind-flag", "kept"];
  const p = new Pion({ ...dirs, env: { REBIND_LOG: logFile, ...env }, args });
  const commands = async () => ((await p.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => c.name).filter((n) => n.startsWith("gen-") || n === "add-echo");
  return { p, fake, logFile, steps: reader(logFile), commands };
}

test("new_session, switch_session, fork and ctx.newSession run the factory again; a cancelled switch does not", async () => {
  const { p, fake, logFile, steps, commands } = start({}, [REBIND]);
  const ok = async (cmd: Rec) => {
    const r = await p.request(cmd);
    expect(r.success).toBe(true);
    return r.data;
  };
  const started = (id: string, reason: string, previous = true) => [
    { step: "session_start", id, reason, previous, flag: "kept", active: ALL_TOOLS },
    { step: "resources_discover", id, reason: "startup" },
  ];

  expect(await commands()).toEqual(["gen-1"]);
  expect(steps()).toEqual([{ step: "factory", id: "A", run: 1 }, ...started("A", "startup", false)]);
  await ok({ type: "prompt", message: "hi" });
  await p.waitFor("agent_settled");
  const firstFile = (await ok({ type: "get_state" })).sessionFile as string;
  // The choice belongs to the instance that made it: the new one starts from every tool again.
  await ok({ type: "prompt", message: "/narrow" });

  expect(await ok({ type: "new_session" })).toEqual({ cancelled: false });
  expect(steps()).toEqual([
    { step: "session_before_switch", id: "A", reason: "new" },
    { step: "session_shutdown", id: "A", reason: "new" },
    { step: "factory", id: "B", run: 2 },
    ...started("B", "new"),
  ]);
  expect(await commands()).toEqual(["gen-2"]);
  // Only the new instance still listens on pi.events.
  await ok({ type: "prompt", message: "/ping" });
  expect(steps()).toEqual([{ step: "ping", id: "B", from: "B" }]);

  expect(await ok({ type: "switch_session", sessionPath: firstFile })).toEqual({ cancelled: false });
  expect(steps()).toEqual([
    { step: "session_before_switch", id: "B", reason: "resume" },
    { step: "session_shutdown", id: "B", reason: "resume" },
    { step: "factory", id: "C", run: 3 },
    ...started("C", "resume"),
  ]);

  const [first] = (await ok({ type: "get_fork_messages" })).messages as Rec[];
  expect(await ok({ type: "fork", entryId: first!.entryId })).toEqual({ text: "hi", cancelled: false });
  expect(steps()).toEqual([{ step: "session_shutdown", id: "C", reason: "fork" }, { step: "factory", id: "D", run: 4 }, ...started("D", "fork")]);
  expect(await commands()).toEqual(["gen-4"]);

  writeFileSync(`${logFile}.cancel`, "");
  expect(await ok({ type: "new_session" })).toEqual({ cancelled: true });
  expect(steps()).toEqual([{ step: "session_before_switch", id: "D", reason: "new" }]);
  expect(await commands()).toEqual(["gen-4"]);
  rmSync(`${logFile}.cancel`);

  // From the extension's own command: the instance that asked is shut down and replaced all the same.
  await ok({ type: "prompt", message: "/new-from-ext" });
  expect(steps()).toEqual([
    { step: "session_before_switch", id: "D", reason: "new" },
    { step: "session_shutdown", id: "D", reason: "new" },
    { step: "factory", id: "E", run: 5 },
    ...started("E", "new"),
    { step: "newSession returned", id: "D", cancelled: false },
  ]);
  expect(await commands()).toEqual(["gen-5"]);
  expect(await p.close()).toBe(0);
  expect(steps()).toEqual([{ step: "session_shutdown", id: "E", reason: "quit" }]);
  await fake.stop();
});

test("a factory that throws on a rebind is reported; the other extensions load, and the next change loads it again", async () => {
  const { p, fake, steps, commands } = start({ REBIND_THROW_AT: "2" }, [REBIND, TOOLS]);
  expect(await commands()).toEqual(["gen-1", "add-echo"]);
  steps();
  const from = p.records.length;
  expect((await p.request({ type: "new_session" })).data).toEqual({ cancelled: false });
  expect(await p.waitFor((r) => r.type === "extension_error", from)).toEqual({
    type: "extension_error",
    extensionPath: REBIND,
    event: "load",
    error: "Extension factory failed: factory run 2 refused",
  });
  expect(await commands()).toEqual(["add-echo"]);
  expect(steps().map((r) => [r.step, r.id])).toEqual([["session_before_switch", "A"], ["session_shutdown", "A"], ["factory", "B"]]);

  expect((await p.request({ type: "new_session" })).data).toEqual({ cancelled: false });
  expect(await commands()).toEqual(["gen-3", "add-echo"]);
  expect(steps().map((r) => [r.step, r.id])).toEqual([["factory", "C"], ["session_start", "C"], ["resources_discover", "C"]]);
  expect(await p.close()).toBe(0);
  await fake.stop();
});

/** Every session change in turn, a cancelled one and one from the extension; what the fixture logged, the commands and the answers. */
async function rebindScenario(agent: RpcAgent, logFile: string) {
  const steps = reader(logFile);
  const trail: unknown[] = [];
  const data = async (cmd: Rec) => (await agent.request(cmd)).data;
  const mark = async (label: string, cmd: Rec) => {
    const answer = await data(cmd);
    const commands = ((await data({ type: "get_commands" })).commands as Rec[]).map((c) => c.name).filter((n) => n.startsWith("gen-"));
    trail.push({ label, answer: cmd.type === "prompt" ? undefined : answer, commands, steps: steps() });
  };
  const from = agent.records.length;
  await data({ type: "prompt", message: "hi" });
  await agent.waitFor("agent_end", from);
  const file = (await data({ type: "get_state" })).sessionFile as string;
  trail.push({ label: "start", steps: steps() });
  await mark("narrow", { type: "prompt", message: "/narrow" });
  await mark("new", { type: "new_session" });
  await mark("ping", { type: "prompt", message: "/ping" });
  await mark("resume", { type: "switch_session", sessionPath: file });
  const [first] = (await data({ type: "get_fork_messages" })).messages as Rec[];
  await mark("fork", { type: "fork", entryId: first!.entryId });
  writeFileSync(`${logFile}.cancel`, "");
  await mark("cancelled", { type: "new_session" });
  rmSync(`${logFile}.cancel`);
  await mark("from the extension", { type: "prompt", message: "/new-from-ext" });
  expect(await agent.close()).toBe(0);
  trail.push({ label: "quit", steps: steps() });
  return trail;
}

describeWith("rebinding, pion against the reference", NO_REFERENCE, () => {
  test("the same steps, instances, commands and answers", async () => {
    const run = async (which: "pion" | "reference") => {
      const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hello" }] }] });
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      const logFile = join(dirname(dirs.home), "rebind.log");
      const extension = ["-e", REBIND, "--rebind-flag", "kept"];
      const agent =
        which === "pion"
          ? new Pion({ ...dirs, env: { REBIND_LOG: logFile }, args: ["--mode", "rpc", "--model", "fake/fake-model", ...extension] })
          : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model", ...extension], dirs, { REBIND_LOG: logFile });
      const trail = await rebindScenario(agent, logFile);
      await fake.stop();
      return trail;
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
  });
});
