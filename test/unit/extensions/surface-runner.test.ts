import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

const REF = process.env.PION_REFERENCE_PKG;
// The reference first, before pion's loader maps the package names its own modules import.
const R: Record<string, any> | undefined = REF ? await import(join(REF, "dist/index.js")) : undefined;
const { referenceModules } = await import("../../../src/extensions/surface/modules.ts");
const P = referenceModules()["pi-coding-agent"] as Record<string, any>;
const refTest = REF ? test : test.skip;
const DIR = resolve(import.meta.dir, "../../fixtures/extensions/discoverable");
const tmp = (prefix: string) => realpathSync(mkdtempSync(join(tmpdir(), prefix)));

/** discoverAndLoadExtensions on the fixture folder, with an empty cwd and agent folder. */
async function load(m: Record<string, any>, cwd = tmp("runner-cwd-")) {
  return { cwd, loaded: await m.discoverAndLoadExtensions([DIR], cwd, tmp("runner-agent-")) };
}

/** What a caller sees of a load: the extensions' paths, sources and registrations, the failed paths. */
function shapeOf(loaded: any) {
  return {
    keys: Object.keys(loaded).sort(),
    errors: loaded.errors.map((e: { path: string }) => e.path),
    // Sorted: the reference lists a folder in the file system's order, pion by name.
    extensions: [...loaded.extensions].sort((a: any, b: any) => a.path.localeCompare(b.path)).map((e: any) => ({
      keys: Object.keys(e).sort(),
      path: e.path,
      resolvedPath: e.resolvedPath,
      sourceInfo: e.sourceInfo,
      handlers: [...e.handlers.keys()],
      tools: [...e.tools].map(([name, t]: [string, any]) => [name, Object.keys(t).sort(), t.definition.description, t.sourceInfo]),
      commands: [...e.commands].map(([name, c]: [string, any]) => [name, c.name, c.description, c.sourceInfo, typeof c.handler]),
      flags: [...e.flags.values()],
    })),
  };
}

/** The same calls on a runner of either implementation, and what each answered. */
async function drive(m: Record<string, any>, cwd = tmp("runner-cwd-")) {
  const { loaded } = await load(m, cwd);
  const sm = m.SessionManager.inMemory(cwd);
  // In one order for both (the reference's folder order is the file system's).
  const extensions = [...loaded.extensions].sort((a: any, b: any) => a.path.localeCompare(b.path));
  const runner = new m.ExtensionRunner(extensions, loaded.runtime, cwd, sm, {});
  const errors: unknown[] = [];
  runner.onError((e: { extensionPath: string; event: string; error: string }) => errors.push([e.extensionPath, e.event, e.error]));
  const out: Record<string, unknown> = {
    hasHandlers: [runner.hasHandlers("input"), runner.hasHandlers("turn_start")],
    paths: runner.getExtensionPaths().sort(),
    tools: runner.getAllRegisteredTools().map((t: any) => t.definition.name),
    definition: runner.getToolDefinition("hello")?.description,
    missing: runner.getToolDefinition("nope"),
    flags: [...runner.getFlags()],
    commands: runner.getRegisteredCommands().map((c: any) => [c.name, c.invocationName, c.description]),
    command: runner.getCommand("greet:2")?.description,
    inputs: [await runner.emitInput("~loud", undefined, "interactive"), await runner.emitInput("plain", undefined, "interactive")],
    toolCalls: [
      await runner.emitToolCall({ type: "tool_call", toolName: "bash", toolCallId: "1", input: { command: "deny" } }),
      await runner.emitToolCall({ type: "tool_call", toolName: "bash", toolCallId: "2", input: { command: "ls" } }),
    ],
    toolResult: await runner.emitToolResult({ type: "tool_result", toolName: "bash", toolCallId: "2", input: {}, content: [], isError: false }),
    before: await runner.emit({ type: "session_before_switch", reason: "new" }),
    agentStart: await runner.emit({ type: "agent_start" }),
    flagValues: [...runner.getFlagValues()],
    beforeAgentStart: [
      await runner.emitBeforeAgentStart({ prompt: "?" }, { cwd, selectedTools: ["read", "hello"], sections: { other: "<other/>" } }),
      await runner.emitBeforeAgentStart({ prompt: "replace" }, { cwd, selectedTools: ["read"] }),
    ],
  };
  runner.setFlagValue("loud", true);
  out.flagValuesAfter = [...runner.getFlagValues()];
  out.unbound = (() => {
    try {
      return runner.getActiveTools();
    } catch (err) {
      return (err as Error).message;
    }
  })();
  const ctx = runner.createContext();
  out.context = { cwd: ctx.cwd, hasUI: ctx.hasUI, mode: ctx.mode, model: ctx.model, idle: ctx.isIdle(), trusted: ctx.isProjectTrusted() };
  out.errors = errors;
  return { out, runner, sm };
}

describe("discoverAndLoadExtensions", () => {
  refTest("loads a folder as the reference does: the same extensions, sources, registrations and failed paths", async () => {
    const [p, r] = await Promise.all([load(P), load(R!)]);
    expect(shapeOf(p.loaded)).toEqual(shapeOf(r.loaded));
    expect(p.loaded.extensions.map((e: { path: string }) => e.path)).toEqual([join(DIR, "greeter.ts"), join(DIR, "sub/index.ts")]);
    expect(p.loaded.errors).toEqual([{ path: join(DIR, "not-an-extension.ts"), error: expect.stringContaining("default") }]);
  });

  test("agentDir/extensions load first; a package folder loads as one; a missing path is an error", async () => {
    const agent = tmp("runner-agent-");
    mkdirSync(join(agent, "extensions"));
    writeFileSync(join(agent, "extensions", "own.ts"), "export default (pi) => pi.registerCommand('own', { handler: async () => {} });\n");
    const loaded = await P.discoverAndLoadExtensions([join(DIR, "sub"), "missing.ts"], DIR, agent);
    expect(loaded.extensions.map((e: { path: string }) => e.path)).toEqual([join(agent, "extensions", "own.ts"), join(DIR, "sub/index.ts")]);
    expect(loaded.errors.map((e: { path: string }) => e.path)).toEqual([join(DIR, "missing.ts")]);
  });

  test("a project's own extensions load only when the folder is trusted (pion's rule)", async () => {
    const cwd = tmp("runner-project-");
    mkdirSync(join(cwd, ".pi", "extensions"), { recursive: true });
    writeFileSync(join(cwd, ".pi", "extensions", "project.ts"), "export default () => {};\n");
    const untrusted = await P.discoverAndLoadExtensions([], cwd, tmp("runner-agent-"));
    expect(untrusted.extensions).toEqual([]);
    const home = process.env.PION_HOME!;
    writeFileSync(join(home, "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    try {
      const trusted = await P.discoverAndLoadExtensions([], cwd, tmp("runner-agent-"));
      expect(trusted.extensions.map((e: { path: string }) => e.path)).toEqual([join(cwd, ".pi", "extensions", "project.ts")]);
    } finally {
      writeFileSync(join(home, "settings.json"), "{}");
    }
  });
});

describe("ExtensionRunner", () => {
  refTest("answers the reference's calls as the reference's runner does", async () => {
    const cwd = tmp("runner-cwd-");
    const [p, r] = await Promise.all([drive(P, cwd), drive(R!, cwd)]);
    expect(p.out).toEqual(r.out);
    expect(p.out.toolCalls).toEqual([{ block: true, reason: "denied by greeter" }, undefined]);
    expect(p.out.errors).toEqual([[join(DIR, "greeter.ts"), "agent_start", "greeter failed at agent_start"]]);
  });

  refTest("once bound, handlers' pi and ctx reach the host's actions, session manager and model", async () => {
    const run = async (m: Record<string, any>) => {
      const { runner, sm } = await drive(m);
      const appended: unknown[] = [];
      const actions = { appendEntry: (type: string, data: unknown) => appended.push([type, data]), getThinkingLevel: () => "high" };
      const model = { provider: "fake", id: "fake-model" };
      runner.bindCore(actions, { getModel: () => model, isIdle: () => false, isProjectTrusted: () => false, getScopedModels: () => [], getSignal: () => undefined, abort() {}, hasPendingMessages: () => true, shutdown() {}, getContextUsage: () => undefined, compact() {}, getSystemPrompt: () => "SYSTEM" });
      await runner.emit({ type: "session_start", reason: "startup" });
      return { appended, sessionId: sm.getSessionId() };
    };
    const [p, r] = await Promise.all([run(P), run(R!)]);
    const expected = (sessionId: string) => [["greeter-start", { sessionId, model: "fake-model", idle: false, trusted: false, pending: true, prompt: "SYSTEM" }]];
    expect(p.appended).toEqual(expected(p.sessionId));
    expect(r.appended).toEqual(expected(r.sessionId));
  });

  test("what pion does not run throws, naming the method", async () => {
    const { runner } = await drive(P);
    for (const method of ["emitBoundary", "emitMessageEnd", "emitCacheWarmingDecision", "reportUnhandledMcpServers", "withUIPrompt"]) {
      expect(() => runner[method]()).toThrow(`ExtensionRunner.${method} is not available in pion`);
    }
  });

  test("constructed over a runtime it did not load, it runs nothing", async () => {
    const runner = new P.ExtensionRunner([], P.createExtensionRuntime(), "/tmp", P.SessionManager.inMemory("/tmp"), {});
    expect([runner.hasHandlers("input"), runner.getAllRegisteredTools(), await runner.emitInput("x")]).toEqual([false, [], { action: "continue" }]);
  });
});
