/**
 * Git package sources: parsing compared with the reference's parser on many inputs, identity,
 * install folders, and install/remove/list, start-up installs and `-e` checkouts against a
 * real git server (dumb HTTP over Bun.serve) with the machine's git.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gitIdentity, gitPackageDir, parseGitSource, temporaryGitDir } from "../../../src/extensions/git-source.ts";
import { dedupePackages, packageIdentity, packageRoot, parseSource } from "../../../src/extensions/packages.ts";
import { withPackageResources } from "../../../src/modes/compose-settings.ts";
import { runPackagesCli } from "../../../src/modes/packages-cli.ts";
import { temporaryPackages } from "../../../src/modes/temporary-packages.ts";
import type { Settings } from "../../../src/config.ts";
import { git, publishRepo, pushCommit, startGitServer } from "../../support/git-server.ts";

const REF = process.env.PION_REFERENCE_PKG;

/** Inputs both parsers must read alike (same repo, host, path, ref) or both refuse. */
const SAME = [
  "git:github.com/earendil-works/pi-tools",
  "git:github.com/earendil-works/pi-tools@v1",
  "git:github.com/U/R.git@x",
  "git:git@github.com:u/r@v1",
  "git:git@github.com:a/b.git",
  "git:git@gitlab.com:g/sub/p.git@main",
  "git:git@host.com:u/r@feature/x",
  "git:git://host.com/u/r",
  "git:git://host.com/u/r@v1",
  "git:ssh://git@github.com/u/r",
  "git:localhost/u/r",
  "git:localhost:8080/u/r",
  "git:example.org/team/group/repo@release/2",
  "git:www.github.com/u/r",
  "git:github.com/u/r/tree/dev",
  "git:github.com/u/r#v3",
  "git:bitbucket.org/u/r@v2",
  "git:git.sr.ht/~u/r",
  "git:  github.com/u/r  ",
  "https://github.com/earendil-works/pi-tools",
  "https://github.com/earendil-works/pi-tools.git",
  "https://github.com/a/b@v1.2.3",
  "https://github.com/u/r/tree/main",
  "https://github.com/u/r/tree/dev@x",
  "https://github.com/u/r/blob/main/x",
  "https://github.com/u/r#v2",
  "https://github.com/u/r.git#semver:^1",
  "https://www.github.com/u/r",
  "https://gitlab.com/a/b/c",
  "https://gitlab.com/g/-/tree/x",
  "https://bitbucket.org/u/r/src/main",
  "https://git.sr.ht/~u/r",
  "https://gist.github.com/u/abc",
  "https://host.com/u/r@a@b",
  "https://host.com/u/r@feature/x",
  "https://host.com/u/r/../x",
  "https://host.com/a\\b/c",
  "https://host.com/u/r.git/",
  "https://host.com:8443/u/r",
  "https://user:pw@host.com/u/r",
  "https://[::1]/u/r",
  "https://127.0.0.1/u/r",
  "  https://host.com/u/r  ",
  "http://127.0.0.1:4567/user/repo.git",
  "http://127.0.0.1:4567/user/repo.git@v1",
  "http://127.0.0.1:1/a/b/c.git@t",
  "http://localhost:8080/u/r.git@abc1234",
  "ssh://git@host.com/u/r@v1",
  "ssh://git@host.com:2222/u/r.git@v1",
  "ssh://host.com/u/r",
  "git+ssh://git@github.com/u/r",
  "git:git@github.com:u/r#v9",
  // refused by both
  "git://host.com/u/r",
  "git@github.com:u/r",
  "git:host/u/r",
  "git:git@host.com:/abs/r",
  "git:host.com/../x/y",
  "git:host.com/x/../y",
  "git:host.com/a%2F..%2Fb/c",
  "git:host.com/x%00/y",
  "git:host.com/x/%2e%2e/y",
  "git:host.com/%E0%A4%A/y",
  "git:git@ho\\st.com:x/y",
  "https://host.com/x/y%5Cz",
  "https://host.com/u",
  "https://host.com",
  "https://",
  "HTTPS://host.com/u/r",
  "https://github.com/u",
  "git:",
  "git:   ",
  "npm:foo",
  "./local/path",
  "/abs/path",
  "git:host.com/u/r@",
  "git:host.com/u/@r",
  "git:host.com/a/b@",
];

/** Shortcuts, for which the reference's clone URL is not one git can clone (`https://github:u/r`); pion clones from the host. */
const SHORTCUTS: [string, { repo: string; host: string; path: string; ref?: string }][] = [
  ["git:user/repo", { repo: "https://github.com/user/repo", host: "github.com", path: "user/repo" }],
  ["git:u/r@v1", { repo: "https://github.com/u/r", host: "github.com", path: "u/r", ref: "v1" }],
  ["git:user/repo#ref", { repo: "https://github.com/user/repo", host: "github.com", path: "user/repo", ref: "ref" }],
  ["git:github:u/r", { repo: "https://github.com/u/r", host: "github.com", path: "u/r" }],
  ["git:gitlab:g/s/p@v1", { repo: "https://gitlab.com/g/s/p", host: "gitlab.com", path: "g/s/p", ref: "v1" }],
  ["git:bitbucket:u/r", { repo: "https://bitbucket.org/u/r", host: "bitbucket.org", path: "u/r" }],
  ["git:sourcehut:~u/r", { repo: "https://git.sr.ht/~u/r", host: "git.sr.ht", path: "~u/r" }],
];

const shape = (s: { repo: string; host: string; path: string; ref?: string } | null | undefined) =>
  s ? { repo: s.repo, host: s.host, path: s.path, ...(s.ref ? { ref: s.ref } : {}) } : null;

describe("git sources", () => {
  (REF ? test : test.skip)("read as the reference's parseGitUrl reads them, or refused by both", async () => {
    const { parseGitUrl } = (await import(join(REF!, "dist/utils/git.js"))) as { parseGitUrl: (s: string) => { repo: string; host: string; path: string; ref?: string } | null };
    const differing = SAME.filter((s) => JSON.stringify(shape(parseGitSource(s))) !== JSON.stringify(shape(parseGitUrl(s))));
    expect(differing).toEqual([]);
    const accepted = SAME.filter((s) => parseGitUrl(s));
    expect(accepted.length).toBeGreaterThan(40);
    // The shortcuts name the same host, path and ref as the reference's; only the clone URL differs.
    for (const [input] of SHORTCUTS) {
      const ours = shape(parseGitSource(input))!;
      const theirs = shape(parseGitUrl(input))!;
      expect({ ...ours, repo: "" }).toEqual({ ...theirs, repo: "" });
    }
  });

  (REF ? test : test.skip)("identity and install folders (user, project, -e) as the reference's package manager computes them", async () => {
    type RefManager = { getPackageIdentity(s: string): string; parseSource(s: string): unknown; getGitInstallPath(p: unknown, scope: string): string };
    const { DefaultPackageManager } = (await import(join(REF!, "dist/core/package-manager.js"))) as { DefaultPackageManager: new (o: unknown) => RefManager };
    const agentDir = mkdtempSync(join(tmpdir(), "pion-ref-agent-"));
    const cwd = mkdtempSync(join(tmpdir(), "pion-ref-cwd-"));
    const ref = new DefaultPackageManager({ cwd, agentDir, settingsManager: { isProjectTrusted: () => true } });
    const kinds = (parse: (s: string) => unknown) => SAME.map((s) => [s, (parse(s) as { type: string }).type]);
    expect(kinds(parseSource)).toEqual(kinds((s) => ref.parseSource(s)));
    const sources = SAME.filter((s) => parseSource(s).type === "git");
    expect(sources.length).toBeGreaterThan(40);
    for (const s of sources) {
      const ours = parseSource(s) as Parameters<typeof gitIdentity>[0];
      const theirs = ref.parseSource(s);
      expect([s, packageIdentity(ours, "/")]).toEqual([s, ref.getPackageIdentity(s)]);
      expect([s, gitPackageDir(agentDir, ours)]).toEqual([s, ref.getGitInstallPath(theirs, "user")]);
      expect([s, gitPackageDir(join(cwd, ".pi"), ours)]).toEqual([s, ref.getGitInstallPath(theirs, "project")]);
      expect([s, temporaryGitDir(join(agentDir, "tmp", "extensions"), ours)]).toEqual([s, ref.getGitInstallPath(theirs, "temporary")]);
    }
  });

  test("forms, refs, refusals and the clone URL", () => {
    expect(shape(parseGitSource("git:github.com/a/b@v1"))).toEqual({ repo: "https://github.com/a/b", host: "github.com", path: "a/b", ref: "v1" });
    expect(shape(parseGitSource("git:git@github.com:a/b.git@main"))).toEqual({ repo: "git@github.com:a/b.git", host: "github.com", path: "a/b", ref: "main" });
    expect(shape(parseGitSource("ssh://git@host.com:2222/a/b.git@v2"))).toEqual({ repo: "ssh://git@host.com:2222/a/b.git", host: "host.com", path: "a/b", ref: "v2" });
    expect(shape(parseGitSource("git:git://host.com/a/b"))).toEqual({ repo: "git://host.com/a/b", host: "host.com", path: "a/b" });
    expect(shape(parseGitSource("http://127.0.0.1:9/user/repo.git@abc1234"))).toEqual({ repo: "http://127.0.0.1:9/user/repo.git", host: "127.0.0.1", path: "user/repo", ref: "abc1234" });
    for (const [input, want] of SHORTCUTS) expect(shape(parseGitSource(input))).toEqual(want);
    for (const bad of ["git:host.com/../x/y", "git:host.com/a%2F..%2Fb/c", "git:host.com/x%00/y", "git:git@ho\\st.com:x/y", "git:git@host.com:/abs/r", "https://host.com/u", "git:host/u/r"]) {
      expect(parseGitSource(bad)).toBeUndefined();
    }
    // Only `git:`, `http(s):` and `ssh:` start a git source; anything else is a path, as in the reference.
    expect(parseSource("git@github.com:a/b")).toEqual({ type: "local", path: "git@github.com:a/b" });
    expect(parseSource("git://host.com/a/b")).toEqual({ type: "local", path: "git://host.com/a/b" });
    expect(parseSource("https://host.com/a/b@v1")).toMatchObject({ type: "git", host: "host.com", path: "a/b", ref: "v1" });
  });

  test("one identity for every URL form and ref of a repository; project entry wins", () => {
    const forms = ["git:github.com/a/b", "git:github.com/a/b@v1", "https://github.com/a/b.git", "ssh://git@github.com/a/b", "git:git@github.com:a/b@main", "https://www.github.com/a/b", "git:a/b"];
    expect(new Set(forms.map((f) => packageIdentity(parseSource(f), "/x")))).toEqual(new Set(["git:github.com/a/b"]));
    expect(gitIdentity(parseGitSource("git:git@gitlab.com:g/sub/p.git")!)).toBe("git:gitlab.com/g/sub/p");
    const packages = dedupePackages([
      { entry: "https://github.com/a/b", base: "/home/.pion", level: "user" },
      { entry: { source: "git:git@github.com:a/b@v2", skills: [] }, base: "/proj/.pion", level: "project" },
      { entry: "git:github.com/a/c", base: "/home/.pion", level: "user" },
    ]);
    expect(packages.map((p) => [p.source, p.root])).toEqual([
      ["git:git@github.com:a/b@v2", "/proj/.pion/git/github.com/a/b"],
      ["git:github.com/a/c", "/home/.pion/git/github.com/a/c"],
    ]);
  });

  test("install folders: the settings folder's git/<host>/<path>; -e checkouts keyed by host, path and ref", () => {
    const src = parseGitSource("git:git@host.com:team/pkg@v1")!;
    expect(gitPackageDir("/home/u/.pi/agent", src)).toBe("/home/u/.pi/agent/git/host.com/team/pkg");
    expect(packageRoot(src, "/w/.pi")).toBe("/w/.pi/git/host.com/team/pkg");
    const tmp = "/h/tmp/extensions";
    const v1 = temporaryGitDir(tmp, src);
    expect(v1).toMatch(/^\/h\/tmp\/extensions\/git-host\.com\/[0-9a-f]{8}\/team\/pkg$/);
    expect(temporaryGitDir(tmp, parseGitSource("https://host.com/team/pkg@v1")!)).toBe(v1);
    expect(temporaryGitDir(tmp, parseGitSource("git:host.com/team/pkg@v2")!)).not.toBe(v1);
    expect(temporaryGitDir(tmp, parseGitSource("git:host.com/team/pkg")!)).not.toBe(v1);
  });
});

describe("git packages against a git server", () => {
  const server = startGitServer();
  afterAll(() => server.stop());
  const ext = (name: string) => `export default function (pi) { pi.registerCommand(${JSON.stringify(name)}, { handler: async () => {} }); }\n`;
  const home = () => mkdtempSync(join(tmpdir(), "pion-gitpkg-"));
  /** A stand-in npm that records its arguments and folder. */
  const fakeNpm = (dir: string) => {
    const npm = join(dir, "fake-npm.sh");
    writeFileSync(npm, `#!/bin/sh\necho "$(pwd) $@" >> "${dir}/npm-calls"\n`, { mode: 0o755 });
    return npm;
  };
  const cli = async (h: string, args: string[], npm?: string, cwd = h) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runPackagesCli(args[0]!, args.slice(1), { home: h, cwd, env: { PATH: process.env.PATH, HOME: h }, out: (t) => out.push(t), err: (t) => err.push(t), ...(npm ? { npm } : {}) });
    return { code, out: out.join(""), err: err.join("") };
  };

  test("install clones (at the ref), runs npm in the checkout, writes settings; list shows it; remove deletes entry and checkout", async () => {
    const ids = await publishRepo(server, "team/tools", [{ "package.json": "{}", "extensions/a.ts": ext("one") }, { "extensions/a.ts": ext("two") }], { 0: "v1" });
    const h = home();
    const npm = fakeNpm(h);
    const url = `${server.url}/team/tools.git`;
    const r = await cli(h, ["install", `${url}@v1`], npm);
    expect(r.err).toContain("Installed");
    expect(r.code).toBe(0);
    const dir = join(h, "git", "127.0.0.1", "team", "tools");
    expect(await git(dir, "rev-parse", "HEAD")).toBe(ids[0]!);
    expect(readFileSync(join(dir, "extensions/a.ts"), "utf8")).toContain('"one"');
    expect(readFileSync(join(h, "npm-calls"), "utf8").trim()).toBe(`${dir} install --omit=dev --legacy-peer-deps --no-audit --no-fund`);
    expect(readFileSync(join(h, "git", ".gitignore"), "utf8")).toBe("*\n!.gitignore\n");
    expect(JSON.parse(readFileSync(join(h, "settings.json"), "utf8"))).toEqual({ packages: [`${url}@v1`] });

    // Installing the same repository without a ref replaces the entry and moves the checkout to the default branch.
    expect((await cli(h, ["install", url], npm)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(h, "settings.json"), "utf8")).packages).toEqual([url]);
    expect(await git(dir, "rev-parse", "HEAD")).toBe(ids[1]!);
    expect((await cli(h, ["list"])).out).toBe(`User packages:\n  ${url}\n    ${dir}\n`);

    expect((await cli(h, ["remove", `${url}@v1`], npm)).code).toBe(0);
    expect(JSON.parse(readFileSync(join(h, "settings.json"), "utf8")).packages).toEqual([]);
    expect(existsSync(dir)).toBe(false);
    expect(existsSync(join(h, "git", "127.0.0.1"))).toBe(false);
  });

  test("a clone that fails leaves no folder, names the git command, and writes no settings", async () => {
    const h = home();
    const r = await cli(h, ["install", `${server.url}/nobody/missing.git`]);
    expect(r.code).toBe(1);
    expect(r.err).toContain(`git clone ${server.url}/nobody/missing.git`);
    expect(existsSync(join(h, "git", "127.0.0.1"))).toBe(false);
    expect(existsSync(join(h, "settings.json"))).toBe(false);
    // A ref that does not exist: cloned, then refused at checkout, and removed again.
    await publishRepo(server, "team/noref", [{ "index.ts": ext("x") }]);
    const bad = await cli(h, ["install", `${server.url}/team/noref.git@no-such-tag`]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("git checkout no-such-tag failed");
    expect(existsSync(join(h, "git", "127.0.0.1", "team", "noref"))).toBe(false);
  });

  test("git is told never to prompt: a server asking for a password fails at once, saying why", async () => {
    const auth = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: () => new Response("auth", { status: 401, headers: { "WWW-Authenticate": 'Basic realm="x"' } }) });
    try {
      const h = home();
      const r = await cli(h, ["install", `http://127.0.0.1:${auth.port}/team/private.git`]);
      expect(r.code).toBe(1);
      expect(r.err).toContain("without a terminal");
    } finally {
      auth.stop(true);
    }
  });

  test("ssh runs in batch mode with git prompts off, unless the user chose an ssh command", async () => {
    const h = home();
    const bin = join(h, "bin");
    mkdirSync(bin);
    // A stand-in ssh: records how git ran it, then fails as an unreachable host would.
    writeFileSync(join(bin, "ssh"), `#!/bin/sh\necho "$GIT_TERMINAL_PROMPT $@" >> "${h}/ssh-calls"\nexit 255\n`, { mode: 0o755 });
    const env = { PATH: `${bin}:${process.env.PATH}`, HOME: h };
    const run = (extra: Record<string, string>) =>
      runPackagesCli("install", ["ssh://git@127.0.0.1/team/x.git"], { home: h, cwd: h, env: { ...env, ...extra }, out: () => {}, err: () => {} });
    expect(await run({})).toBe(1);
    expect(readFileSync(join(h, "ssh-calls"), "utf8")).toMatch(/^0 -o BatchMode=yes .*git@127\.0\.0\.1 /);
    writeFileSync(join(h, "ssh-calls"), "");
    expect(await run({ GIT_SSH_COMMAND: "ssh -o ConnectTimeout=1" })).toBe(1);
    expect(readFileSync(join(h, "ssh-calls"), "utf8")).toMatch(/^0 -o ConnectTimeout=1 /);
    expect(existsSync(join(h, "git", "127.0.0.1"))).toBe(false);
  });

  test("project scope: <cwd>/.pion/git for a trusted folder, refused for an untrusted one", async () => {
    await publishRepo(server, "team/proj", [{ "index.ts": ext("p") }]);
    const h = home();
    const cwd = mkdtempSync(join(tmpdir(), "pion-gitproj-"));
    mkdirSync(join(cwd, ".pion"));
    writeFileSync(join(cwd, ".pion", "settings.json"), "{}");
    const url = `${server.url}/team/proj.git`;
    const untrusted = await cli(h, ["install", "-l", url], undefined, cwd);
    expect([untrusted.code, untrusted.err]).toEqual([1, expect.stringContaining("is not trusted")]);
    expect(existsSync(join(cwd, ".pion", "git"))).toBe(false);
    writeFileSync(join(h, "trust.json"), JSON.stringify({ [cwd]: true }));
    const trusted = await cli(h, ["install", "-l", url], undefined, cwd);
    expect(trusted.code).toBe(0);
    expect(existsSync(join(cwd, ".pion", "git", "127.0.0.1", "team", "proj", "index.ts"))).toBe(true);
    expect(JSON.parse(readFileSync(join(cwd, ".pion", "settings.json"), "utf8")).packages).toEqual([url]);
  });

  test("start-up clones a listed git package that is missing (not with PI_OFFLINE=1) and adds its extensions", async () => {
    await publishRepo(server, "team/boot", [{ "extensions/b.ts": ext("boot") }]);
    const h = home();
    const url = `${server.url}/team/boot.git`;
    const settings = { listedPackages: [{ entry: url, base: h, level: "user" }], listedResources: { extensions: [], skills: [], prompts: [] } } as unknown as Settings;
    const offline = await withPackageResources(settings, { PATH: process.env.PATH, PI_OFFLINE: "1" });
    expect(offline.listedResources!.extensions).toEqual([]);
    const dir = join(h, "git", "127.0.0.1", "team", "boot");
    expect(existsSync(dir)).toBe(false);
    const online = await withPackageResources(settings, { PATH: process.env.PATH });
    expect(online.listedResources!.extensions).toEqual([{ entry: join(dir, "extensions/b.ts"), base: h, level: "user", package: { source: url, root: dir } }]);
  });

  test("-e git: cloned under tmp/extensions, refreshed on the next run, the old copy kept offline", async () => {
    await publishRepo(server, "team/temp", [{ "index.ts": ext("t1") }]);
    const h = home();
    const url = `${server.url}/team/temp.git`;
    const env = { PATH: process.env.PATH };
    const [dir] = await temporaryPackages([url], h, env);
    expect(dir).toBe(temporaryGitDir(join(h, "tmp", "extensions"), parseGitSource(url)!));
    expect(readFileSync(join(dir!, "index.ts"), "utf8")).toContain('"t1"');
    const next = await pushCommit(server, "team/temp", { "index.ts": ext("t2") });
    await temporaryPackages([url], h, { ...env, PI_OFFLINE: "1" });
    expect(readFileSync(join(dir!, "index.ts"), "utf8")).toContain('"t1"');
    expect(await temporaryPackages([url, "./plain.ts"], h, env)).toEqual([dir!, "./plain.ts"]);
    expect(await git(dir!, "rev-parse", "HEAD")).toBe(next);
    // A pinned ref gets a checkout of its own.
    const [pinned] = await temporaryPackages([`${url}@${next.slice(0, 10)}`], h, env);
    expect(pinned).not.toBe(dir);
    expect(await git(pinned!, "rev-parse", "HEAD")).toBe(next);
  });
});
