/**
 * `ctx.reload()` as in the reference: session_shutdown (reason "reload"), settings.json read again,
 * every extension it lists evaluated again from disk and its factory run again (what it
 * registered before is gone; one no longer listed stays shut down), the skills and prompts read
 * again, queue modes, retry and compaction settings and new defaultTools applied, then
 * session_start and resources_discover (reason "reload"); refused while a prompt runs. At
 * start-up resources_discover follows session_start too. Compared with the reference where
 * PION_REFERENCE_PKG is set.
 */
import { expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { GATED_COMMAND, Pion, releaseGate, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";
import { settingsChange, write } from "../support/settings-change.ts";

/** Logs the lifecycle events in a global list (which outlives a reload); registers `/<name>` and `/events`, `/reload-me`. */
const extension = (command: string) => `
const log = (globalThis.__reloadLog ??= []);
log.push("factory:${command}");
export default function (pi) {
  for (const e of ["session_start", "resources_discover", "session_shutdown"]) pi.on(e, (ev) => { log.push(e + ":" + ev.reason); });
  pi.registerCommand(${JSON.stringify(command)}, { description: "d", handler: async () => {} });
  pi.registerCommand("events", { handler: async (_a, ctx) => ctx.ui.notify(log.join(" "), "info") });
  // After await ctx.reload() the old ctx is stale (it throws, as in the reference); what it gave before still works.
  pi.registerCommand("reload-me", { handler: async (_a, ctx) => { const ui = ctx.ui; await ctx.reload(); ui.notify("reloaded", "info"); } });
}
`;

test("ctx.reload: session_shutdown, the extension's new code and new skills loaded, then session_start and resources_discover", async () => {
  const { home, cwd } = tempDirs();
  const ext = join(dirname(home), "ext.ts");
  write(ext, extension("before"));
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "-e", ext] });
  const names = async () => ((await p.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => c.name);
  const note = async (message: string) => {
    const from = p.records.length;
    await p.request({ type: "prompt", message });
    return String((await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
  };
  expect(await names()).toEqual(["before", "events", "reload-me", "llama", "mcp"]);
  expect(await note("/events")).toBe("factory:before session_start:startup resources_discover:startup");

  write(ext, extension("after"));
  write(join(home, "skills", "fresh", "SKILL.md"), "---\nname: fresh\ndescription: written while running\n---\nbody");
  expect(await note("/reload-me")).toBe("reloaded");
  expect(await names()).toEqual(["after", "events", "reload-me", "llama", "mcp", "skill:fresh"]);
  // The old factory's handlers saw the shutdown; the new module's the start.
  expect(await note("/events")).toBe("factory:before session_start:startup resources_discover:startup session_shutdown:reload factory:after session_start:reload resources_discover:reload");
  await p.close();
});

test("at exit (stdin closed) extensions see session_shutdown with reason quit, as in the reference", async () => {
  const { home, cwd } = tempDirs();
  const ext = join(dirname(home), "quit.ts");
  const out = join(dirname(home), "shutdown.txt");
  write(ext, `import { appendFileSync } from "node:fs";\nexport default function (pi) { pi.on("session_shutdown", (e) => { appendFileSync(${JSON.stringify(out)}, e.reason + "\\n"); }); }\n`);
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "-e", ext] });
  await p.request({ type: "get_state" });
  expect(await p.close()).toBe(0);
  expect(readFileSync(out, "utf8")).toBe("quit\n");
});

/** The reload with a settings change (settingsChange, written before the agent started), as a trail of what an RPC client sees; `narrow` first turns every tool but read off. */
async function settingsReloadScenario(agent: RpcAgent, { change, steps }: ReturnType<typeof settingsChange>, narrow = false) {
  const data = async (cmd: Rec) => (await agent.request(cmd)).data;
  const note = async (message: string) => {
    const from = agent.records.length;
    await agent.request({ type: "prompt", message });
    return String((await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
  };
  const mine = (commands: Rec[]) => commands.map((c) => String(c.name)).filter((n) => n.endsWith("-cmd") || n.startsWith("skill:") || n === "greet");
  const view = async () => {
    const state = await data({ type: "get_state" });
    return {
      commands: mine((await data({ type: "get_commands" })).commands as Rec[]),
      queues: [state.steeringMode, state.followUpMode],
      autoCompactionEnabled: state.autoCompactionEnabled,
      // Sorted: pion lists the built-in tools first, the reference in the order they became active.
      tools: (await note("/tools")).split(",").sort().join(","),
    };
  };
  if (narrow) expect(await note("/narrow")).toBe("narrowed");
  const before = { ...(await view()), steps: steps() };
  change();
  const answer = await note("/reload-me");
  const after = { ...(await view()), steps: steps().slice(before.steps.length) };
  expect(await agent.close()).toBe(0);
  return { before, answer, after };
}

const EXPECTED_TRAIL = {
  before: {
    commands: ["main-cmd", "gone-cmd"],
    queues: ["one-at-a-time", "one-at-a-time"],
    autoCompactionEnabled: true,
    tools: "bash,main_tool,read",
    steps: ["main factory", "gone factory", "main session_start:startup", "gone session_start:startup", "main resources_discover:startup", "gone resources_discover:startup"],
  },
  answer: "reloaded",
  after: {
    commands: ["main-cmd", "added-cmd", "pkg-cmd", "greet", "skill:listed", "skill:pkg-skill"],
    queues: ["all", "all"],
    autoCompactionEnabled: false,
    tools: "bash,grep,main_tool,read",
    steps: [
      "main session_shutdown:reload",
      "gone session_shutdown:reload",
      "main factory",
      "added factory",
      "pkg factory",
      "main session_start:reload",
      "added session_start:reload",
      "pkg session_start:reload",
      "main resources_discover:reload",
      "added resources_discover:reload",
      "pkg resources_discover:reload",
    ],
  },
};

test("ctx.reload reads settings.json again: new skills, prompts, extensions and packages load, removed ones are shut down, steeringMode and new defaultTools apply", async () => {
  const dirs = tempDirs();
  const files = settingsChange(dirs);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc"] });
  expect(await settingsReloadScenario(p, files)).toEqual(EXPECTED_TRAIL);
});

/** `/reload-me` while a tool call holds the run (refused), then after it (reloaded); what the extension notified and logged. */
async function busyReloadScenario(agent: RpcAgent, dirs: { home: string; cwd: string }, steps: () => string[], change: () => void) {
  const note = async (message: string) => {
    const from = agent.records.length;
    await agent.request({ type: "prompt", message });
    return String((await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
  };
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "wait for the gate" });
  await agent.waitFor((r) => r.type === "tool_execution_start", from);
  const seen = steps().length;
  change();
  const refused = await note("/reload-me");
  const whileBusy = steps().slice(seen);
  releaseGate(dirs.cwd);
  await agent.waitFor((r) => r.type === "agent_end", from);
  const reloaded = await note("/reload-me");
  const after = steps().slice(seen).slice(0, 1);
  expect(await agent.close()).toBe(0);
  return { refused, whileBusy, reloaded, after };
}

const BUSY_TRAIL = { refused: "refused: Wait for the current response to finish before reloading.", whileBusy: [], reloaded: "reloaded", after: ["main session_shutdown:reload"] };

async function busyReload(which: "pion" | "reference") {
  const dirs = tempDirs();
  const { change, steps } = settingsChange(dirs);
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "toolCall", id: "wait", name: "bash", arguments: { command: GATED_COMMAND } }] }, { blocks: [{ type: "text", text: "done" }] }] });
  writeFakeModels(dirs.home, fake.url);
  const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] }) : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model"], dirs, {});
  const trail = await busyReloadScenario(agent, dirs, steps, change);
  await fake.stop();
  return trail;
}

test("ctx.reload while a prompt runs is refused with an error the extension catches; nothing is reloaded until the run is over", async () => {
  expect(await busyReload("pion")).toEqual(BUSY_TRAIL);
});

describeWith("ctx.reload after a settings change, pion against the reference", NO_REFERENCE, () => {
  test("the same commands, queue mode, tools and lifecycle order", async () => {
    const run = async (which: "pion" | "reference") => {
      const dirs = tempDirs();
      const files = settingsChange(dirs);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
      return settingsReloadScenario(agent, files);
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual(EXPECTED_TRAIL);
  });

  test("built-in tools turned off during the session stay off, one newly added to defaultTools joins, the extensions' tools are active again", async () => {
    const run = (which: "pion" | "reference") => {
      const dirs = tempDirs();
      const files = settingsChange(dirs);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
      return settingsReloadScenario(agent, files, true);
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect([mine.before.tools, mine.after.tools]).toEqual(["read", "grep,main_tool,read"]);
  });

  test("what set_steering_mode and set_auto_compaction chose survives a reload that leaves those settings alone", async () => {
    const run = async (which: "pion" | "reference") => {
      const dirs = tempDirs();
      settingsChange(dirs);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
      await agent.request({ type: "set_steering_mode", mode: "all" });
      await agent.request({ type: "set_auto_compaction", enabled: false });
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/reload-me" });
      const answer = (await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message;
      const state = (await agent.request({ type: "get_state" })).data;
      expect(await agent.close()).toBe(0);
      return { answer, queues: [state.steeringMode, state.followUpMode], autoCompactionEnabled: state.autoCompactionEnabled };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual({ answer: "reloaded", queues: ["all", "one-at-a-time"], autoCompactionEnabled: false });
  });

  test("a settings file that no longer parses: the settings read before stay", async () => {
    const run = async (which: "pion" | "reference") => {
      const dirs = tempDirs();
      const { steps } = settingsChange(dirs);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
      const from = agent.records.length;
      await agent.request({ type: "get_state" });
      writeFileSync(join(dirs.home, "settings.json"), "{ not json");
      await agent.request({ type: "prompt", message: "/reload-me" });
      const answer = (await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message;
      const commands = ((await agent.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => String(c.name)).filter((n) => n.endsWith("-cmd"));
      expect(await agent.close()).toBe(0);
      return { answer, commands, steps: steps().filter((l) => l.includes("reload")) };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine.commands).toEqual(["main-cmd", "gone-cmd"]);
  });

  test("retry settings read again: the next failure is retried as the new settings say", async () => {
    const run = async (which: "pion" | "reference") => {
      const dirs = tempDirs();
      settingsChange(dirs);
      const main = join(dirname(dirs.home), "exts", "main.ts");
      const settings = (retry: Rec) => writeFileSync(join(dirs.home, "settings.json"), JSON.stringify({ extensions: [main], retry }));
      settings({ maxRetries: 1, baseDelayMs: 5 });
      const fake = startFakeProvider({ replies: [{ kind: "http_error", status: 529 }, { blocks: [{ type: "text", text: "ok" }] }] });
      writeFakeModels(dirs.home, fake.url);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] }) : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model"], dirs, {});
      await agent.request({ type: "get_state" });
      settings({ maxRetries: 4, baseDelayMs: 10 });
      const from = agent.records.length;
      await agent.request({ type: "prompt", message: "/reload-me" });
      expect((await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message).toBe("reloaded");
      await agent.request({ type: "prompt", message: "hi" });
      const start = await agent.waitFor((r) => r.type === "auto_retry_start", from);
      await agent.waitFor((r) => r.type === "agent_end", from);
      expect(await agent.close()).toBe(0);
      await fake.stop();
      return { maxAttempts: start.maxAttempts, delayMs: start.delayMs };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual({ maxAttempts: 4, delayMs: 10 });
  });

  test("the same refusal while a prompt runs", async () => {
    const [mine, theirs] = await Promise.all([busyReload("pion"), busyReload("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual(BUSY_TRAIL);
  });
});

/** A home with the fake provider's models, and the logging extension with `/reload-me` beside it. */
function withReloader(url: string) {
  const dirs = tempDirs();
  writeFakeModels(dirs.home, url);
  const ext = join(dirname(dirs.home), "reloader.ts");
  write(ext, extension("r"));
  return { dirs, ext };
}

test("ctx.reload applies the shell, interruptMode, thinkingBudgets and limits the settings name now", async () => {
  await using fake = startFakeProvider();
  const { dirs, ext } = withReloader(fake.url);
  const settings = (s: Rec) => writeFileSync(join(dirs.home, "settings.json"), JSON.stringify(s));
  settings({ interruptMode: "wait" });
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--thinking", "low", "--max-cost", "5", "-e", ext] });
  const note = async (message: string) => {
    const from = p.records.length;
    await p.request({ type: "prompt", message });
    return String((await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from)).message);
  };
  const bash = async () => {
    const r = await p.request({ type: "bash", command: 'echo "[$PION_RELOADED]"' });
    return String(r.data.output).trim();
  };
  expect(await bash()).toBe("[]");
  expect((await p.request({ type: "get_state" })).data.interruptMode).toBe("wait");
  settings({ interruptMode: "immediate", shellCommandPrefix: "export PION_RELOADED=yes", thinkingBudgets: { low: 1500 }, limits: { maxTurns: 1, maxCostUsd: 1 } });
  expect(await note("/reload-me")).toBe("reloaded");
  expect(await bash()).toBe("[yes]");
  expect((await p.request({ type: "get_state" })).data.interruptMode).toBe("immediate");
  // The next request carries the new budget; limits.maxTurns 1 ends the run after its first turn (a tool call asked for more).
  fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "true" } }] }, { blocks: [{ type: "text", text: "never" }] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "go" });
  const settled = await p.waitFor((r) => r.type === "agent_settled", from);
  expect((fake.requests.at(-1)!.body as { thinking?: { budget_tokens?: number } }).thinking?.budget_tokens).toBe(1500);
  expect(fake.requests).toHaveLength(1);
  expect(settled).toMatchObject({ stopReason: "limit", errorMessage: expect.stringContaining("max turns 1") });
  await p.close();
});

test("ctx.reload turns images.blockImages on for the next request", async () => {
  await using fake = startFakeProvider();
  const { dirs, ext } = withReloader(fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext] });
  const png = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
  const ask = async () => {
    fake.enqueue({ blocks: [{ type: "text", text: "seen" }] });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "look", images: [{ type: "image", data: png, mimeType: "image/png" }] });
    await p.waitFor((r) => r.type === "agent_settled", from);
    return JSON.stringify((fake.requests.at(-1)!.body as { messages: unknown[] }).messages.at(-1));
  };
  expect(await ask()).toContain('"type":"image"');
  writeFileSync(join(dirs.home, "settings.json"), JSON.stringify({ images: { blockImages: true } }));
  const from = p.records.length;
  await p.request({ type: "prompt", message: "/reload-me" });
  await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && r.message === "reloaded", from);
  const after = await ask();
  expect(after).not.toContain('"type":"image"');
  expect(after).toContain("image not sent");
  await p.close();
});
