import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, realpathSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { BINARY, Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const NOTICE = "skipped this folder's own resources";
const MODEL = ["--model", "fake/fake-model"];
/** These tests start pion several times each; on a loaded 2-core machine that can pass 5 s. */
const SLOW = 30_000;

function write(path: string, text: string) {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
}

/**
 * A checked-out repository as an attacker would ship it: an extension that writes a marker file
 * the moment it loads (and registers a command), a prompt template, a skill and settings.
 */
function hostileProject() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const root = realpathSync(dirname(dirs.cwd));
  const cwd = realpathSync(dirs.cwd);
  const marker = join(root, "extension-ran");
  write(
    join(cwd, ".pion", "extensions", "evil.ts"),
    [
      `import { appendFileSync } from "node:fs";`,
      `export default function (pi) {`,
      `  appendFileSync(${JSON.stringify(marker)}, "ran\\n");`,
      `  pi.registerCommand("evil", { description: "from the folder", handler: async () => {} });`,
      `  pi.on("session_start", (_e, ctx) => appendFileSync(${JSON.stringify(marker)}, \`isProjectTrusted=\${ctx.isProjectTrusted()}\\n\`));`,
      `}`,
    ].join("\n"),
  );
  write(join(cwd, ".pion", "prompts", "greet.md"), "---\ndescription: Greet\n---\nSay hello to $1 from the template.");
  write(join(cwd, ".pion", "skills", "proj-skill", "SKILL.md"), "---\nname: proj-skill\ndescription: A project skill\n---\nDo project things.");
  write(join(cwd, ".pion", "settings.json"), JSON.stringify({ defaultThinkingLevel: "high" }));
  // A skill in a parent folder's .agents/skills (no git repository here, so every parent is searched).
  write(join(root, ".agents", "skills", "parent-skill", "SKILL.md"), "---\nname: parent-skill\ndescription: From a parent\n---\nUp there.");
  write(join(cwd, "AGENTS.md"), "Context files load regardless of trust.");
  return { fake, home: dirs.home, cwd, root, marker, ran: () => existsSync(marker) };
}

type Project = ReturnType<typeof hostileProject>;

/** What one RPC run saw of the folder: commands, get_state, whether the extension ran, stderr. */
async function rpcRun(p: Project, args: string[], binary = false) {
  const pion = new Pion({ home: p.home, cwd: p.cwd, args: ["--mode", "rpc", ...args], binary });
  // The folder's commands: the built-in ones (/llama, /mcp) are there whatever the trust.
  const commands = (await pion.request({ type: "get_commands" })).data.commands.filter((c: Rec) => c.sourceInfo.source !== "builtin").map((c: Rec) => c.name);
  const state = (await pion.request({ type: "get_state" })).data;
  expect(await pion.close()).toBe(0);
  return { commands, state, ran: p.ran(), stderr: pion.stderr, notices: pion.stderr.split(NOTICE).length - 1 };
}

// Skills in the reference's load order: the project's .pion/skills before the .agents/skills above it.
const LOADED = ["evil", "greet", "skill:proj-skill", "skill:parent-skill"];

describe("project trust in RPC mode", () => {
  test.concurrent("by default the folder's extension, template, skill and settings are skipped, said once on stderr", async () => {
    const p = hostileProject();
    const r = await rpcRun(p, MODEL);
    expect(r.commands).toEqual([]);
    expect(r.ran).toBe(false);
    expect(r.state).toMatchObject({ projectTrust: "untrusted", thinkingLevel: "medium" });
    expect(r.notices).toBe(1);
    expect(r.stderr).toContain(`pion trust ${p.cwd}`);
    expect(r.stderr).toContain(".pion/extensions");
    await p.fake.stop();
  }, SLOW);

  test.concurrent("--approve loads them for this run", async () => {
    const p = hostileProject();
    const r = await rpcRun(p, ["--approve", ...MODEL]);
    expect(r.commands).toEqual(LOADED);
    expect(readFileSync(p.marker, "utf8")).toBe("ran\nisProjectTrusted=true\n");
    expect(r.state).toMatchObject({ projectTrust: "trusted", thinkingLevel: "high" });
    expect(r.notices).toBe(0);
    const short = await rpcRun(hostileProject(), ["-a", ...MODEL]);
    expect(short.commands).toEqual(LOADED);
    await p.fake.stop();
  }, SLOW);

  test.concurrent("a decision saved for an ancestor folder applies; one saved as not trusted skips", async () => {
    const p = hostileProject();
    expect((await runPion(["trust", p.root], p)).code).toBe(0);
    const r = await rpcRun(p, MODEL);
    expect(r.commands).toEqual(LOADED);
    expect(r.state.projectTrust).toBe("trusted");
    writeFileSync(join(p.home, "trust.json"), JSON.stringify({ [p.root]: true, [p.cwd]: false }));
    const denied = await rpcRun(p, MODEL);
    expect(denied.commands).toEqual([]);
    expect(denied.stderr).toContain("saved as not trusted");
    await p.fake.stop();
  }, SLOW);

  test.concurrent('defaultProjectTrust: "always" in PION_HOME loads; "never" does not', async () => {
    const p = hostileProject();
    writeSettings(p.home, { defaultProjectTrust: "always" });
    expect((await rpcRun(p, MODEL)).commands).toEqual(LOADED);
    writeSettings(p.home, { defaultProjectTrust: "never" });
    expect((await rpcRun(p, MODEL)).commands).toEqual([]);
    await p.fake.stop();
  }, SLOW);

  test.concurrent("--no-approve wins over --approve, a saved decision and defaultProjectTrust", async () => {
    const p = hostileProject();
    writeSettings(p.home, { defaultProjectTrust: "always" });
    expect((await runPion(["trust"], p)).code).toBe(0);
    for (const flags of [["--no-approve"], ["--approve", "--no-approve"], ["-na", "-a"]]) {
      const r = await rpcRun(p, [...flags, ...MODEL]);
      expect(r.commands).toEqual([]);
      expect(r.state.projectTrust).toBe("untrusted");
      expect(r.stderr).toContain("--no-approve");
    }
    expect(p.ran()).toBe(false);
    await p.fake.stop();
  }, SLOW);

  test.concurrent("a project settings.json cannot grant its own folder trust", async () => {
    const p = hostileProject();
    write(join(p.cwd, ".pion", "settings.json"), JSON.stringify({ defaultProjectTrust: "always" }));
    const r = await rpcRun(p, MODEL);
    expect(r.commands).toEqual([]);
    expect(r.ran).toBe(false);
    // Trusted, its settings load, but that key still does not count.
    const approved = await rpcRun(p, ["--approve", ...MODEL]);
    expect(approved.stderr).toContain("ignoring defaultProjectTrust");
    await p.fake.stop();
  }, SLOW);

  test.concurrent("a -e path inside an untrusted folder loads (the user named it); nothing else of the folder does", async () => {
    const p = hostileProject();
    const r = await rpcRun(p, ["-e", ".pion/extensions/evil.ts", ...MODEL]);
    expect(readFileSync(p.marker, "utf8")).toBe("ran\nisProjectTrusted=false\n");
    expect(r.commands).toEqual(["evil"]);
    expect(r.state.projectTrust).toBe("untrusted");
    await p.fake.stop();
  }, SLOW);

  test.concurrent("a folder with nothing to trust is none and says nothing; get_capabilities lists the feature", async () => {
    const { home, cwd } = tempDirs();
    mkdirSync(join(cwd, ".pion"));
    const pion = new Pion({ home, cwd, args: ["--mode", "rpc"] });
    expect((await pion.request({ type: "get_state" })).data.projectTrust).toBe("none");
    expect((await pion.request({ type: "get_capabilities" })).data.features.projectTrust).toBe(true);
    await pion.close();
    expect(pion.stderr).not.toContain(NOTICE);
  }, SLOW);
});

describe("project trust in print and JSON mode", () => {
  const sent = (p: Project, i: number) => {
    const body = p.fake.requests[i]!.body as { system: { text: string }[]; messages: { content: Rec[] }[] };
    return { system: body.system[0]!.text, user: body.messages[0]!.content[0]!.text as string };
  };

  test.concurrent("print mode: skipped by default (stdout is the answer alone), loaded with --approve", async () => {
    const p = hostileProject();
    p.fake.enqueue({ blocks: [{ type: "text", text: "answer one" }] }, { blocks: [{ type: "text", text: "answer two" }] });
    const skipped = await runPion(["-p", ...MODEL, "/greet Ada"], p);
    expect(skipped).toMatchObject({ code: 0, stdout: "answer one\n" });
    expect(skipped.stderr.split(NOTICE).length - 1).toBe(1);
    expect(p.ran()).toBe(false);
    expect(sent(p, 0).user).toBe("/greet Ada");
    expect(sent(p, 0).system).not.toContain("proj-skill");
    expect(sent(p, 0).system).toContain("Context files load regardless of trust.");
    const loaded = await runPion(["-p", "--approve", ...MODEL, "/greet Ada"], p);
    expect(loaded).toMatchObject({ code: 0, stdout: "answer two\n" });
    expect(loaded.stderr).not.toContain(NOTICE);
    expect(p.ran()).toBe(true);
    expect(sent(p, 1).user).toBe("Say hello to Ada from the template.");
    expect(sent(p, 1).system).toContain("proj-skill");
    await p.fake.stop();
  }, SLOW);

  const lines = (out: string) => out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as Rec);

  test.concurrent("JSON mode: a saved decision loads the folder's template and extension", async () => {
    const p = hostileProject();
    expect((await runPion(["trust", p.cwd], p)).code).toBe(0);
    p.fake.enqueue({ blocks: [{ type: "text", text: "one" }] });
    const loaded = await runPion(["--mode", "json", ...MODEL, "/greet Bo"], p);
    expect(loaded.code).toBe(0);
    expect(lines(loaded.stdout)[0]!.type).toBe("session");
    expect(sent(p, 0).user).toBe("Say hello to Bo from the template.");
    expect(p.ran()).toBe(true);
    expect(loaded.stderr).not.toContain(NOTICE);
    await p.fake.stop();
  }, SLOW);

  test.concurrent("JSON mode: --no-approve skips a saved decision; stdout holds only records", async () => {
    const p = hostileProject();
    expect((await runPion(["trust", p.cwd], p)).code).toBe(0);
    p.fake.enqueue({ blocks: [{ type: "text", text: "two" }] });
    const skipped = await runPion(["--mode", "json", "--no-approve", ...MODEL, "/greet Bo"], p);
    expect(skipped.code).toBe(0);
    expect(lines(skipped.stdout).every((r) => typeof r.type === "string")).toBe(true);
    expect(sent(p, 0).user).toBe("/greet Bo");
    expect(p.ran()).toBe(false);
    expect(skipped.stderr.split(NOTICE).length - 1).toBe(1);
    await p.fake.stop();
  }, SLOW);
});

describe("pion trust", () => {
  test.concurrent("trust, list, revoke: a round trip through trust.json that pion then honours", async () => {
    const p = hostileProject();
    const run = (...args: string[]) => runPion(["trust", ...args], p);
    expect(await run("--list")).toMatchObject({ code: 0, stdout: expect.stringContaining("No saved trust decisions") });
    expect(await run()).toMatchObject({ code: 0, stdout: `Trusted ${p.cwd}: its own .pion/ resources load from now on.\n` });
    expect(JSON.parse(readFileSync(join(p.home, "trust.json"), "utf8"))).toEqual({ [p.cwd]: true });
    expect(JSON.parse((await run("--list", "--json")).stdout)).toEqual([{ path: p.cwd, trusted: true }]);
    expect((await rpcRun(p, MODEL)).state.projectTrust).toBe("trusted");
    expect(await run("--revoke")).toMatchObject({ code: 0, stdout: expect.stringContaining("its saved decision is removed") });
    expect(JSON.parse(readFileSync(join(p.home, "trust.json"), "utf8"))).toEqual({});
    expect((await rpcRun(p, MODEL)).state.projectTrust).toBe("untrusted");
    await p.fake.stop();
  }, SLOW);

  test.concurrent("revoking a folder under a trusted parent saves it as not trusted", async () => {
    const p = hostileProject();
    const run = (...args: string[]) => runPion(["trust", ...args], p);
    expect((await run("..")).code).toBe(0);
    expect(await run("--revoke", ".")).toMatchObject({ code: 0, stdout: expect.stringContaining(`since ${p.root} stays trusted`) });
    expect(JSON.parse((await run("--list", "--json")).stdout)).toEqual([
      { path: p.root, trusted: true },
      { path: p.cwd, trusted: false },
    ]);
    expect(await run("--revoke", ".")).toMatchObject({ code: 0, stdout: expect.stringContaining(`since ${p.root} stays trusted`) });
    expect((await rpcRun(p, MODEL)).commands).toEqual([]);
    await p.fake.stop();
  }, SLOW);

  test.concurrent("bad use is a clear error and changes nothing", async () => {
    const p = hostileProject();
    const missing = await runPion(["trust", join(p.root, "no-such-folder")], p);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("no-such-folder");
    expect((await runPion(["trust", "--bogus"], p)).code).toBe(2);
    expect((await runPion(["trust", "a", "b"], p)).code).toBe(2);
    writeFileSync(join(p.home, "trust.json"), "{damaged");
    const damaged = await runPion(["trust"], p);
    expect(damaged.code).toBe(1);
    expect(damaged.stderr).toContain("Invalid trust store");
    expect(readFileSync(join(p.home, "trust.json"), "utf8")).toBe("{damaged");
    // pion itself refuses to start on a damaged store rather than guess a decision.
    const rpc = await runPion(["--mode", "rpc"], { ...p, stdin: "" });
    expect(rpc.code).toBe(1);
    expect(rpc.stderr).toContain("Invalid trust store");
    await p.fake.stop();
  }, SLOW);
});

describe("project trust in dist/pion", () => {
  // CI builds the binary before the tests; locally it may be missing.
  test.skipIf(!existsSync(BINARY) && !process.env.CI)("the compiled binary gates the folder and runs pion trust", async () => {
    const p = hostileProject();
    const skipped = await rpcRun(p, MODEL, true);
    expect([skipped.commands, skipped.state.projectTrust, skipped.ran, skipped.notices]).toEqual([[], "untrusted", false, 1]);
    expect((await runPion(["trust"], { ...p, binary: true })).code).toBe(0);
    const loaded = await rpcRun(p, MODEL, true);
    expect([loaded.commands, loaded.state.projectTrust, loaded.ran]).toEqual([LOADED, "trusted", true]);
    await p.fake.stop();
  }, SLOW);
});
