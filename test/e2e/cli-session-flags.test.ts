/**
 * The reference's session options through the binary: --session-id, --fork, the session
 * directory from the environment, --export, and the combinations the reference rejects.
 */
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { Pion, runPion, tempDirs, type Rec } from "../support/pion.ts";

type Dirs = { home: string; cwd: string };

/** Generous: several processes per test, on a machine other test runs share. */
const LIMIT = 60_000;

const FIXTURE = resolve(import.meta.dir, "../fixtures/reference-v3-fork-parent.jsonl");

/** A scripted model so prompts run without a server: `--provider scripted --model <file>`. */
function scripted(dirs: Dirs, replies: string[]): string[] {
  const file = join(dirs.cwd, `replies-${Math.random().toString(16).slice(2)}.json`);
  writeFileSync(file, JSON.stringify(replies.map((text) => ({ text }))));
  return ["--provider", "scripted", "--model", file];
}

/** Start with `args`, optionally run one prompt, and return get_state. */
async function run(dirs: Dirs, args: string[], opts: { prompt?: string; env?: Record<string, string> } = {}): Promise<Rec> {
  const p = new Pion({ ...dirs, env: opts.env, args: ["--mode", "rpc", ...args] });
  if (opts.prompt) {
    await p.request({ type: "prompt", message: opts.prompt });
    await p.waitFor("agent_settled");
  }
  const state = await p.request({ type: "get_state" });
  expect(state.success).toBe(true);
  const messages = await p.request({ type: "get_messages" });
  expect(await p.close()).toBe(0);
  return { ...state.data, messages: messages.data.messages };
}

const header = (file: string) => JSON.parse(readFileSync(file, "utf8").split("\n")[0]!);

describe("--session-id", () => {
  test.concurrent("creates the session with that id, then opens it", async () => {
    const dirs = tempDirs();
    const first = await run(dirs, ["--session-id", "my-run.1", ...scripted(dirs, ["first answer"])], { prompt: "hello" });
    expect(first.sessionId).toBe("my-run.1");
    expect(first.sessionFile).toEndWith("_my-run.1.jsonl");
    expect(header(first.sessionFile).id).toBe("my-run.1");
    const again = await run(dirs, ["--session-id", "my-run.1"]);
    expect(again).toMatchObject({ sessionId: "my-run.1", sessionFile: first.sessionFile, messageCount: 2 });
    expect(again.messages.map((m: Rec) => m.role)).toEqual(["user", "assistant"]);
  }, LIMIT);

  test.concurrent("with --no-session: an in-memory session of that id", async () => {
    const state = await run(tempDirs(), ["--no-session", "--session-id", "abc"]);
    expect(state.sessionId).toBe("abc");
    expect(state.sessionFile).toBeUndefined();
  }, LIMIT);

  test.concurrent("another folder's session of that id is not shadowed", async () => {
    const dirs = tempDirs();
    await run(dirs, ["--session-id", "shared", ...scripted(dirs, ["x"])], { prompt: "hi" });
    const elsewhere = join(dirs.cwd, "sub");
    mkdirSync(elsewhere);
    const r = await runPion(["--mode", "rpc", "--session-id", "shared"], { home: dirs.home, cwd: elsewhere, stdin: "" });
    expect(r.code).toBe(1);
    expect(r.stderr).toStartWith(`pion: Session 'shared' belongs to ${dirs.cwd}`);
  }, LIMIT);

  for (const bad of ["-x", ".dot", "trailing-", "sp ace", "a/b"]) {
    test.concurrent(`rejects the id ${JSON.stringify(bad)}`, async () => {
      const r = await runPion(["--mode", "rpc", `--session-id=${bad}`], { ...tempDirs(), stdin: "" });
      expect(r.code).toBe(2);
      expect(r.stderr).toStartWith(`pion: Invalid --session-id "${bad}"`);
      expect(r.stderr.trim().split("\n")).toHaveLength(1);
    }, LIMIT);
  }
});

describe("--fork", () => {
  test.concurrent("copies a session (by id or file) into a new one of this folder that names its source", async () => {
    const dirs = tempDirs();
    const source = await run(dirs, scripted(dirs, ["one", "two"]), { prompt: "first" });
    for (const target of [source.sessionId, source.sessionFile]) {
      const fork = await run(dirs, ["--fork", target]);
      expect(fork.sessionId).not.toBe(source.sessionId);
      expect(fork.messages).toEqual(source.messages);
      expect(header(fork.sessionFile)).toMatchObject({ id: fork.sessionId, cwd: dirs.cwd, parentSession: source.sessionFile });
    }
    // The source is untouched.
    expect((await run(dirs, ["--session", source.sessionId])).messageCount).toBe(2);
  }, LIMIT);

  test.concurrent("a reference agent's file, with --session-id choosing the new id", async () => {
    const dirs = tempDirs();
    const file = join(dirs.cwd, "ref.jsonl");
    copyFileSync(FIXTURE, file);
    const fork = await run(dirs, ["--fork", file, "--session-id", "forked-1"]);
    expect(fork.sessionId).toBe("forked-1");
    expect(fork.messageCount).toBeGreaterThan(0);
    // An id that exists already is refused.
    const r = await runPion(["--mode", "rpc", "--fork", file, "--session-id", "forked-1"], { ...dirs, stdin: "" });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("pion: Session already exists with id 'forked-1'\n");
  }, LIMIT);

  test.concurrent("--fork and --session take the start of an id: this folder's first, then any folder's", async () => {
    const dirs = tempDirs();
    const here = await run(dirs, ["--session-id", "alpha-here", ...scripted(dirs, ["a"])], { prompt: "q" });
    const sub = join(dirs.cwd, "sub");
    mkdirSync(sub);
    const subDirs = { home: dirs.home, cwd: sub };
    const there = await run(subDirs, ["--session-id", "alpha-there", ...scripted(subDirs, ["b"])], { prompt: "q" });
    expect((await run(dirs, ["--session", "alpha"])).sessionId).toBe(here.sessionId);
    expect((await run(subDirs, ["--session", "alpha"])).sessionId).toBe(there.sessionId);
    expect((await run(dirs, ["--session", "alpha-th"])).sessionId).toBe(there.sessionId);
    const fork = await run(dirs, ["--fork", "alpha-t"]);
    expect(header(fork.sessionFile).parentSession).toBe(there.sessionFile);
  }, LIMIT);

  test.concurrent("a missing source is a start-up error", async () => {
    const r = await runPion(["--mode", "rpc", "--fork", "no-such-session"], { ...tempDirs(), stdin: "" });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("pion: Session not found: no-such-session\n");
  }, LIMIT);
});

describe("combinations the reference rejects", () => {
  const cases: [string[], string][] = [
    [["--fork", "x", "--session", "y"], "--fork cannot be combined with --session"],
    [["--fork", "x", "--continue"], "--fork cannot be combined with --continue"],
    [["--fork", "x", "-c", "--no-session"], "--fork cannot be combined with --continue, --no-session"],
    [["--fork", "x", "-r"], "--fork cannot be combined with --resume"],
    [["--session-id", "a", "--session", "y"], "--session-id cannot be combined with --session"],
    [["--session-id", "a", "-c"], "--session-id cannot be combined with --continue"],
    [["--session-id", "a", "--resume"], "--session-id cannot be combined with --resume"],
  ];
  for (const [args, message] of cases) {
    test.concurrent(args.join(" "), async () => {
      const r = await runPion(["--mode", "rpc", ...args], { ...tempDirs(), stdin: '{"type":"get_state"}\n' });
      expect(r).toEqual({ code: 2, stdout: "", stderr: `pion: ${message} (see pion --help)\n` });
    }, LIMIT);
  }
});

describe("the sessions directory from the environment", () => {
  test.concurrent("PI_CODING_AGENT_SESSION_DIR when no --session-dir; PION_SESSION_DIR wins; --session-dir wins over both", async () => {
    const dirs = tempDirs();
    const piDir = join(dirs.cwd, "pi-sessions");
    const pionDir = join(dirs.cwd, "pion-sessions");
    const flagDir = join(dirs.cwd, "flag-sessions");
    const fromPi = await run(dirs, [], { env: { PI_CODING_AGENT_SESSION_DIR: piDir } });
    expect(fromPi.sessionFile).toStartWith(`${piDir}/`);
    const both = await run(dirs, [], { env: { PI_CODING_AGENT_SESSION_DIR: piDir, PION_SESSION_DIR: pionDir } });
    expect(both.sessionFile).toStartWith(`${pionDir}/`);
    const flag = await run(dirs, ["--session-dir", flagDir], { env: { PI_CODING_AGENT_SESSION_DIR: piDir, PION_SESSION_DIR: pionDir } });
    expect(flag.sessionFile).toStartWith(`${flagDir}/`);
  }, LIMIT);

  test.concurrent("PI_CODING_AGENT_DIR is the home when PION_HOME is not set", async () => {
    const dirs = tempDirs();
    const agentDir = join(dirs.cwd, "agent-dir");
    mkdirSync(agentDir);
    writeFileSync(join(agentDir, "settings.json"), JSON.stringify({ steeringMode: "all" }));
    const state = await run(dirs, [], { env: { PION_HOME: "", PI_CODING_AGENT_DIR: agentDir } });
    expect(state.sessionFile).toStartWith(`${agentDir}/sessions/`);
    expect(state.steeringMode).toBe("all");
    // PION_HOME wins.
    expect((await run(dirs, [], { env: { PI_CODING_AGENT_DIR: agentDir } })).sessionFile).toStartWith(`${dirs.home}/sessions/`);
  }, LIMIT);

  test.concurrent("`pion sessions` reads the same directory", async () => {
    const dirs = tempDirs();
    const piDir = join(dirs.cwd, "pi-sessions");
    const made = await run(dirs, ["--session-id", "env-dir", ...scripted(dirs, ["a"])], { prompt: "q", env: { PI_CODING_AGENT_SESSION_DIR: piDir } });
    expect(made.sessionFile).toStartWith(`${piDir}/`);
    const r = await runPion(["sessions", "list", "--json"], { ...dirs, env: { PI_CODING_AGENT_SESSION_DIR: piDir } });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"env-dir"');
  }, LIMIT);
});

describe("--export <file> [output]", () => {
  test.concurrent("writes the session's HTML where asked, or under the default name, and exits", async () => {
    const dirs = tempDirs();
    const made = await run(dirs, ["--name", "Export me", ...scripted(dirs, ["the <b>answer</b>"])], { prompt: "the question" });
    const out = await runPion(["--export", made.sessionFile, "out/page.html"], dirs);
    const target = join(dirs.cwd, "out/page.html");
    expect(out).toEqual({ code: 0, stdout: `Exported to: ${target}\n`, stderr: "" });
    const html = readFileSync(target, "utf8");
    expect(html).toContain("the question");
    expect(html).toContain("the &lt;b&gt;answer&lt;/b&gt;");
    expect(html).toContain("Export me");
    const byDefault = await runPion(["--export", made.sessionFile], dirs);
    expect(byDefault.stdout).toBe(`Exported to: ${join(dirs.cwd, "pion-session-export-me.html")}\n`);
    expect(existsSync(join(dirs.cwd, "pion-session-export-me.html"))).toBe(true);
  }, LIMIT);

  test.concurrent("a reference agent's file; a missing file is an error", async () => {
    const dirs = tempDirs();
    const r = await runPion(["--export", FIXTURE, "ref.html"], dirs);
    expect(r.code).toBe(0);
    expect(readFileSync(join(dirs.cwd, "ref.html"), "utf8")).toContain("<!DOCTYPE html>");
    const missing = await runPion(["--export", "nope.jsonl"], dirs);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe(`pion: Session file not found: ${join(dirs.cwd, "nope.jsonl")}\n`);
  }, LIMIT);
});

describe("options pion had before, in their reference spellings", () => {
  test.concurrent("-n / --name, -c / --continue, --session, --no-session", async () => {
    const dirs = tempDirs();
    const named = await run(dirs, ["-n", "short name", ...scripted(dirs, ["a"])], { prompt: "q" });
    expect(named.sessionName).toBe("short name");
    const continued = await run(dirs, ["-c"]);
    expect(continued.sessionId).toBe(named.sessionId);
    expect((await run(dirs, ["--continue", "--name", "long name"])).sessionName).toBe("long name");
    expect((await run(dirs, ["--session", named.sessionFile])).sessionId).toBe(named.sessionId);
    expect((await run(dirs, ["--no-session"])).sessionFile).toBeUndefined();
  }, LIMIT);
});
