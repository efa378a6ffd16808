/**
 * The reference's command-line options (its docs/cli.md) through the binary: each is accepted in
 * RPC mode (the process answers get_state) and has its documented effect where pion has the feature.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { BINARY, Pion, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const FLAGS_EXT = resolve(import.meta.dir, "../fixtures/extensions/flags.ts");
const TOOLS_EXT = resolve(import.meta.dir, "../fixtures/extensions/tools.ts");

type Dirs = { home: string; cwd: string };

/** Generous: several processes per test, on a machine other test runs share. */
const LIMIT = 60_000;

/** Start pion in RPC mode with `args`, answer get_state, exit 0 on EOF. */
async function stateWith(args: string[], dirs: Dirs = tempDirs(), env?: Record<string, string>): Promise<{ state: Rec; stderr: string }> {
  const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", ...args] });
  const r = await p.request({ type: "get_state" });
  expect(r.success).toBe(true);
  expect(await p.close()).toBe(0);
  return { state: r.data, stderr: p.stderr };
}

/** The first model request of one prompt run with `args`: its system prompt and tool names. */
async function firstRequest(args: string[], dirs: Dirs = tempDirs()): Promise<{ system: string; tools: string[] }> {
  const fake = startFakeProvider();
  writeFakeModels(dirs.home, fake.url);
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args] });
  await p.request({ type: "prompt", message: "hi" });
  await p.waitFor("agent_settled");
  expect(await p.close()).toBe(0);
  await fake.stop();
  const body = fake.requests[0]!.body as { system: { text: string }[]; tools?: { name: string }[] };
  return { system: body.system.map((b) => b.text).join("\n"), tools: (body.tools ?? []).map((t) => t.name) };
}

async function commandsWith(args: string[], dirs: Dirs): Promise<Rec[]> {
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", ...args] });
  const r = await p.request({ type: "get_commands" });
  expect(await p.close()).toBe(0);
  return r.data.commands;
}

function writeSkill(root: string, name: string): string {
  const dir = join(root, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "SKILL.md"), `---\nname: ${name}\ndescription: The ${name} skill\n---\nDo ${name} things.\n`);
  return dir;
}

describe("options with no effect in pion's modes are accepted", () => {
  // The terminal-only group, and features pion does not have yet (trust, MCP). One process per
  // option; the unit tests check that each long and short spelling maps to it.
  const cases: string[][] = [
    ["--no-themes"],
    ["--theme", "a.json", "--theme", "b.json"],
    ["--use-theme", "dark/light"],
    ["--tui-mode", "fullscreen"],
    ["-r"],
    ["-a"],
    ["-na"],
    ["--no-mcp"],
  ];
  for (const args of cases) {
    test.concurrent(args.join(" "), async () => {
      const { state } = await stateWith(args);
      expect(state.sessionId).toEqual(expect.any(String));
    }, LIMIT);
  }

  test.concurrent("--tui-mode takes only its two values, as in the reference", async () => {
    const r = await runPion(["--mode", "rpc", "--tui-mode", "tiny"], tempDirs());
    expect(r.code).toBe(2);
    expect(r.stderr).toStartWith('pion: Invalid --tui-mode "tiny"');
  }, LIMIT);

  test.concurrent("--help lists them in their own group", async () => {
    const r = await runPion(["--help"], tempDirs());
    expect(r.code).toBe(0);
    const [main, compat] = r.stdout.split("Accepted for compatibility");
    for (const flag of ["-xt, --exclude-tools <list>", "-nbt, --no-builtin-tools", "--list-models [search]", "-na, --no-approve", "--session-id <id>"]) {
      expect(main).toContain(flag);
    }
    for (const flag of ["-r, --resume", "--theme <path>", "--use-theme <name>", "--no-themes", "--tui-mode <regular|fullscreen>"]) {
      expect(compat).toContain(flag);
      expect(main).not.toContain(flag);
    }
  }, LIMIT);
});

describe("options with an effect", () => {
  test.concurrent("--verbose describes the start-up on stderr; --offline and PI_OFFLINE show there", async () => {
    const plain = await stateWith([]);
    expect(plain.stderr).toBe("");
    const verbose = await stateWith(["--verbose", "-nc"]);
    expect(verbose.stderr).toContain(`pion startup: session: ${verbose.state.sessionId}`);
    expect(verbose.stderr).toContain("pion startup: tools: read, bash, edit, write");
    expect(verbose.stderr).toContain("pion startup: network: on");
    expect((await stateWith(["--verbose", "--offline"])).stderr).toContain("pion startup: network: offline");
    expect((await stateWith(["--verbose"], tempDirs(), { PI_OFFLINE: "1" })).stderr).toContain("pion startup: network: offline");
    // pion's own name wins over the reference's.
    expect((await stateWith(["--verbose"], tempDirs(), { PI_OFFLINE: "1", PION_OFFLINE: "0" })).stderr).toContain("pion startup: network: on");
  }, LIMIT);

  test.concurrent("-ne skips discovered extensions; -e paths still load", async () => {
    const dirs = tempDirs();
    mkdirSync(join(dirs.home, "extensions"));
    copyFileSync(FLAGS_EXT, join(dirs.home, "extensions", "flags.ts"));
    expect((await stateWith([], dirs)).state.sessionName).toEqual(expect.any(String));
    expect((await stateWith(["-ne"], dirs)).state.sessionName).toBeUndefined();
    expect((await stateWith(["-ne", "-e", FLAGS_EXT], dirs)).state.sessionName).toEqual(expect.any(String));
  }, LIMIT);

  test.concurrent("-t / --tools, -xt / --exclude-tools with patterns", async () => {
    expect((await firstRequest(["-t", "read,grep"])).tools).toEqual(["read", "grep"]);
    expect((await firstRequest(["--tools", "+ls"])).tools).toEqual(["read", "bash", "edit", "write", "ls"]);
    expect((await firstRequest(["-xt", "b*,write"])).tools).toEqual(["read", "edit"]);
    expect((await firstRequest(["--exclude-tools", "greet", "-e", TOOLS_EXT])).tools).not.toContain("greet");
  }, LIMIT);

  test.concurrent("-nbt keeps extension tools; -nt drops them too; --tools still picks", async () => {
    const nbt = await firstRequest(["-nbt", "-e", TOOLS_EXT]);
    expect(nbt.tools).toContain("greet");
    expect(nbt.tools.some((t) => ["read", "bash", "edit", "write"].includes(t))).toBe(false);
    expect((await firstRequest(["--no-builtin-tools", "--tools", "ls"])).tools).toEqual(["ls"]);
    expect((await firstRequest(["-nt", "-e", TOOLS_EXT])).tools).toEqual([]);
    expect((await firstRequest(["--no-tools", "-t", "read"])).tools).toEqual(["read"]);
  }, LIMIT);

  test.concurrent("--system-prompt and repeated --append-system-prompt take text or a file", async () => {
    const dirs = tempDirs();
    writeFileSync(join(dirs.cwd, "base.md"), "You are a file-born assistant.");
    writeFileSync(join(dirs.cwd, "extra.md"), "APPENDED-FROM-FILE");
    const { system } = await firstRequest(
      ["--system-prompt", "base.md", "--append-system-prompt", "APPENDED-TEXT", "--append-system-prompt", "./extra.md"],
      dirs,
    );
    expect(system.startsWith("You are a file-born assistant.")).toBe(true);
    expect(system).toContain("APPENDED-TEXT\n\nAPPENDED-FROM-FILE");
    expect(system).not.toContain("extra.md");
  }, LIMIT);

  test.concurrent("-nc / --no-context-files leaves AGENTS.md out", async () => {
    const dirs = tempDirs();
    writeFileSync(join(dirs.cwd, "AGENTS.md"), "PROJECT-RULE-42");
    expect((await firstRequest([], dirs)).system).toContain("PROJECT-RULE-42");
    expect((await firstRequest(["-nc"], dirs)).system).not.toContain("PROJECT-RULE-42");
    expect((await firstRequest(["--no-context-files"], dirs)).system).not.toContain("PROJECT-RULE-42");
  }, LIMIT);

  test.concurrent("--skill loads a skill folder or file; -ns / --no-skills hides discovered ones", async () => {
    const dirs = tempDirs();
    writeSkill(join(dirs.home, "skills"), "found");
    const extra = writeSkill(join(dirs.cwd, "mine"), "explicit");
    const other = writeSkill(join(dirs.cwd, "mine"), "by-file");
    const skills = (cmds: Rec[]) => cmds.filter((c) => c.source === "skill").map((c) => [c.name, c.location]);
    // In the reference's load order: discovered skills, then the command line's in its order.
    expect(skills(await commandsWith(["--skill", extra, "--skill", join(other, "SKILL.md")], dirs))).toEqual([
      ["skill:found", "user"],
      ["skill:explicit", "path"],
      ["skill:by-file", "path"],
    ]);
    expect(skills(await commandsWith(["-ns", "--skill", "mine/explicit"], dirs))).toEqual([["skill:explicit", "path"]]);
    expect(skills(await commandsWith(["--no-skills"], dirs))).toEqual([]);
  }, LIMIT);

  test.concurrent("--prompt-template loads a file or folder; -np / --no-prompt-templates hides discovered ones", async () => {
    const dirs = tempDirs();
    mkdirSync(join(dirs.home, "prompts"));
    writeFileSync(join(dirs.home, "prompts", "found.md"), "Found template");
    mkdirSync(join(dirs.cwd, "tpl"));
    writeFileSync(join(dirs.cwd, "tpl", "one.md"), "Template one");
    writeFileSync(join(dirs.cwd, "two.md"), "Template two");
    const templates = (cmds: Rec[]) => cmds.filter((c) => c.source === "prompt").map((c) => [c.name, c.location]);
    expect(templates(await commandsWith(["--prompt-template", "tpl", "--prompt-template", "two.md"], dirs))).toEqual([
      ["found", "user"],
      ["one", "path"],
      ["two", "path"],
    ]);
    expect(templates(await commandsWith(["-np", "--prompt-template", "two.md"], dirs))).toEqual([["two", "path"]]);
    expect(templates(await commandsWith(["--no-prompt-templates"], dirs))).toEqual([]);
  }, LIMIT);

  test.concurrent("--mode text is print mode", async () => {
    const dirs = tempDirs();
    const replies = join(dirs.cwd, "replies.json");
    writeFileSync(replies, JSON.stringify([{ text: "plain answer" }]));
    const r = await runPion(["--mode", "text", "--provider", "scripted", "--model", replies, "question"], dirs);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("plain answer\n");
  }, LIMIT);

  test.concurrent("--list-models [search] prints the available models and exits", async () => {
    const dirs = tempDirs();
    writeFakeModels(dirs.home, "http://127.0.0.1:9");
    const all = await runPion(["--list-models"], dirs);
    expect(all.code).toBe(0);
    const lines = all.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^provider\s+model\s+context\s+max-out\s+thinking\s+images$/);
    expect(lines.slice(1).map((l) => l.split(/\s+/).slice(0, 2).join("/"))).toEqual([
      "fake/fake-model",
      "fake/fake-plain",
      "fake-openai/fake-chat",
      "fake-responses/fake-resp",
    ]);
    expect(lines[1]).toMatch(/^fake\s+fake-model\s+200K\s+8.2K\s+yes\s+yes$/);
    const some = await runPion(["--list-models", "fkplain"], dirs);
    expect(some.stdout.trimEnd().split("\n").slice(1).map((l) => l.split(/\s+/)[1])).toEqual(["fake-plain"]);
    const none = await runPion(["--list-models", "zzz"], dirs);
    expect(none).toMatchObject({ code: 0, stdout: 'No models matching "zzz"\n' });
    // No search word: the next option is not taken as one.
    expect((await runPion(["--list-models", "--offline"], dirs)).stdout).toBe(all.stdout);
  }, LIMIT);
});

describe("model options, in RPC mode", () => {
  test.concurrent("--model, --provider, --thinking, --models and --api-key set what get_state and cycle_model show", async () => {
    const dirs = tempDirs();
    writeFakeModels(dirs.home, "http://127.0.0.1:9", {
      keyless: { baseUrl: "http://127.0.0.1:9", api: "anthropic-messages", models: [{ id: "needs-key", reasoning: true }] },
    });
    const byPattern = await stateWith(["--model", "fake/fake-model:low"], dirs);
    expect(byPattern.state).toMatchObject({ model: { provider: "fake", id: "fake-model" }, thinkingLevel: "low" });
    const byProvider = await stateWith(["--provider", "fake", "--model", "fake-plain"], dirs);
    expect(byProvider.state.model).toMatchObject({ provider: "fake", id: "fake-plain" });
    expect((await stateWith(["--model", "fake-model", "--thinking", "high"], dirs)).state.thinkingLevel).toBe("high");
    expect((await stateWith(["--model", "needs-key", "--api-key", "sk-test"], dirs)).state.model).toMatchObject({ provider: "keyless" });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake-model", "--models", "fake-model,fake-chat"] });
    expect((await p.request({ type: "cycle_model" })).data).toMatchObject({ model: { id: "fake-chat" }, isScoped: true });
    expect(await p.close()).toBe(0);
  }, LIMIT);
});

describe("the compiled binary", () => {
  const built = existsSync(BINARY);
  test.skipIf(!built && !process.env.CI)("dist/pion takes the reference's flags and an extension's", async () => {
    expect(built).toBe(true);
    const p = new Pion({ binary: true, args: ["--mode", "rpc", "--no-themes", "-xt", "bash", "-nc", "--session-id", "bin-1", "-e", FLAGS_EXT, "--target", "prod"] });
    const st = await p.request({ type: "get_state" });
    expect(st.data.sessionId).toBe("bin-1");
    expect(JSON.parse(st.data.sessionName).atStart).toEqual({ plan: false, target: "prod", unregistered: null });
    expect(await p.close()).toBe(0);
    const bad = await runPion(["--mode", "rpc", "--no-theme"], { ...tempDirs(), binary: true, stdin: "" });
    expect(bad).toMatchObject({ code: 2, stdout: "" });
    expect(bad.stderr).toContain("did you mean --no-themes?");
  }, LIMIT);
});

describe("flags that extensions register", () => {
  test.concurrent("reach the extension that declared them: default in the factory, the command line's value from session_start", async () => {
    const dirs = tempDirs();
    const given = await stateWith(["-e", FLAGS_EXT, "--plan", "--target", "prod"], dirs);
    expect(JSON.parse(given.state.sessionName)).toEqual({
      inFactory: { plan: false, target: "staging" },
      atStart: { plan: true, target: "prod", unregistered: null },
    });
    const inline = await stateWith(["--target=eu", "-e", FLAGS_EXT], tempDirs());
    expect(JSON.parse(inline.state.sessionName).atStart).toEqual({ plan: false, target: "eu", unregistered: null });
    const defaults = await stateWith(["-e", FLAGS_EXT], tempDirs());
    expect(JSON.parse(defaults.state.sessionName).atStart).toEqual({ plan: false, target: "staging", unregistered: null });
  }, LIMIT);

  test.concurrent("--help lists them when their extension would load", async () => {
    const plain = await runPion(["--help"], tempDirs());
    expect(plain.stdout).not.toContain("Extension flags:");
    const r = await runPion(["--help", "-e", FLAGS_EXT], tempDirs());
    expect(r.code).toBe(0);
    const section = r.stdout.split("Extension flags:")[1]!;
    expect(section).toMatch(/\n {2}--plan +Start in plan mode\n/);
    expect(section).toMatch(/\n {2}--target <value> +Where to deploy\n/);
  }, LIMIT);

  test.concurrent("a string flag's value is not taken for a prompt", async () => {
    const dirs = tempDirs();
    const replies = join(dirs.cwd, "replies.json");
    writeFileSync(replies, JSON.stringify([{ text: "answered" }]));
    const r = await runPion(["--mode", "json", "--provider", "scripted", "--model", replies, "-e", FLAGS_EXT, "--target", "prod", "the prompt"], dirs);
    expect(r.code).toBe(0);
    const user = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((x) => x.type === "message_end" && x.message.role === "user");
    expect(user.message.content).toEqual([{ type: "text", text: "the prompt" }]);
  }, LIMIT);

  const rejected: [string, string[], RegExp][] = [
    ["without the extension", ["--plan"], /^pion: Unknown option: --plan/],
    ["an unknown one beside it, with a suggestion", ["-e", FLAGS_EXT, "--tagret", "x"], /^pion: Unknown option: --tagret \(did you mean --target\?\)/],
    ["a string flag without its value", ["-e", FLAGS_EXT, "--target"], /^pion: Option --target needs a value/],
    ["a value given to a switch", ["-e", FLAGS_EXT, "--plan=yes"], /^pion: Option --plan takes no value/],
    ["a built-in typo", ["--no-theme"], /^pion: Unknown option: --no-theme \(did you mean --no-themes\?\)/],
    ["an unknown short option", ["-zz"], /^pion: Unknown option: -zz/],
  ];
  for (const [name, args, err] of rejected) {
    test.concurrent(`rejected: ${name}`, async () => {
      const r = await runPion(["--mode", "rpc", ...args], { ...tempDirs(), stdin: '{"type":"get_state"}\n' });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(err);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }, LIMIT);
  }
});
