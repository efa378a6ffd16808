/**
 * A git package end to end: `pion install <url>` clones it from a real git server (dumb HTTP)
 * with the machine's git and lists it in settings.json; `pion --mode rpc` then loads its
 * extension, reported as the package's (`origin: "package"`, `source` the settings entry);
 * `pion remove` drops the entry and the checkout, and the command is gone. Listed in the
 * reference's settings (`PI_CODING_AGENT_DIR`) and missing, it is cloned at start-up into that folder's `git/`.
 */
import { afterAll, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, publishRepo, startGitServer } from "../support/git-server.ts";
import { Pion, runPion, tempDirs, type Rec } from "../support/pion.ts";

const server = startGitServer();
afterAll(() => server.stop());

test("pion install <git url> clones the package, its extension loads as the package's, pion remove undoes it", async () => {
  const extension = 'export default function (pi) { pi.registerCommand("git-cmd", { description: "from git", handler: async () => {} }); }\n';
  const ids = await publishRepo(server, "team/git-pkg", [
    { "package.json": JSON.stringify({ name: "git-pkg", version: "1.0.0", pi: { extensions: ["./src/ext.ts"] } }), "src/ext.ts": extension },
    { "src/ext.ts": extension.replace("from git", "newer") },
  ], { 0: "v1" });
  const { home, cwd } = tempDirs();
  // The checkout has a package.json, so its dependencies are installed: a stand-in npm records how.
  const npm = join(home, "fake-npm.sh");
  writeFileSync(npm, `#!/bin/sh\necho "$(pwd) $@" >> "${home}/npm-calls"\n`, { mode: 0o755 });
  const env = { PION_NPM: npm };
  const source = `${server.url}/team/git-pkg.git@v1`;

  const installed = await runPion(["install", source], { home, cwd, env });
  expect(installed.stderr).toContain(`Installed ${source}`);
  expect(installed.code).toBe(0);
  const dir = join(home, "git", "127.0.0.1", "team", "git-pkg");
  expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8"))).toEqual({ packages: [source] });
  expect(readFileSync(join(dir, "src", "ext.ts"), "utf8")).toContain("from git");
  expect(readFileSync(join(home, "npm-calls"), "utf8").trim()).toBe(`${dir} install --omit=dev --legacy-peer-deps --no-audit --no-fund`);
  expect((await runPion(["list"], { home, cwd, env })).stdout).toBe(`User packages:\n  ${source}\n    ${dir}\n`);

  const p = new Pion({ home, cwd, env, args: ["--mode", "rpc"] });
  const commands = (await p.request({ type: "get_commands" })).data.commands as Rec[];
  expect(commands.find((c) => c.name === "git-cmd")).toEqual({
    name: "git-cmd",
    description: "from git",
    path: join(dir, "src", "ext.ts"),
    source: "extension",
    sourceInfo: { path: join(dir, "src", "ext.ts"), source, scope: "user", origin: "package", baseDir: dir },
  });
  await p.close();

  const removed = await runPion(["remove", source], { home, cwd, env });
  expect(removed.code).toBe(0);
  expect(JSON.parse(readFileSync(join(home, "settings.json"), "utf8")).packages).toEqual([]);
  expect(existsSync(dir)).toBe(false);
  const after = new Pion({ home, cwd, env, args: ["--mode", "rpc"] });
  const left = (await after.request({ type: "get_commands" })).data.commands as Rec[];
  expect(left.map((c) => c.name)).not.toContain("git-cmd");
  await after.close();

  // Listed in the reference's settings and not installed: cloned at start-up into that folder's git/.
  const agent = join(home, "..", "pi-agent");
  mkdirSync(agent, { recursive: true });
  writeFileSync(join(agent, "settings.json"), JSON.stringify({ packages: [`git:${source}`] }));
  const boot = new Pion({ home, cwd, env: { ...env, PI_CODING_AGENT_DIR: agent }, args: ["--mode", "rpc"] });
  const booted = (await boot.request({ type: "get_commands" })).data.commands as Rec[];
  const cloned = join(agent, "git", "127.0.0.1", "team", "git-pkg");
  expect(booted.find((c) => c.name === "git-cmd")?.sourceInfo).toMatchObject({ path: join(cloned, "src", "ext.ts"), source: `git:${source}`, origin: "package" });
  expect(await git(cloned, "rev-parse", "HEAD")).toBe(ids[0]!);
  await boot.close();
});
