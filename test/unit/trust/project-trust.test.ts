import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings, type Settings } from "../../../src/config.ts";

/** The settings' values without where they came from. */
const values = ({ settingSources: _s, listedResources: _l, listedPackages: _p, ...rest }: Settings) => rest;
import { projectPaths } from "../../../src/resources/project-paths.ts";
import { loadPromptTemplates } from "../../../src/resources/prompt-templates.ts";
import { loadSkills } from "../../../src/resources/skills.ts";
import { decideProjectTrust, skippedNotice } from "../../../src/trust/project-trust.ts";
import { nearestDecision, readTrustDecisions, trustFilePath, writeDecision } from "../../../src/trust/trust-store.ts";
import { roots, skillMd, tmp, writeTree } from "../resources/helpers.ts";

const withExtension = (cwd: string) => writeTree(cwd, { ".pion/extensions/evil.ts": "export default () => {};\n" });

describe("trust store", () => {
  test("saves canonical paths sorted, 0600; the nearest saved ancestor decides; null forgets", () => {
    const { home, cwd } = roots();
    const deep = join(cwd, "a", "b");
    mkdirSync(deep, { recursive: true });
    writeDecision(home, cwd, true);
    writeDecision(home, join(cwd, "a"), false);
    expect(readTrustDecisions(home)).toEqual({ [cwd]: true, [join(cwd, "a")]: false });
    expect(Object.keys(JSON.parse(readFileSync(trustFilePath(home), "utf8")))).toEqual([cwd, join(cwd, "a")]);
    expect(statSync(trustFilePath(home)).mode & 0o777).toBe(0o600);
    expect(nearestDecision(readTrustDecisions(home), deep)).toEqual({ path: join(cwd, "a"), trusted: false });
    writeDecision(home, join(cwd, "a"), null);
    expect(nearestDecision(readTrustDecisions(home), deep)).toEqual({ path: cwd, trusted: true });
    expect(nearestDecision({}, deep)).toBeUndefined();
  });

  test("a damaged store is an error naming the file, never read as empty", () => {
    const { home } = roots();
    writeFileSync(trustFilePath(home), "{not json");
    expect(() => readTrustDecisions(home)).toThrow(`Invalid trust store ${trustFilePath(home)}`);
    writeFileSync(trustFilePath(home), JSON.stringify({ "/x": "yes" }));
    expect(() => readTrustDecisions(home)).toThrow('the value for "/x" must be true or false');
    writeFileSync(trustFilePath(home), JSON.stringify({ "/x": null, "/y": true }));
    expect(readTrustDecisions(home)).toEqual({ "/y": true });
  });
});

describe("decideProjectTrust", () => {
  test("nothing protected in the folder: none, without reading trust.json", () => {
    const { home, cwd } = roots();
    writeTree(cwd, { "AGENTS.md": "rules", ".pion/notes.txt": "a bare .pion folder needs no trust" });
    writeFileSync(trustFilePath(home), "{damaged");
    expect(decideProjectTrust({ home, cwd })).toEqual({ state: "none", trusted: false, folder: cwd, found: [] });
  });

  test("order: --no-approve / --approve, then the nearest saved decision, then defaultProjectTrust", () => {
    const { home, cwd } = roots();
    withExtension(cwd);
    const found = [".pion/extensions"];
    expect(decideProjectTrust({ home, cwd })).toEqual({ state: "untrusted", trusted: false, folder: cwd, by: { kind: "default", value: "ask" }, found });
    expect(decideProjectTrust({ home, cwd, defaultProjectTrust: "never" }).trusted).toBe(false);
    expect(decideProjectTrust({ home, cwd, defaultProjectTrust: "always" }).state).toBe("trusted");
    writeDecision(home, join(cwd, ".."), false);
    expect(decideProjectTrust({ home, cwd, defaultProjectTrust: "always" }).by).toEqual({ kind: "saved", path: join(cwd, "..") });
    expect(decideProjectTrust({ home, cwd, defaultProjectTrust: "always" }).trusted).toBe(false);
    expect(decideProjectTrust({ home, cwd, approve: true }).state).toBe("trusted");
    writeDecision(home, cwd, true);
    expect(decideProjectTrust({ home, cwd }).by).toEqual({ kind: "saved", path: cwd });
    expect(decideProjectTrust({ home, cwd, approve: false, defaultProjectTrust: "always" })).toMatchObject({ state: "untrusted", by: { kind: "flag" } });
  });

  test("a symlinked cwd is decided by its canonical path", () => {
    const { home, cwd } = roots();
    withExtension(cwd);
    const link = join(tmp(), "link");
    symlinkSync(cwd, link);
    writeDecision(home, cwd, true);
    expect(decideProjectTrust({ home, cwd: link })).toMatchObject({ state: "trusted", folder: cwd });
  });

  test("every kind of project resource needs trust, and .agents/skills in a parent up to the git root", () => {
    const { home, cwd } = roots();
    for (const rel of [".pion/settings.json", ".pion/mcp.json", ".pion/skills", ".pion/prompts"]) {
      const dir = join(tmp(), "p");
      writeTree(dir, { [rel.endsWith(".json") ? rel : `${rel}/x.md`]: "{}" });
      expect(decideProjectTrust({ home, cwd: dir }).found).toEqual([rel]);
    }
    const repo = tmp();
    writeTree(repo, { ".git/HEAD": "ref", ".agents/skills/s/SKILL.md": skillMd("s", "d"), "sub/deeper/file.txt": "" });
    expect(decideProjectTrust({ home, cwd: join(repo, "sub", "deeper") }).found).toEqual(["../../.agents/skills"]);
    writeTree(cwd, { "inner/.git/HEAD": "ref", "inner/x.txt": "" });
    expect(projectPaths(join(cwd, "inner")).skills).toEqual([join(cwd, "inner", ".pi", "skills"), join(cwd, "inner", ".pion", "skills"), join(cwd, "inner", ".agents", "skills")]);
  });

  test("the stderr notice names what was skipped, why, and how to trust the folder", () => {
    const { home, cwd } = roots();
    withExtension(cwd);
    const byDefault = skippedNotice(decideProjectTrust({ home, cwd }), home)!;
    expect(byDefault).toContain(".pion/extensions");
    expect(byDefault).toContain(`pion trust ${cwd}`);
    expect(byDefault).toContain("--approve");
    expect(skippedNotice(decideProjectTrust({ home, cwd, approve: false }), home)).toContain("--no-approve");
    expect(skippedNotice(decideProjectTrust({ home, cwd, approve: true }), home)).toBeUndefined();
  });
});

describe("loaders honour the decision", () => {
  test("untrusted: no project skills or templates, no project settings; trusted: all, minus defaultProjectTrust", () => {
    const { home, cwd } = roots();
    writeTree(home, { "skills/mine/SKILL.md": skillMd("mine", "user skill"), "prompts/u.md": "user", "settings.json": '{"defaultModel":"a"}' });
    writeTree(cwd, {
      ".pion/skills/proj/SKILL.md": skillMd("proj", "project skill"),
      ".agents/skills/agents/SKILL.md": skillMd("agents", "agents skill"),
      ".pion/prompts/p.md": "project",
      ".pion/settings.json": '{"defaultModel":"b","defaultProjectTrust":"always"}',
    });
    expect(loadSkills({ home, cwd, project: false }).skills.map((s) => s.name)).toEqual(["mine"]);
    expect(loadSkills({ home, cwd, project: true }).skills.map((s) => s.name)).toEqual(["proj", "agents", "mine"]);
    expect(loadPromptTemplates({ home, cwd, project: false }).templates.map((t) => t.name)).toEqual(["u"]);
    expect(loadPromptTemplates({ home, cwd, project: true }).templates.map((t) => t.name)).toEqual(["p", "u"]);
    expect(values(loadSettings(home, cwd, false))).toEqual({ defaultModel: "a" });
    const warnings: string[] = [];
    expect(values(loadSettings(home, cwd, true, (w) => warnings.push(w)))).toEqual({ defaultModel: "b" });
    expect(warnings).toEqual([`ignoring defaultProjectTrust in ${join(cwd, ".pion", "settings.json")}: only the user's settings can set it`]);
  });
});
