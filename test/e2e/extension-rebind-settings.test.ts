/**
 * A session change (new_session, switch_session, clone, an extension's ctx.newSession) after
 * settings.json changed on disk, as the reference's new runtime for the new session: the settings
 * read again; the extensions they list now bound to the new session (one loaded before keeps its
 * module, its factory runs again; one no longer listed stays shut down; one newly listed or from
 * a newly listed package loads); skills, prompts and context files read again; the queue modes,
 * auto-compaction and the retry numbers taken from the settings; the built-in tools exactly those
 * `defaultTools` names now (a setActiveTools choice forgotten); a new session on the model and
 * thinking level the settings (or the command line) name now, a resumed one on its own (the
 * command line's model and level winning); cycle_model's scope from the settings' enabledModels
 * now. Project settings count only in a folder trusted at start-up;
 * permissions stay as start-up chose them. Compared with the reference where
 * PION_REFERENCE_PKG is set.
 */
import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";
import { notified, settingsChange, write } from "../support/settings-change.ts";

const BEFORE = { retry: { maxRetries: 1, baseDelayMs: 5 }, defaultProvider: "fake", defaultModel: "fake-model", defaultThinkingLevel: "low" };
const AFTER = { retry: { maxRetries: 4, baseDelayMs: 10 }, defaultTools: ["read", "grep"], defaultProvider: "fake-openai", defaultModel: "fake-chat", defaultThinkingLevel: "high" };

/** A session file as the reference writes one (no recorded tool loadout), on fake-openai/fake-chat at thinking level minimal. */
function writtenSession(dirs: { home: string; cwd: string }): string {
  const file = join(dirname(dirs.home), "earlier.jsonl");
  const at = "2026-01-02T03:04:05.000Z";
  const usage = { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const lines = [
    { type: "session", version: 3, id: "0190a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b", timestamp: at, cwd: dirs.cwd },
    { type: "model_change", id: "a0000001", parentId: null, timestamp: at, provider: "fake-openai", modelId: "fake-chat" },
    { type: "thinking_level_change", id: "a0000002", parentId: "a0000001", timestamp: at, thinkingLevel: "minimal" },
    { type: "message", id: "a0000003", parentId: "a0000002", timestamp: at, message: { role: "user", content: [{ type: "text", text: "earlier question" }], timestamp: 1767323045000 } },
    {
      type: "message",
      id: "a0000004",
      parentId: "a0000003",
      timestamp: at,
      message: { role: "assistant", content: [{ type: "text", text: "earlier answer" }], api: "openai-completions", provider: "fake-openai", model: "fake-chat", usage, stopReason: "stop", timestamp: 1767323045001 },
    },
  ];
  writeFileSync(file, lines.map((l) => JSON.stringify(l)).join("\n") + "\n");
  return file;
}

/**
 * `/narrow`, the settings changed (and a context file written), new_session, a prompt whose first
 * reply fails (the retry's numbers), switch_session to a session file: what an RPC client sees
 * after each step.
 */
async function rebindScenario(agent: RpcAgent, dirs: { home: string; cwd: string }, files: ReturnType<typeof settingsChange>) {
  const data = async (cmd: Rec) => (await agent.request(cmd)).data;
  let seen = 0;
  const view = async () => {
    const state = await data({ type: "get_state" });
    const steps = files.steps();
    const out = {
      commands: ((await data({ type: "get_commands" })).commands as Rec[]).map((c) => String(c.name)),
      state: [state.steeringMode, state.followUpMode, state.autoCompactionEnabled, `${state.model?.provider}/${state.model?.id}`, state.thinkingLevel],
      // Sorted: pion lists the built-in tools first, the reference in the order they became active.
      tools: (await notified(agent, "/tools")).split(",").sort().join(","),
      context: await notified(agent, "/context"),
      steps: steps.slice(seen),
    };
    seen = steps.length;
    return out;
  };
  expect(await notified(agent, "/narrow")).toBe("narrowed");
  const before = await view();
  files.change();
  write(join(dirs.home, "AGENTS.md"), "CONTEXT-MARK");
  const newSession = await data({ type: "new_session" });
  const afterNew = await view();
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "again" });
  const retry = await agent.waitFor((r) => r.type === "auto_retry_start", from);
  await agent.waitFor((r) => r.type === "agent_end", agent.records.indexOf(retry));
  const switched = await data({ type: "switch_session", sessionPath: writtenSession(dirs) });
  const afterSwitch = await view();
  expect(await agent.close()).toBe(0);
  return { before, newSession, afterNew, retry: [retry.maxAttempts, retry.delayMs], switched, afterSwitch };
}

const MAIN_COMMANDS = ["main-cmd", "reload-me", "tools", "narrow", "context", "fresh"];
const RELISTED = ["main", "added", "pkg"];
const lines = (names: string[], step: string) => names.map((n) => `${n} ${step}`);

/** The trail without a model on the command line; `cliModel` (--model fake/fake-model) keeps it in both sessions. */
const expectedTrail = (cliModel: boolean) => ({
  before: {
    commands: [...MAIN_COMMANDS, "gone-cmd", "llama", "mcp"],
    state: ["one-at-a-time", "one-at-a-time", true, "fake/fake-model", "low"],
    tools: "read",
    context: "false",
    steps: [...lines(["main", "gone"], "factory"), ...lines(["main", "gone"], "session_start:startup"), ...lines(["main", "gone"], "resources_discover:startup")],
  },
  newSession: { cancelled: false },
  afterNew: {
    commands: [...MAIN_COMMANDS, "added-cmd", "pkg-cmd", "llama", "mcp", "greet", "skill:listed", "skill:pkg-skill"],
    state: ["all", "all", false, cliModel ? "fake/fake-model" : "fake-openai/fake-chat", "high"],
    tools: "grep,main_tool,read",
    context: "true",
    steps: [
      ...lines(["main", "gone"], "session_shutdown:new"),
      "main factory again",
      "added factory",
      "pkg factory",
      ...lines(RELISTED, "session_start:new"),
      ...lines(RELISTED, "resources_discover:startup"),
    ],
  },
  retry: [4, 10],
  switched: { cancelled: false },
  afterSwitch: {
    commands: [...MAIN_COMMANDS, "added-cmd", "pkg-cmd", "llama", "mcp", "greet", "skill:listed", "skill:pkg-skill"],
    state: ["all", "all", false, cliModel ? "fake/fake-model" : "fake-openai/fake-chat", "minimal"],
    tools: "grep,main_tool,read",
    context: "true",
    steps: [...lines(RELISTED, "session_shutdown:resume"), ...lines(RELISTED, "factory again"), ...lines(RELISTED, "session_start:resume"), ...lines(RELISTED, "resources_discover:startup")],
  },
});

async function runRebind(which: "pion" | "reference", cliModel: boolean) {
  const dirs = tempDirs();
  const files = settingsChange(dirs, { before: BEFORE, after: AFTER });
  const fake = startFakeProvider({ replies: [{ kind: "http_error", status: 529 }, { blocks: [{ type: "text", text: "ok" }] }] });
  writeFakeModels(dirs.home, fake.url);
  const agent =
    which === "pion"
      ? new Pion({ ...dirs, args: ["--mode", "rpc", ...(cliModel ? ["--model", "fake/fake-model"] : [])] })
      : referenceRpc(["--mode", "rpc", ...(cliModel ? ["--provider", "fake", "--model", "fake-model"] : [])], dirs, {});
  const trail = await rebindScenario(agent, dirs, files);
  await fake.stop();
  return trail;
}

for (const cliModel of [false, true]) {
  const how = cliModel ? "with --model" : "with the model from the settings";
  test(`new_session and switch_session after settings.json changed (${how}): extensions, resources, queue modes, retry, tools, model and thinking level as the settings say now`, async () => {
    expect(await runRebind("pion", cliModel)).toEqual(expectedTrail(cliModel));
  });
}

describeWith("a session change after a settings change, pion against the reference", NO_REFERENCE, () => {
  for (const cliModel of [false, true]) {
    test(`the same commands, state, tools, retry and lifecycle (${cliModel ? "with --model" : "model from the settings"})`, async () => {
      const [mine, theirs] = await Promise.all([runRebind("pion", cliModel), runRebind("reference", cliModel)]);
      expect(mine).toEqual(theirs);
      expect(mine).toEqual(expectedTrail(cliModel));
    });
  }

  test("ctx.newSession from an extension's command reads the settings again too", async () => {
    const run = async (which: "pion" | "reference") => {
      const dirs = tempDirs();
      const files = settingsChange(dirs);
      const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
      const seen = (await agent.request({ type: "get_state" })) && files.steps().length;
      files.change();
      const answer = await notified(agent, "/fresh");
      const state = (await agent.request({ type: "get_state" })).data;
      const commands = ((await agent.request({ type: "get_commands" })).data.commands as Rec[]).map((c) => String(c.name)).filter((n) => n.endsWith("-cmd"));
      expect(await agent.close()).toBe(0);
      return { answer, queues: [state.steeringMode, state.followUpMode], commands, steps: files.steps().slice(seen).filter((l) => l.includes("factory")) };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual({ answer: "cancelled: false", queues: ["all", "all"], commands: ["main-cmd", "added-cmd", "pkg-cmd"], steps: ["main factory again", "added factory", "pkg factory"] });
  });
});

test("without extensions: clone and new_session read the settings again; the new session's first entries record the new defaults; permissions stay", async () => {
  const dirs = tempDirs();
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] }] });
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model", defaultThinkingLevel: "low", defaultTools: ["read", "bash"] });
  const p = new Pion({ ...dirs, args: ["--mode", "rpc"] });
  const data = async (cmd: Rec) => {
    const r = await p.request(cmd);
    expect(r.success).toBe(true);
    return r.data;
  };
  const state = async () => {
    const s = await data({ type: "get_state" });
    return [s.steeringMode, `${s.model.provider}/${s.model.id}`, s.thinkingLevel, s.permissionMode];
  };
  const from = p.records.length;
  await data({ type: "prompt", message: "hi" });
  await p.waitFor((r) => r.type === "agent_end", from);
  write(join(dirs.home, "skills", "later", "SKILL.md"), "---\nname: later\ndescription: written while running\n---\nbody");
  writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-plain", defaultThinkingLevel: "high", defaultTools: ["read", "grep"], steeringMode: "all", permissions: { mode: "read-only" } });
  expect(await data({ type: "clone" })).toEqual({ cancelled: false });
  // A copy of a session with messages goes on with its own model and level.
  expect(await state()).toEqual(["all", "fake/fake-model", "low", "auto"]);
  expect(((await data({ type: "get_commands" })).commands as Rec[]).map((c) => c.name)).toContain("skill:later");
  expect(await data({ type: "new_session" })).toEqual({ cancelled: false });
  // fake-plain does not reason: the level the settings name is clamped to off.
  expect(await state()).toEqual(["all", "fake/fake-plain", "off", "auto"]);
  const entries = (await data({ type: "get_entries" })).entries as Rec[];
  expect(entries.map((e) => [e.type, e.modelId ?? e.thinkingLevel])).toEqual([["model_change", "fake-plain"], ["thinking_level_change", "off"]]);
  const next = p.records.length;
  await data({ type: "prompt", message: "next" });
  await p.waitFor((r) => r.type === "agent_end", next);
  const sent = fake.requests.at(-1)!.body as { model: string; tools?: { name: string }[] };
  expect([sent.model, (sent.tools ?? []).map((t) => t.name)]).toEqual(["fake-plain", ["read", "grep"]]);
  expect(await p.close()).toBe(0);
  await fake.stop();
});

/** The steering mode before and after a new_session, with the folder's `<dir>/settings.json` (there, empty, at start-up) asking for "all" meanwhile; pion's also reports its trust state. */
async function projectSettingsRun(which: "pion" | "reference", dir: ".pi" | ".pion", args: string[]) {
  const dirs = tempDirs();
  // The folder has settings of its own at start-up, so the trust decision is made then.
  write(join(dirs.cwd, dir, "settings.json"), "{}");
  const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc", ...args] }) : referenceRpc(["--mode", "rpc", ...args], dirs, {});
  const before = (await agent.request({ type: "get_state" })).data;
  writeFileSync(join(dirs.cwd, dir, "settings.json"), JSON.stringify({ steeringMode: "all" }));
  await agent.request({ type: "new_session" });
  const after = (await agent.request({ type: "get_state" })).data;
  expect(await agent.close()).toBe(0);
  return which === "pion" ? [before.projectTrust, before.steeringMode, after.projectTrust, after.steeringMode] : [before.steeringMode, after.steeringMode];
}

test("project settings written after start-up count on a session change only in a folder trusted at start-up", async () => {
  const [unasked, refused, trusted] = await Promise.all([projectSettingsRun("pion", ".pion", []), projectSettingsRun("pion", ".pion", ["--no-approve"]), projectSettingsRun("pion", ".pion", ["--approve"])]);
  expect(unasked).toEqual(["untrusted", "one-at-a-time", "untrusted", "one-at-a-time"]);
  expect(refused).toEqual(["untrusted", "one-at-a-time", "untrusted", "one-at-a-time"]);
  expect(trusted).toEqual(["trusted", "one-at-a-time", "trusted", "all"]);
});

describeWith("project settings on a session change, pion against the reference", NO_REFERENCE, () => {
  test("a trusted folder's .pi/settings.json written after start-up applies, an untrusted one's does not", async () => {
    const runs = await Promise.all(
      [["--approve"], ["--no-approve"]].flatMap((args) => [projectSettingsRun("pion", ".pi", args).then((r) => r.filter((_, i) => i % 2 === 1)), projectSettingsRun("reference", ".pi", args)]),
    );
    expect(runs).toEqual([["one-at-a-time", "all"], ["one-at-a-time", "all"], ["one-at-a-time", "one-at-a-time"], ["one-at-a-time", "one-at-a-time"]]);
  });
});

/**
 * set_model, set_thinking_level, set_steering_mode and set_auto_compaction, a prompt, new_session,
 * then switch_session back: "provider/id level steering autoCompaction" at each step.
 */
async function modelRun(which: "pion" | "reference", args: string[]) {
  const dirs = tempDirs();
  writeSettings(dirs.home, BEFORE);
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hello" }] }] });
  writeFakeModels(dirs.home, fake.url);
  const referenceArgs = args[0] === "--model" ? ["--provider", "fake", "--model", "fake-model"] : args;
  const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc", ...args] }) : referenceRpc(["--mode", "rpc", ...referenceArgs], dirs, {});
  const data = async (cmd: Rec) => (await agent.request(cmd)).data;
  const state = async () => {
    const s = await data({ type: "get_state" });
    return `${s.model?.provider}/${s.model?.id} ${s.thinkingLevel} ${s.steeringMode} ${s.autoCompactionEnabled}`;
  };
  const start = await state();
  await data({ type: "set_model", provider: "fake-openai", modelId: "fake-chat" });
  await data({ type: "set_thinking_level", level: "high" });
  await data({ type: "set_steering_mode", mode: "all" });
  await data({ type: "set_auto_compaction", enabled: false });
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "hi" });
  await agent.waitFor((r) => r.type === "agent_end", from);
  const first = (await data({ type: "get_state" })).sessionFile;
  await data({ type: "new_session" });
  const fresh = await state();
  await data({ type: "switch_session", sessionPath: first });
  const resumed = await state();
  expect(await agent.close()).toBe(0);
  await fake.stop();
  return { start, fresh, resumed };
}

/** A new session starts on the start-up choice again, a resumed one on its own model and level; the command line's win. */
const MODEL_TRAILS: [string[], Awaited<ReturnType<typeof modelRun>>][] = [
  [[], { start: "fake/fake-model low one-at-a-time true", fresh: "fake/fake-model low all false", resumed: "fake-openai/fake-chat high all false" }],
  [["--model", "fake/fake-model"], { start: "fake/fake-model low one-at-a-time true", fresh: "fake/fake-model low all false", resumed: "fake/fake-model high all false" }],
  [["--thinking", "minimal"], { start: "fake/fake-model minimal one-at-a-time true", fresh: "fake/fake-model minimal all false", resumed: "fake-openai/fake-chat minimal all false" }],
];

for (const [args, trail] of MODEL_TRAILS) {
  test(`a new session forgets set_model and set_thinking_level, a resumed one has them back (${args.join(" ") || "no flags"}); set_steering_mode and set_auto_compaction stay`, async () => {
    expect(await modelRun("pion", args)).toEqual(trail);
  });
}

describeWith("the model and thinking level after a session change, pion against the reference", NO_REFERENCE, () => {
  for (const [args, trail] of MODEL_TRAILS) {
    test(`the same models and levels (${args.join(" ") || "no flags"})`, async () => {
      const [mine, theirs] = await Promise.all([modelRun("pion", args), modelRun("reference", args)]);
      expect(mine).toEqual(theirs);
      expect(mine).toEqual(trail);
    });
  }
});

/** enabledModels written after start-up: the model a new_session starts on, then where cycle_model goes twice. */
async function scopeRun(which: "pion" | "reference") {
  const dirs = tempDirs();
  writeSettings(dirs.home, BEFORE);
  const fake = startFakeProvider();
  writeFakeModels(dirs.home, fake.url);
  const agent = which === "pion" ? new Pion({ ...dirs, args: ["--mode", "rpc"] }) : referenceRpc(["--mode", "rpc"], dirs, {});
  const data = async (cmd: Rec) => (await agent.request(cmd)).data;
  const id = (m: Rec) => `${m.provider}/${m.id}`;
  const start = id((await data({ type: "get_state" })).model);
  writeSettings(dirs.home, { ...BEFORE, enabledModels: ["fake/fake-plain", "fake-openai/fake-chat"] });
  await data({ type: "new_session" });
  const fresh = id((await data({ type: "get_state" })).model);
  const cycled = [id((await data({ type: "cycle_model" })).model), id((await data({ type: "cycle_model" })).model)];
  expect(await agent.close()).toBe(0);
  await fake.stop();
  return { start, fresh, cycled };
}

const SCOPE_TRAIL = { start: "fake/fake-model", fresh: "fake/fake-plain", cycled: ["fake-openai/fake-chat", "fake/fake-plain"] };

test("enabledModels written after start-up: a new session starts on the scope's first model (the default is outside it) and cycle_model goes through the scope", async () => {
  expect(await scopeRun("pion")).toEqual(SCOPE_TRAIL);
});

describeWith("enabledModels on a session change, pion against the reference", NO_REFERENCE, () => {
  test("the same start and cycle", async () => {
    const [mine, theirs] = await Promise.all([scopeRun("pion"), scopeRun("reference")]);
    expect(mine).toEqual(theirs);
    expect(mine).toEqual(SCOPE_TRAIL);
  });
});
