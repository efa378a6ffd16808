/**
 * `pion update`: the configured packages brought up to date as the reference's `pi update
 * --extensions` does (an unpinned npm package at its latest version, a pinned one left alone, a
 * git package moved to its default branch's newest commit, a pinned ref left where it is, a local
 * path untouched), one package by its source, `--models` as `pion models refresh`, and pion
 * itself refused with what to do instead.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { git, publishRepo, pushCommit, startGitServer } from "../support/git-server.ts";
import { runPion, tempDirs, writeSettings } from "../support/pion.ts";

const server = startGitServer();
afterAll(() => server.stop());

/** A stand-in npm: `install <spec> --prefix <dir>` writes the package at the version in `<home>/latest`, and records the call. */
function fakeNpm(home: string): string {
  const npm = join(home, "fake-npm.sh");
  writeFileSync(
    npm,
    `#!/bin/sh
echo "$@" >> "${home}/npm-calls"
[ "$1" = install ] && [ "$3" = --prefix ] || exit 0
name=$(echo "$2" | sed -E 's/^(@?[^@]+)(@.*)?$/\\1/')
mkdir -p "$4/node_modules/$name"
echo "{\\"name\\":\\"$name\\",\\"version\\":\\"$(cat "${home}/latest")\\"}" > "$4/node_modules/$name/package.json"
`,
    { mode: 0o755 },
  );
  return npm;
}

test("--extensions updates what is not pinned and reports each change; one source; unknown sources and pion itself are errors", async () => {
  const { home, cwd } = tempDirs();
  const env = { PION_NPM: fakeNpm(home) };
  const ext = 'export default function (pi) { pi.registerCommand("g", { description: "g", handler: async () => {} }); }\n';
  const first = { "package.json": JSON.stringify({ name: "g", version: "1.0.0", pi: { extensions: ["./e.ts"] } }), "e.ts": ext };
  const [c1] = await publishRepo(server, "team/moving", [first]);
  await publishRepo(server, "team/pinned", [first], { 0: "v1" });
  const moving = `${server.url}/team/moving.git`;
  const pinned = `${server.url}/team/pinned.git@v1`;
  mkdirSync(join(cwd, "local-pkg"));
  writeFileSync(join(home, "latest"), "1.0.0");
  for (const source of ["npm:pi-a", "npm:pi-b@1.0.0", moving, pinned, "./local-pkg"]) expect((await runPion(["install", source], { home, cwd, env })).code).toBe(0);
  writeFileSync(join(home, "npm-calls"), "");

  // Newer versions appear: npm's latest, a new commit on the moving repository's default branch, and on the pinned one's.
  writeFileSync(join(home, "latest"), "1.1.0");
  const c2 = await pushCommit(server, "team/moving", { "e.ts": ext.replace('"g"', '"g2"') });
  await pushCommit(server, "team/pinned", { "e.ts": ext.replace('"g"', '"g3"') });
  const r = await runPion(["update", "--extensions"], { home, cwd, env });
  expect([r.code, r.stdout]).toEqual([0, `Updated 2 packages:\n  npm:pi-a 1.0.0 -> 1.1.0\n  ${moving} ${c1!.slice(0, 7)} -> ${c2.slice(0, 7)}\n`]);
  // Only the unpinned npm package was installed again, at its latest version.
  expect(readFileSync(join(home, "npm-calls"), "utf8").split("\n").filter((l) => l.startsWith("install ") && l.includes("--prefix")).map((l) => l.split(" ")[1])).toEqual(["pi-a@latest"]);
  expect(await git(join(home, "git", "127.0.0.1", "team", "moving"), "rev-parse", "HEAD")).toBe(c2);
  expect(readFileSync(join(home, "git", "127.0.0.1", "team", "pinned", "e.ts"), "utf8")).toBe(ext);
  expect(JSON.parse(readFileSync(join(home, "npm", "node_modules", "pi-b", "package.json"), "utf8")).version).toBe("1.0.0");

  // One package, already up to date.
  expect(await runPion(["update", "npm:pi-a"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "npm:pi-a is already up to date\n" });
  const none = await runPion(["update", "npm:nope"], { home, cwd, env });
  expect([none.code, none.stderr]).toEqual([1, "pion: No matching package found for npm:nope\n"]);

  // pion itself: refused, with what to do; with --all the packages are updated first.
  const self = await runPion(["update"], { home, cwd, env });
  expect(self.code).toBe(1);
  expect(self.stdout).toContain("pion update --extensions");
  expect(self.stderr).toContain("pion cannot update itself");
  const all = await runPion(["update", "--all"], { home, cwd, env });
  expect([all.code, all.stdout]).toEqual([1, "Packages are already up to date\n"]);
  expect(all.stderr).toContain("pion cannot update itself");

  // Offline, nothing is fetched.
  expect(await runPion(["update", "--extensions", "--offline"], { home, cwd, env })).toMatchObject({ code: 0, stdout: "Skipped package updates (offline mode)\n" });
  expect(await runPion(["update", "--extensions"], { home, cwd, env: { ...env, PI_OFFLINE: "1" } })).toMatchObject({ code: 0, stdout: "Skipped package updates (offline mode)\n" });
}, 120_000);

test.concurrent("usage errors exit 2; --models is pion models refresh", async () => {
  const dirs = tempDirs();
  writeSettings(dirs.home, {});
  for (const args of [["--all", "--self"], ["--models", "npm:x"], ["--extension"], ["--bogus"], ["a", "b"]]) {
    const r = await runPion(["update", ...args], dirs);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("usage: pion update");
  }
  expect(await runPion(["update", "--help"], dirs)).toMatchObject({ code: 0, stdout: expect.stringContaining("usage: pion update") });
  const env = { PION_MODELS_URL: "http://127.0.0.1:1/none" };
  const [viaUpdate, viaModels] = await Promise.all([runPion(["update", "--models"], { ...dirs, env }), runPion(["models", "refresh"], { ...dirs, env })]);
  expect(viaUpdate).toEqual(viaModels);
  expect(viaUpdate.code).toBe(1);
});
