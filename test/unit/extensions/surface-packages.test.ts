/**
 * pi-coding-agent's DefaultPackageManager (src/extensions/surface/coding-packages.ts) against
 * the reference's on the same folders: the settings each writes, the installed paths and the
 * resolved resources, for local path packages and a git package served by a local git server.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { codingPackages, DefaultPackageManager } from "../../../src/extensions/surface/coding-packages.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { git, publishRepo, pushCommit, startGitServer } from "../../support/git-server.ts";

const REF = process.env.PION_REFERENCE_PKG;

type Manager = {
  installAndPersist(s: string, o?: { local?: boolean }): Promise<void>;
  removeAndPersist(s: string, o?: { local?: boolean }): Promise<boolean>;
  install(s: string, o?: { local?: boolean }): Promise<void>;
  addSourceToSettings(s: string, o?: { local?: boolean }): boolean;
  removeSourceFromSettings(s: string, o?: { local?: boolean }): boolean;
  getInstalledPath(s: string, scope: "user" | "project"): string | undefined;
  listConfiguredPackages(): unknown[];
  resolve(onMissing?: (s: string) => Promise<"install" | "skip" | "error">): Promise<unknown>;
  update(s?: string): Promise<void>;
  setProgressCallback(cb: ((e: { type: string; action: string; source: string; message?: string }) => void) | undefined): void;
};
type SettingsManagerClass = { create(cwd: string, agentDir: string): object };

const pionSettings = () => (referenceModules()["pi-coding-agent"] as { SettingsManager: SettingsManagerClass }).SettingsManager;
const pion = (cwd: string, agentDir: string): Manager => new DefaultPackageManager({ cwd, agentDir, settingsManager: pionSettings().create(cwd, agentDir) as never }) as unknown as Manager;

async function reference(cwd: string, agentDir: string): Promise<Manager> {
  const mod = (await import(join(REF!, "dist/index.js"))) as { DefaultPackageManager: new (o: unknown) => Manager; SettingsManager: SettingsManagerClass };
  return new mod.DefaultPackageManager({ cwd, agentDir, settingsManager: mod.SettingsManager.create(cwd, agentDir), commandOutput: "capture" });
}

function write(root: string, files: Record<string, string>): void {
  for (const [rel, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, rel)), { recursive: true });
    writeFileSync(join(root, rel), text);
  }
}

const EXT = "export default function () {}\n";
const SKILL = (name: string) => `---\nname: ${name}\ndescription: a skill\n---\nbody\n`;

/** A work folder: agent (user settings), cwd, and a package folder `pkg` offering every kind of resource. */
function folders(): { root: string; agent: string; cwd: string; pkg: string } {
  const root = mkdtempSync(join(tmpdir(), "pion-pkgmgr-"));
  const agent = join(root, "agent");
  const cwd = join(root, "cwd");
  mkdirSync(agent, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  write(join(root, "pkg"), {
    "extensions/a.ts": EXT,
    "extensions/sub/index.ts": EXT,
    "skills/foo/SKILL.md": SKILL("foo"),
    "skills/group/bar/SKILL.md": SKILL("bar"),
    "prompts/p.md": "a prompt\n",
    "CHANGELOG.md": "# changes\n",
  });
  return { root, agent, cwd, pkg: join(root, "pkg") };
}

const settingsOf = (agent: string): unknown => {
  const file = join(agent, "settings.json");
  return existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : undefined;
};

/** Run the same steps with the reference's manager and pion's on the same folders; each step's results and the settings after it. */
async function both(f: { agent: string; cwd: string }, steps: (m: Manager) => Promise<unknown[]>, reset: () => void = () => rmSync(join(f.agent, "settings.json"), { force: true })) {
  const theirs = await steps(await reference(f.cwd, f.agent));
  const theirSettings = settingsOf(f.agent);
  reset();
  const ours = await steps(pion(f.cwd, f.agent));
  return { theirs, ours, theirSettings, ourSettings: settingsOf(f.agent) };
}

describe("DefaultPackageManager", () => {
  test("is the surface object's class", () => {
    expect(codingPackages.DefaultPackageManager).toBe(DefaultPackageManager);
  });

  (REF ? test : test.skip)("a local package: the settings written, the paths found and the resources resolved are the reference's", async () => {
    const f = folders();
    write(f.agent, { "extensions/own.ts": EXT, "prompts/mine.md": "x\n", "skills/s1/SKILL.md": SKILL("s1") });
    const r = await both(f, async (m) => {
      const out: unknown[] = [];
      await m.installAndPersist("../pkg");
      out.push(settingsOf(f.agent), m.addSourceToSettings("../pkg"), m.getInstalledPath("../pkg", "user"), m.listConfiguredPackages(), await m.resolve());
      return out;
    });
    expect(r.ours).toEqual(r.theirs);
    expect(r.ourSettings).toEqual(r.theirSettings);
    expect((r.ours[4] as { skills: { path: string }[] }).skills.map((s) => s.path).sort()).toEqual([join(f.agent, "skills/s1/SKILL.md"), join(f.pkg, "skills/foo/SKILL.md"), join(f.pkg, "skills/group/bar/SKILL.md")]);
  });

  (REF ? test : test.skip)("filters of a settings entry and top-level overrides mark resources enabled as the reference does", async () => {
    const f = folders();
    write(f.agent, { "prompts/mine.md": "x\n", "extensions/auto.ts": EXT });
    write(f.root, { "extra/one.ts": EXT, "extra/two.ts": EXT, "extra/skills/s/SKILL.md": SKILL("s"), "notes.md": "n\n" });
    const settings = {
      packages: [{ source: "../pkg", extensions: ["extensions/a.ts"], skills: [] }],
      prompts: ["!mine.md", "../notes.md"],
      extensions: ["../extra", `-${join(f.root, "extra/two.ts")}`, "!auto.ts"],
      skills: ["../extra/skills"],
    };
    const setup = () => writeFileSync(join(f.agent, "settings.json"), JSON.stringify(settings));
    setup();
    const r = await both(f, async (m) => [await m.resolve(), m.listConfiguredPackages()], setup);
    expect(r.ours).toEqual(r.theirs);
    const resolved = r.ours[0] as { extensions: { path: string; enabled: boolean }[]; prompts: { path: string; enabled: boolean }[] };
    expect(resolved.extensions.map((e) => [e.path, e.enabled])).toEqual([
      [join(f.root, "extra/one.ts"), true],
      [join(f.root, "extra/two.ts"), false],
      [join(f.agent, "extensions/auto.ts"), false],
      [join(f.pkg, "extensions/a.ts"), true],
      [join(f.pkg, "extensions/sub/index.ts"), false],
    ]);
    expect(resolved.prompts.find((p) => p.path.endsWith("mine.md"))?.enabled).toBe(false);
  });

  (REF ? test : test.skip)("a local file source and removal: the settings and results are the reference's", async () => {
    const f = folders();
    write(f.root, { "single.ts": EXT });
    const r = await both(f, async (m) => {
      await m.installAndPersist(join(f.root, "single.ts"));
      await m.installAndPersist("../pkg");
      const resolved = await m.resolve();
      const removed = await m.removeAndPersist("../pkg");
      return [resolved, removed, await m.removeAndPersist("../pkg"), settingsOf(f.agent)];
    });
    expect(r.ours).toEqual(r.theirs);
    expect(r.ourSettings).toEqual({ packages: ["../single.ts"] });
    expect(r.ourSettings).toEqual(r.theirSettings);
  });

  describe("a git package from a git server", () => {
    const server = startGitServer();
    afterAll(() => server.stop());

    (REF ? test : test.skip)("install, resolve, update and remove as the reference does", async () => {
      // Each manager starts from the same one-commit repository.
      const publish = async () => {
        rmSync(join(server.root, "team/tools.git"), { recursive: true, force: true });
        await publishRepo(server, "team/tools", [{ "extensions/tool.ts": EXT, "prompts/p.md": "one\n" }]);
      };
      const url = `${server.url}/team/tools.git`;
      const f = folders();
      const checkout = join(f.agent, "git", "127.0.0.1", "team", "tools");
      const heads: string[] = [];
      const r = await both(
        f,
        async (m) => {
          await publish();
          const events: string[] = [];
          m.setProgressCallback((e) => events.push(`${e.type} ${e.action} ${e.source}`));
          await m.installAndPersist(url);
          const installed = [settingsOf(f.agent), m.getInstalledPath(url, "user"), await m.resolve()];
          heads.push(await pushCommit(server, "team/tools", { "skills/new/SKILL.md": SKILL("new") }));
          await m.update();
          const updated = [(await git(checkout, "rev-parse", "HEAD")) === heads.at(-1), await m.resolve()];
          await m.removeAndPersist(url);
          return [installed, updated, existsSync(checkout), existsSync(join(f.agent, "git", "127.0.0.1")), events.filter((e) => !e.startsWith("result"))];
        },
        () => rmSync(join(f.agent, "settings.json"), { force: true }),
      );
      expect(r.ours).toEqual(r.theirs);
      expect((r.ours[1] as unknown[])[0]).toBe(true);
      expect(r.ours[4]).toEqual([`start install ${url}`, `complete install ${url}`, `start update ${url}`, `complete update ${url}`, `start remove ${url}`, `complete remove ${url}`]);
      expect(r.ourSettings).toEqual({ packages: [] });
      expect(r.ourSettings).toEqual(r.theirSettings);
    });
  });

  test("a missing git package is installed by resolve, skipped or refused as onMissing says; a failure is reported, not thrown", async () => {
    const server = startGitServer();
    try {
      await publishRepo(server, "u/r", [{ "extensions/e.ts": EXT }]);
      const f = folders();
      const url = `${server.url}/u/r.git`;
      writeFileSync(join(f.agent, "settings.json"), JSON.stringify({ packages: [url, `${server.url}/u/missing.git`] }));
      const m = pion(f.cwd, f.agent);
      const skipped = (await m.resolve(async () => "skip")) as { extensions: unknown[] };
      expect(skipped.extensions).toEqual([]);
      await expect(m.resolve(async () => "error")).rejects.toThrow(`Missing source: ${url}`);
      const resolved = (await m.resolve()) as { extensions: { path: string; enabled: boolean; metadata: unknown }[]; installFailures: { source: string }[] };
      const root = join(f.agent, "git", "127.0.0.1", "u", "r");
      expect(resolved.extensions).toEqual([{ path: join(root, "extensions/e.ts"), enabled: true, metadata: { source: url, scope: "user", origin: "package", baseDir: root, packageRoot: root } }]);
      expect(resolved.installFailures.map((x) => x.source)).toEqual([`${server.url}/u/missing.git`]);
    } finally {
      server.stop();
    }
  });

  test("project scope writes the project's .pion/settings.json; a local path there is relative to it", async () => {
    const f = folders();
    const m = pion(f.cwd, f.agent);
    await m.installAndPersist("../pkg", { local: true });
    expect(settingsOf(join(f.cwd, ".pion"))).toEqual({ packages: ["../../pkg"] });
    expect(m.getInstalledPath("../../pkg", "project")).toBe(f.pkg);
    expect(m.listConfiguredPackages()).toEqual([{ source: "../../pkg", scope: "project", filtered: false, installedPath: f.pkg }]);
    expect(settingsOf(f.agent)).toBeUndefined();
    expect(await m.removeAndPersist("../pkg", { local: true })).toBe(true);
    expect(settingsOf(join(f.cwd, ".pion"))).toEqual({ packages: [] });
  });

  test("what cannot be honoured throws naming the method; bad input fails as the reference's does", async () => {
    const f = folders();
    writeFileSync(join(f.agent, "settings.json"), JSON.stringify({ packages: ["npm:left-pad"] }));
    const m = pion(f.cwd, f.agent) as Manager & { checkForAvailableUpdates(): Promise<unknown>; resolveExtensionSources(s: string[], o?: object): Promise<unknown> };
    await expect(m.checkForAvailableUpdates()).rejects.toThrow("DefaultPackageManager.checkForAvailableUpdates");
    await expect(m.resolveExtensionSources(["npm:x"], { temporary: true })).rejects.toThrow("DefaultPackageManager.resolveExtensionSources");
    await expect(m.install("./nope")).rejects.toThrow(`Path does not exist: ${join(f.cwd, "nope")}`);
    await expect(m.update("npm:other")).rejects.toThrow("No matching package found for npm:other");
    await expect(m.update("left-pad")).rejects.toThrow("No matching package found for left-pad. Did you mean npm:left-pad?");
    const untrusted = new DefaultPackageManager({ cwd: f.cwd, agentDir: f.agent, settingsManager: { ...(pionSettings().create(f.cwd, f.agent) as object), isProjectTrusted: () => false } as never });
    await expect(untrusted.install("../pkg", { local: true })).rejects.toThrow("Project is not trusted");
  });
});
