/**
 * Three members of the extension API as the reference has them: `pi.getCommands()` lists what
 * `get_commands` lists (extension commands, the built-in /llama and /mcp, prompt templates,
 * skills); `session_shutdown` on a session change names the file the session changes to
 * (`targetSessionFile`: the new file for new / fork / clone, the one resumed); and once an
 * instance is replaced (a session change or ctx.reload()) its captured `pi` and `ctx` throw,
 * while code after `await ctx.reload()` still runs. Each is checked on pion, then the whole
 * scenario against the reference (the fixture logs each step to a file).
 */
import { expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

const MEMBERS = resolve(import.meta.dir, "../fixtures/extensions/members-more.ts");

/** A user prompt template, so the lists hold more than extension and built-in commands. */
function setUp() {
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hello" }] }] });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  mkdirSync(join(dirs.home, "prompts"), { recursive: true });
  writeFileSync(join(dirs.home, "prompts", "review.md"), "---\ndescription: review the change\n---\nReview $1\n");
  const logFile = join(dirname(dirs.home), "members.log");
  return { fake, dirs, logFile };
}

/** Every session change, then /stale and /reload-then; the answers and the fixture's log, paths made comparable. */
async function scenario(agent: RpcAgent, logFile: string, root: string) {
  const data = async (cmd: Rec) => {
    const r = await agent.request(cmd);
    expect(r.success).toBe(true);
    return r.data;
  };
  const listed = (await data({ type: "get_commands" })).commands as Rec[];
  await data({ type: "prompt", message: "/cmds" });
  const from = agent.records.length;
  await data({ type: "prompt", message: "hi" });
  await agent.waitFor("agent_end", from);
  const first = (await data({ type: "get_state" })).sessionFile as string;
  const answers = [await data({ type: "new_session" })];
  await data({ type: "prompt", message: "/stale" });
  answers.push(await data({ type: "switch_session", sessionPath: first }));
  answers.push(await data({ type: "clone" }));
  const [message] = (await data({ type: "get_fork_messages" })).messages as Rec[];
  answers.push(await data({ type: "fork", entryId: message!.entryId }));
  await data({ type: "prompt", message: "/reload-then" });
  expect(await agent.close()).toBe(0);
  // Session files get letters in the order they first appear (their names hold times and random ids).
  const letters = new Map<string, string>();
  const text = readFileSync(logFile, "utf8").replace(/"([^"]*\.jsonl)"/g, (_, file: string) => {
    if (!letters.has(file)) letters.set(file, `F${letters.size + 1}`);
    return JSON.stringify(letters.get(file));
  });
  const steps = text.split("\n").filter(Boolean).map((l) => JSON.parse(l.replaceAll(root, "<root>")) as Rec);
  return { listed: JSON.parse(JSON.stringify(listed).replaceAll(root, "<root>")) as Rec[], answers, steps };
}

const stale = (names: string[]) => Object.fromEntries(names.map((n) => [n, "throws stale"]));

test("getCommands is get_commands; session_shutdown names the next file; replaced instances' pi and ctx throw", async () => {
  const { fake, dirs, logFile } = setUp();
  const p = new Pion({ ...dirs, env: { MEMBERS_LOG: logFile }, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", MEMBERS] });
  const { listed, answers, steps } = await scenario(p, logFile, dirname(dirs.home));
  await fake.stop();
  expect(answers).toEqual([{ cancelled: false }, { cancelled: false }, { cancelled: false }, { text: "hi", cancelled: false }]);

  // 1. The same list as get_commands, built-ins and the prompt template included.
  const [cmds] = steps.filter((s) => s.step === "cmds");
  expect(cmds!.commands).toEqual(listed);
  expect(listed.map((c) => c.name)).toEqual(["cmds", "stale", "reload-then", "llama", "mcp", "review"]);
  // From the first session_start on (and after every change).
  for (const s of steps.filter((s) => s.step === "session_start")) expect(s.commands).toEqual(listed.map((c) => c.name));

  // 2. Each session_shutdown of a change names the file the next session_start has.
  const changes = steps.filter((s) => s.step === "session_shutdown" || s.step === "session_start").map((s) => [s.step, s.id, s.event.reason, s.event.targetSessionFile, s.file]);
  expect(changes).toEqual([
    ["session_start", 1, "startup", undefined, "F1"],
    ["session_shutdown", 1, "new", "F2", "F1"],
    ["session_start", 2, "new", undefined, "F2"],
    ["session_shutdown", 2, "resume", "F1", "F2"],
    ["session_start", 3, "resume", undefined, "F1"],
    ["session_shutdown", 3, "fork", "F3", "F1"],
    ["session_start", 4, "fork", undefined, "F3"],
    ["session_shutdown", 4, "fork", "F4", "F3"],
    ["session_start", 5, "fork", undefined, "F4"],
    ["session_shutdown", 5, "reload", undefined, "F4"],
    // ctx.reload() evaluates the module again: its count of factory runs starts over.
    ["session_start", 1, "reload", undefined, "F4"],
    ["session_shutdown", 1, "quit", undefined, "F4"],
  ]);

  // 3. The replaced instance's pi and ctx throw; the current one's work. After await ctx.reload()
  // the command goes on, its ctx and pi now stale; an object read from ctx before still answers.
  const [tried] = steps.filter((s) => s.step === "stale");
  expect(tried!.tries).toEqual({
    ...stale(["pi.getCommands", "pi.sendMessage", "pi.events.emit", "pi.on", "ctx.cwd", "ctx.ui", "ctx.isIdle", "ctx.sessionManager"]),
    "current ctx.cwd": "ok",
    "current pi.getCommands": "ok",
  });
  const [after] = steps.filter((s) => s.step === "after reload");
  expect(after).toEqual({ id: 5, step: "after reload", tries: { ...stale(["ctx.cwd", "ctx.ui", "ctx.sessionManager", "ctx.reload", "pi.getCommands"]), "manager read before": "ok" } });
});

/** pion's get_commands records keep the older spec's `path` and `location` beside sourceInfo; the reference's have neither. */
const withoutPath = (list: Rec[]) => list.map(({ path: _path, location: _location, ...rest }) => rest);

describeWith("the three members, pion against the reference", NO_REFERENCE, () => {
  test("the same command lists, shutdown events, stale members and answers", async () => {
    const run = async (which: "pion" | "reference") => {
      const { fake, dirs, logFile } = setUp();
      const agent =
        which === "pion"
          ? new Pion({ ...dirs, env: { MEMBERS_LOG: logFile }, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", MEMBERS] })
          : referenceRpc(["--mode", "rpc", "--provider", "fake", "--model", "fake-model", "-e", MEMBERS], dirs, { MEMBERS_LOG: logFile });
      const out = await scenario(agent, logFile, dirname(dirs.home));
      await fake.stop();
      return {
        ...out,
        listed: withoutPath(out.listed),
        steps: out.steps.map((s) => (s.step === "cmds" ? { ...s, commands: withoutPath(s.commands) } : s)),
      };
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(mine).toEqual(theirs);
  });
});
