/**
 * `pion update`: the configured packages brought up to date as the reference's `pi update
 * --extensions` does, with the machine's real npm against a local registry and real git against a
 * local git server (an unpinned npm package or range at its newest version, a pinned one left
 * alone, a git package moved to its default branch's or its branch's newest commit, a tag left
 * where it is, a local path untouched); one package by its source; the project's packages only
 * when its trust is saved or --approve is given; `--models` as `pion models refresh`; pion itself
 * refused with what to do instead. The last block runs the same update with the reference.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";
import { git, publishRepo, pushCommit, startGitServer } from "../support/git-server.ts";
import { startNpmRegistry } from "../support/npm-registry.ts";
import { runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { NO_REFERENCE } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

const gitServer = startGitServer();
const registry = startNpmRegistry();
afterAll(() => {
  gitServer.stop();
  registry.stop();
});

const EXT = "export default function (pi) {}\n";
const MANIFEST = { pi: { extensions: ["./e.js"] } };
const env = registry.env;
const SELF = "pion: pion cannot update itself: it is a single release binary. Download the newer binary for this system and put it in place of this one (see README, Release binaries).\n";

const npmVersion = (settingsDir: string, name: string): string => JSON.parse(readFileSync(join(settingsDir, "npm", "node_modules", name, "package.json"), "utf8")).version;
const gitCheckout = (settingsDir: string, repo: string): string => join(settingsDir, "git", "127.0.0.1", ...repo.split("/"));

/** The packages of a scenario, published at their first version, and the sources that name them. */
async function publishScenario(prefix: string) {
  for (const name of ["a", "b", "c"]) await registry.publish(`${prefix}-${name}`, "1.0.0", { "e.js": EXT }, MANIFEST);
  const files = { "package.json": JSON.stringify({ name: `${prefix}-g`, version: "1.0.0", ...MANIFEST }), "e.js": EXT };
  const [first] = await publishRepo(gitServer, `${prefix}/moving`, [files]);
  await publishRepo(gitServer, `${prefix}/tagged`, [files], { 0: "v1" });
  await publishRepo(gitServer, `${prefix}/branch`, [files]);
  await git(join(gitServer.root, `${prefix}/branch.git`), "branch", "dev");
  await git(join(gitServer.root, `${prefix}/branch.git`), "update-server-info");
  const repo = (name: string) => `${gitServer.url}/${prefix}/${name}.git`;
  const sources = [`npm:${prefix}-a`, `npm:${prefix}-b@1.0.0`, `npm:${prefix}-c@^1.0.0`, repo("moving"), `${repo("tagged")}@v1`, `${repo("branch")}@dev`, "./local-pkg"];
  return { first: first!, sources, repo };
}

/** Newer versions of everything: npm releases, a commit on each repository's default branch, and the dev branch moved to it. */
async function publishNewer(prefix: string): Promise<{ moving: string; branch: string }> {
  await registry.publish(`${prefix}-a`, "1.1.0", { "e.js": EXT }, MANIFEST);
  await registry.publish(`${prefix}-b`, "1.1.0", { "e.js": EXT }, MANIFEST);
  await registry.publish(`${prefix}-c`, "1.2.0", { "e.js": EXT }, MANIFEST);
  const moving = await pushCommit(gitServer, `${prefix}/moving`, { "e.js": `${EXT}// 2\n` });
  await pushCommit(gitServer, `${prefix}/tagged`, { "e.js": `${EXT}// 2\n` });
  const branch = await pushCommit(gitServer, `${prefix}/branch`, { "e.js": `${EXT}// 2\n` });
  const bare = join(gitServer.root, `${prefix}/branch.git`);
  await git(bare, "update-ref", "refs/heads/dev", branch);
  await git(bare, "update-server-info");
  return { moving, branch };
}

test("--extensions moves what is not pinned and reports each change; one source; unknown sources and pion itself are errors", async () => {
  const { home, cwd } = tempDirs();
  const { first, sources, repo } = await publishScenario("u1");
  mkdirSync(join(cwd, "local-pkg"));
  for (const source of sources) expect(await runPion(["install", source], { home, cwd, env })).toMatchObject({ code: 0 });
  const tagged = await git(gitCheckout(home, "u1/tagged"), "rev-parse", "HEAD");

  expect(await runPion(["update", "--extensions"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Packages are already up to date\n" });

  const newer = await publishNewer("u1");
  const r = await runPion(["update", "--extensions"], { home, cwd, env });
  expect([r.code, r.stdout]).toEqual([
    0,
    "Updated 4 packages:\n" +
      "  npm:u1-a 1.0.0 -> 1.1.0\n" +
      "  npm:u1-c@^1.0.0 1.0.0 -> 1.2.0\n" +
      `  ${repo("moving")} ${first.slice(0, 7)} -> ${newer.moving.slice(0, 7)}\n` +
      `  ${repo("branch")}@dev ${first.slice(0, 7)} -> ${newer.branch.slice(0, 7)}\n`,
  ]);
  // The two npm packages that moved went to one npm install, said once.
  expect(r.stderr).toContain("Updating user npm packages...\n");
  expect(["u1-a", "u1-b", "u1-c"].map((n) => npmVersion(home, n))).toEqual(["1.1.0", "1.0.0", "1.2.0"]);
  expect(await git(gitCheckout(home, "u1/moving"), "rev-parse", "HEAD")).toBe(newer.moving);
  expect(await git(gitCheckout(home, "u1/tagged"), "rev-parse", "HEAD")).toBe(tagged);
  expect(readFileSync(join(gitCheckout(home, "u1/tagged"), "e.js"), "utf8")).toBe(EXT);
  // The settings are as they were: an update never moves a configured ref.
  expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8")).packages).toEqual([...sources.slice(0, -1), "../project/local-pkg"]);

  // One package, already up to date: the registry is asked, nothing is installed.
  registry.lookups.length = 0;
  expect(await runPion(["update", "npm:u1-a"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "npm:u1-a is already up to date\n", stderr: "" });
  expect(registry.lookups).toEqual(["u1-a"]);
  expect(await runPion(["update", "--extension", "./local-pkg"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "./local-pkg is already up to date\n" });
  const none = await runPion(["update", "npm:nope"], { home, cwd, env });
  expect([none.code, none.stdout, none.stderr]).toEqual([1, "", "pion: No matching package found for npm:nope\n"]);
  const bare = await runPion(["update", "u1-a"], { home, cwd, env });
  expect([bare.code, bare.stderr]).toEqual([1, "pion: No matching package found for u1-a. Did you mean npm:u1-a?\n"]);

  // pion itself: refused, with what to do; with --all the packages are updated first.
  for (const args of [[], ["--self"], ["self"], ["pi"]]) {
    const self = await runPion(["update", ...args], { home, cwd, env });
    expect([self.code, self.stderr]).toEqual([1, SELF]);
    expect(self.stdout).toBe(args.length === 0 ? "Packages are not updated with pion itself: run pion update --extensions to update them.\n" : "");
  }
  const all = await runPion(["update", "--all"], { home, cwd, env });
  expect([all.code, all.stdout]).toEqual([1, "Packages are already up to date\n"]);
  expect(all.stderr).toEndWith(`@dev...\n${SELF}`);

  // Offline, nothing is fetched, and it says so; an unknown source is still an error.
  await registry.publish("u1-a", "1.3.0", { "e.js": EXT }, MANIFEST);
  registry.lookups.length = 0;
  expect(await runPion(["update", "--extensions", "--offline"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Skipped package updates (offline mode)\n" });
  expect(await runPion(["update", "--extensions"], { home, cwd, env: { ...env, PI_OFFLINE: "1" } })).toMatchObject({ code: 0, stdout: "Skipped package updates (offline mode)\n" });
  expect(await runPion(["update", "npm:nope"], { home, cwd, env: { ...env, PI_OFFLINE: "1" } })).toMatchObject({ code: 1 });
  expect([registry.lookups, npmVersion(home, "u1-a")]).toEqual([[], "1.1.0"]);
}, 180_000);

test("a project's packages are updated only when its trust is saved or --approve is given", async () => {
  const { home, cwd } = tempDirs();
  await registry.publish("u2-user", "1.0.0", { "e.js": EXT }, MANIFEST);
  await registry.publish("u2-proj", "1.0.0", { "e.js": EXT }, MANIFEST);
  expect(await runPion(["install", "npm:u2-user"], { home, cwd, env })).toMatchObject({ code: 0 });
  expect(await runPion(["install", "-l", "npm:u2-proj"], { home, cwd, env })).toMatchObject({ code: 0 });
  const project = join(cwd, ".pion");
  await registry.publish("u2-user", "1.1.0", { "e.js": EXT }, MANIFEST);
  await registry.publish("u2-proj", "1.1.0", { "e.js": EXT }, MANIFEST);

  // Not trusted, and the reference's update never goes by defaultProjectTrust.
  writeSettings(home, { ...JSON.parse(readFileSync(join(home, "settings.json"), "utf8")), defaultProjectTrust: "always" });
  expect(await runPion(["update", "npm:u2-proj"], { home, cwd, env })).toMatchObject({ code: 1, stderr: "pion: No matching package found for npm:u2-proj\n" });
  expect(await runPion(["update", "--extensions", "-na"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Updated 1 package:\n  npm:u2-user 1.0.0 -> 1.1.0\n" });
  expect(npmVersion(project, "u2-proj")).toBe("1.0.0");

  expect(await runPion(["update", "npm:u2-proj", "-a"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Updated 1 package:\n  npm:u2-proj (project) 1.0.0 -> 1.1.0\n" });
  await registry.publish("u2-proj", "1.2.0", { "e.js": EXT }, MANIFEST);
  expect(await runPion(["trust"], { home, cwd })).toMatchObject({ code: 0 });
  expect(await runPion(["update", "--extensions"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Updated 1 package:\n  npm:u2-proj (project) 1.1.0 -> 1.2.0\n" });
  expect(await runPion(["update", "npm:u2-proj", "--no-approve"], { home, cwd, env })).toMatchObject({ code: 1 });
}, 120_000);

test("a failing package is reported and the others still move", async () => {
  const { home, cwd } = tempDirs();
  await registry.publish("u3-a", "1.0.0", { "e.js": EXT }, MANIFEST);
  const files = { "package.json": JSON.stringify({ name: "u3-g", version: "1.0.0", ...MANIFEST }), "e.js": EXT };
  await publishRepo(gitServer, "u3/gone", [files]);
  for (const source of ["npm:u3-a", `${gitServer.url}/u3/gone.git`]) expect(await runPion(["install", source], { home, cwd, env })).toMatchObject({ code: 0 });
  await registry.publish("u3-a", "2.0.0", { "e.js": EXT }, MANIFEST);
  rmSync(join(gitServer.root, "u3/gone.git"), { recursive: true, force: true });
  const r = await runPion(["update", "--extensions"], { home, cwd, env });
  expect([r.code, r.stdout]).toEqual([1, "Updated 1 package:\n  npm:u3-a 1.0.0 -> 2.0.0\n"]);
  expect(r.stderr).toContain(`pion: ${gitServer.url}/u3/gone.git: git fetch origin HEAD failed`);
}, 120_000);

test.concurrent("usage errors exit 2; --help; --models is pion models refresh", async () => {
  const dirs = tempDirs();
  writeSettings(dirs.home, {});
  for (const args of [["--all", "--self"], ["--models", "npm:x"], ["--extension"], ["--extension", "a", "--extension", "b"], ["--bogus"], ["a", "b"], ["npm:x", "--extensions"]]) {
    const r = await runPion(["update", ...args], dirs);
    expect([r.code, r.stderr.split("\n")[1]]).toEqual([2, expect.stringContaining("usage: pion update")]);
  }
  const help = await runPion(["update", "--help"], dirs);
  expect(help).toMatchObject({ code: 0, stderr: "" });
  expect(help.stdout.split("\n")[0]).toMatch(/^usage: pion update /);
  for (const flag of ["--extensions", "--extension <source>", "--models", "--all", "--approve", "--no-approve", "--offline"]) expect(help.stdout).toContain(flag);

  const catalog = readFileSync(resolve(import.meta.dir, "../fixtures/models-dev/small.json"), "utf8");
  const server = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response(catalog, { headers: { "content-type": "application/json" } }) });
  try {
    const url = `http://127.0.0.1:${server.port}/catalog.json`;
    const other = tempDirs();
    const [viaUpdate, viaModels] = await Promise.all([runPion(["update", "--models"], { ...dirs, env: { PION_MODELS_URL: url } }), runPion(["models", "refresh"], { ...other, env: { PION_MODELS_URL: url } })]);
    expect(viaUpdate.code).toBe(0);
    expect(viaUpdate.stdout).toStartWith(`Refreshed the model catalog from ${url}`);
    expect({ ...viaUpdate, stdout: viaUpdate.stdout.replaceAll(dirs.home, "HOME") }).toEqual({ ...viaModels, stdout: viaModels.stdout.replaceAll(other.home, "HOME") });
    const failed = await runPion(["update", "--models"], { ...dirs, env: { PION_MODELS_URL: "http://127.0.0.1:1/none" } });
    expect(failed.code).toBe(1);
  } finally {
    server.stop(true);
  }
}, 60_000);

const REFERENCE_CLI = join(process.env.PION_REFERENCE_PKG ?? "", "dist/cli.js");

async function runReference(args: string[], home: string, cwd: string) {
  const proc = Bun.spawn([process.execPath, REFERENCE_CLI, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, PI_CODING_AGENT_DIR: join(home, "agent"), PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** The `  source from -> to` lines under "Updated N packages:" (the reference's stdout also carries npm's own output). */
const updatedLines = (stdout: string): string[] => {
  const lines = stdout.split("\n");
  const at = lines.findIndex((l) => /^Updated \d+ packages?:$/.test(l));
  return at < 0 ? [] : lines.slice(at + 1).filter((l) => /^ {2}\S+.* -> /.test(l));
};

/** The last line of stdout (the reference prints its progress there too), else of stderr without its prefix. */
const outcome = (stdout: string, stderr: string): string => {
  const last = (text: string) => text.trim().split("\n").at(-1) ?? "";
  return last(stdout) || last(stderr).replace(/^(pion: |Error: )/, "");
};

describeWith("pion update and the reference's pi update", NO_REFERENCE, () => {
  test("the same packages move, to the same versions and commits, and the settings stay alike", async () => {
    const pion = tempDirs();
    const ref = tempDirs();
    const refDir = join(ref.home, "agent");
    mkdirSync(refDir);
    const { sources } = await publishScenario("u4");
    for (const dirs of [pion, ref]) mkdirSync(join(dirs.cwd, "local-pkg"));
    for (const source of sources) {
      expect(await runPion(["install", source], { ...pion, env })).toMatchObject({ code: 0 });
      expect(await runReference(["install", source], ref.home, ref.cwd)).toMatchObject({ code: 0 });
    }
    await publishNewer("u4");
    const [mine, theirs] = [await runPion(["update", "--extensions"], { ...pion, env }), await runReference(["update", "--extensions"], ref.home, ref.cwd)];
    expect(mine.code).toBe(theirs.code);
    expect(updatedLines(mine.stdout)).toEqual(updatedLines(theirs.stdout));
    expect(updatedLines(mine.stdout)).toHaveLength(4);
    const state = async (dir: string) => ({
      npm: ["u4-a", "u4-b", "u4-c"].map((n) => npmVersion(dir, n)),
      git: await Promise.all(["moving", "tagged", "branch"].map((r) => git(gitCheckout(dir, `u4/${r}`), "rev-parse", "HEAD"))),
      // The local path is written relative to each settings folder, which lie at different depths.
      packages: JSON.parse(readFileSync(join(dir, "settings.json"), "utf8")).packages.slice(0, -1),
    });
    expect(await state(pion.home)).toEqual(await state(refDir));
    // Both say the same of a second run, of one package, and of a source that is not configured.
    for (const args of [["--extensions"], ["npm:u4-a"], ["u4-a"], ["npm:nope"]]) {
      const [a, b] = [await runPion(["update", ...args], { ...pion, env }), await runReference(["update", ...args], ref.home, ref.cwd)];
      expect([a.code, outcome(a.stdout, a.stderr)]).toEqual([b.code, outcome(b.stdout, b.stderr)]);
    }
    expect(existsSync(join(refDir, "git", "127.0.0.1", "u4", "moving"))).toBe(true);
  }, 240_000);
});
