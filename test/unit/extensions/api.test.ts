import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { fakePort, fixture } from "./fake-port.ts";

async function load(opts: Parameters<typeof fakePort>[0] = {}) {
  const fake = fakePort(opts);
  const runner = await loadExtensions([fixture("ui.ts"), fixture("tools.ts")], fake.port);
  return { ...fake, runner };
}

describe("pi API reaching the session port", () => {
  test("sendMessage, sendUserMessage, names, labels, ctx fields, abort and shutdown", async () => {
    const { runner, calls, entry } = await load({ idle: false, pending: true });
    await runner.runCommand("/send alpha");
    expect(calls.messages).toEqual([
      { msg: { customType: "ui-fixture", content: "hello", display: true, details: { a: 1 } }, opts: { triggerTurn: true, deliverAs: "followUp" } },
    ]);
    expect(calls.userMessages).toEqual([
      { text: "what is 2+2?", opts: { deliverAs: "steer" } },
      { text: "first\nsecond", opts: undefined },
    ]);
    expect(calls.labels).toEqual([
      { entryId: "abcd1234", label: "checkpoint" },
      { entryId: "abcd1234", label: undefined },
    ]);
    expect(entry("ctx")).toEqual([
      {
        name: "named alpha",
        mode: "rpc",
        hasUI: true,
        cwd: tmpdir(),
        model: expect.objectContaining({ provider: "anthropic", id: "claude-test", api: "anthropic-messages", contextWindow: 200000 }),
        idle: false,
        pending: true,
        commands: ["dialog", "fire", "send", "exec", "crash", "bus", "add-echo"],
      },
    ]);
    expect([calls.aborts, calls.shutdowns]).toEqual([1, 1]);
  });

  test("pi.events is shared between extensions of one runner", async () => {
    const { runner, entry } = await load();
    await runner.runCommand("/bus hi");
    expect(entry("bus")).toEqual([{ args: "hi" }]);
  });

  test("getCommands answers the port's whole list (get_commands) when the port offers it", async () => {
    const fake = fakePort();
    fake.port.commands = () => [
      { name: "send", source: "extension", sourceInfo: { path: "/p/ui.ts", source: "local", scope: "user", origin: "top-level" } },
      { name: "review", source: "prompt", sourceInfo: { path: "/p/review.md", source: "local", scope: "user", origin: "top-level" } },
    ];
    const runner = await loadExtensions([fixture("ui.ts")], fake.port);
    await runner.runCommand("/send x");
    expect((fake.entry("ctx")[0] as { commands: string[] }).commands).toEqual(["send", "review"]);
  });
});

describe("pi.exec", () => {
  test("captures stdout, stderr and the exit code without a shell", async () => {
    const { runner, entry } = await load();
    await runner.runCommand("/exec");
    expect(entry("exec")).toEqual([{ stdout: "out\n", stderr: "err\n", code: 3, killed: false }]);
  });

  test("timeout kills the process: killed, code 128 + SIGTERM", async () => {
    const { runner, entry } = await load();
    await runner.runCommand("/exec timeout");
    expect(entry("exec")).toEqual([{ stdout: "", stderr: "", code: 143, killed: true }]);
  });

  test("a missing program is a result with code 127, not an exception", async () => {
    const { runner, entry, errors } = await load();
    await runner.runCommand("/exec missing");
    expect(entry("exec")).toEqual([{ code: 127, killed: false }]);
    expect(errors()).toEqual([]);
  });
});

describe("pi.registerFlag / pi.getFlag", () => {
  test("the runner lists registered flags; values reach only the extension that declared them", async () => {
    const { port } = fakePort();
    const runner = await loadExtensions([fixture("flags.ts"), fixture("tools.ts")], port);
    expect(runner.registeredFlags()).toEqual([
      { name: "plan", type: "boolean", description: "Start in plan mode", default: false, extensionPath: fixture("flags.ts") },
      { name: "target", type: "string", description: "Where to deploy", default: "staging", extensionPath: fixture("flags.ts") },
    ]);
    runner.setFlagValues({ plan: true, target: "prod" });
    await runner.notify("session_start", { reason: "startup" });
    const named = JSON.parse(port.getSessionName()!);
    expect(named).toEqual({ inFactory: { plan: false, target: "staging" }, atStart: { plan: true, target: "prod", unregistered: null } });
  });

  test("bad registrations throw in the factory, which then fails to load", async () => {
    const { port, frames } = fakePort();
    const dir = mkdtempSync(join(tmpdir(), "pion-flags-"));
    const cases = {
      "name.ts": `export default (pi) => pi.registerFlag("--x", { type: "boolean" });`,
      "type.ts": `export default (pi) => pi.registerFlag("x", { type: "number" });`,
      "default.ts": `export default (pi) => pi.registerFlag("x", { type: "string", default: 3 });`,
    };
    for (const [file, text] of Object.entries(cases)) writeFileSync(join(dir, file), text);
    const runner = await loadExtensions(Object.keys(cases).map((f) => join(dir, f)), port);
    expect(runner.registeredFlags()).toEqual([]);
    expect(frames.map((f) => String(f.error))).toEqual([
      expect.stringContaining('invalid flag name "--x"'),
      expect.stringContaining('type must be "boolean" or "string"'),
      expect.stringContaining("the default must be a string"),
    ]);
  });
});

describe("pi.registerVirtualModel", () => {
  function write(source: string): string {
    const file = join(mkdtempSync(join(tmpdir(), "pion-vm-")), "vm.ts");
    writeFileSync(file, source);
    return file;
  }

  test("the latest registration of a provider/id wins; route gets the request and a ctx with modelRegistry", async () => {
    const first = write(`export default (pi) => pi.registerVirtualModel({ provider: "r", id: "a", route: () => "first" });\n`);
    const second = write(`export default (pi) => {
  pi.registerVirtualModel({ provider: "r", id: "a", name: "A", route: (req, ctx) => ({ reason: req.reason, found: ctx.modelRegistry.find("anthropic", "x")?.id ?? null, n: ctx.modelRegistry.getAll().length }) });
  pi.registerVirtualModel({ provider: "r", id: "gone", route: () => null });
  pi.unregisterVirtualModel("r", "gone");
};\n`);
    const { port, errors } = fakePort();
    const runner = await loadExtensions([first, second], port);
    expect(errors()).toEqual([]);
    expect(runner.virtualModels().map((d) => [d.provider, d.id, d.name])).toEqual([["r", "a", "A"]]);
    expect(await runner.routeVirtual("r", "a", { reason: "user" })).toEqual({ reason: "user", found: null, n: 0 });
    await expect(runner.routeVirtual("r", "gone", {})).rejects.toThrow("Virtual model r/gone is not registered.");
  });

  test("a registration without provider, id or route, or with unknown thinking levels, fails the factory", async () => {
    const bad = [
      `pi.registerVirtualModel({ id: "a", route() {} })`,
      `pi.registerVirtualModel({ provider: "r", id: "a" })`,
      `pi.registerVirtualModel({ provider: "r", id: "a", thinkingLevels: ["turbo"], route() {} })`,
      `pi.registerVirtualModel({ provider: "r", id: "a", contextWindow: "big", route() {} })`,
    ].map((call) => write(`export default (pi) => { ${call}; };\n`));
    const { port, errors } = fakePort();
    const runner = await loadExtensions(bad, port);
    expect(runner.loaded).toEqual([]);
    expect(errors().map((e) => String(e.error).replace(/^Extension factory failed: /, ""))).toEqual([
      "pi.registerVirtualModel: a virtual model needs a provider and an id",
      'pi.registerVirtualModel("r/a"): route must be a function',
      'pi.registerVirtualModel("r/a"): thinkingLevels must list levels of off, minimal, low, medium, high, xhigh, max',
      'pi.registerVirtualModel("r/a"): contextWindow must be a number of tokens',
    ]);
  });
});
