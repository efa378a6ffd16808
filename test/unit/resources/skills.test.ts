import { describe, expect, test } from "bun:test";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { expandSkillCommand, loadSkills } from "../../../src/resources/skills.ts";
import { roots, skillMd, writeTree } from "./helpers.ts";

describe("loadSkills", () => {
  test.concurrent("reads user and project skills with their locations", () => {
    const r = roots();
    writeTree(r.home, { "skills/pdf-tools/SKILL.md": skillMd("pdf-tools", "Work with PDFs.") });
    writeTree(r.cwd, {
      ".pion/skills/review/SKILL.md": skillMd("review", "Review a diff."),
      ".agents/skills/deploy/SKILL.md": skillMd("deploy", "Ship it."),
    });
    const { skills, warnings } = loadSkills(r);
    expect(warnings).toEqual([]);
    // The reference's load order: the project's folders (.pion, .pi, then .agents), then the user's.
    expect(skills).toEqual([
      {
        name: "review",
        description: "Review a diff.",
        filePath: join(r.cwd, ".pion/skills/review/SKILL.md"),
        baseDir: join(r.cwd, ".pion/skills/review"),
        location: "project",
        found: { source: "auto", scope: "project", origin: "top-level", baseDir: join(r.cwd, ".pion") },
        disableModelInvocation: false,
      },
      {
        name: "deploy",
        description: "Ship it.",
        filePath: join(r.cwd, ".agents/skills/deploy/SKILL.md"),
        baseDir: join(r.cwd, ".agents/skills/deploy"),
        location: "project",
        found: { source: "auto", scope: "project", origin: "top-level", baseDir: join(r.cwd, ".agents") },
        disableModelInvocation: false,
      },
      {
        name: "pdf-tools",
        description: "Work with PDFs.",
        filePath: join(r.home, "skills/pdf-tools/SKILL.md"),
        baseDir: join(r.home, "skills/pdf-tools"),
        location: "user",
        found: { source: "auto", scope: "user", origin: "top-level", baseDir: r.home },
        disableModelInvocation: false,
      },
    ]);
  });

  test.concurrent("no skill folders at all is no skills and no warnings", () => {
    expect(loadSkills(roots())).toEqual({ skills: [], warnings: [] });
  });

  test.concurrent("invalid skills are skipped with one warning each", () => {
    const r = roots();
    writeTree(r.home, {
      "skills/good/SKILL.md": skillMd("good", "Fine."),
      "skills/no-desc/SKILL.md": "---\nname: no-desc\n---\nbody",
      "skills/no-name/SKILL.md": "---\ndescription: x\n---\nbody",
      "skills/Upper/SKILL.md": skillMd("Upper", "Bad case."),
      "skills/double--hyphen/SKILL.md": skillMd("double--hyphen", "Bad hyphens."),
      "skills/mismatch/SKILL.md": skillMd("other", "Wrong folder."),
      "skills/long-desc/SKILL.md": skillMd("long-desc", "x".repeat(1025)),
      [`skills/${"a".repeat(65)}/SKILL.md`]: skillMd("a".repeat(65), "Too long a name."),
      "skills/broken/SKILL.md": "---\nname: broken\n",
      "skills/no-front-matter/SKILL.md": "# Just markdown\n",
      "skills/not-a-skill/README.md": "ignored: no SKILL.md",
      "skills/loose-file.md": "ignored: not a folder",
    });
    const { skills, warnings } = loadSkills(r);
    expect(skills.map((s) => s.name)).toEqual(["good"]);
    expect(warnings).toHaveLength(9);
    const about = (folder: string) => warnings.find((w) => w.includes(`/skills/${folder}/SKILL.md`));
    expect(about("no-desc")).toContain('no "description"');
    expect(about("no-name")).toContain('no "name"');
    expect(about("Upper")).toContain("lowercase");
    expect(about("double--hyphen")).toContain("lowercase");
    expect(about("mismatch")).toContain('does not match its folder "mismatch"');
    expect(about("long-desc")).toContain("longer than 1024");
    expect(about("a".repeat(65))).toContain("longer than 64");
    expect(about("broken")).toContain("no closing ---");
    expect(about("no-front-matter")).toContain('no "name"');
  });

  test.concurrent("a project skill wins over a user skill of the same name, which is left out with a warning", () => {
    const r = roots();
    writeTree(r.home, { "skills/review/SKILL.md": skillMd("review", "User version.") });
    writeTree(r.cwd, { ".pion/skills/review/SKILL.md": skillMd("review", "Project version.") });
    const { skills, warnings } = loadSkills(r);
    expect(warnings).toEqual([`Skill "review" at ${join(r.home, "skills/review/SKILL.md")} is left out: the one at ${join(r.cwd, ".pion/skills/review/SKILL.md")} has that name and loaded first`]);
    expect(skills.map((s) => [s.description, s.location])).toEqual([["Project version.", "project"]]);
  });

  test.concurrent("a clash between two project folders keeps the first loaded (.pion before .agents) and warns", () => {
    const r = roots();
    writeTree(r.cwd, {
      ".pion/skills/review/SKILL.md": skillMd("review", "From .pion."),
      ".agents/skills/review/SKILL.md": skillMd("review", "From .agents."),
    });
    const { skills, warnings } = loadSkills(r);
    expect(skills.map((s) => s.description)).toEqual(["From .pion."]);
    expect(warnings).toEqual([
      `Skill "review" at ${join(r.cwd, ".agents/skills/review/SKILL.md")} is left out: the one at ${join(r.cwd, ".pion/skills/review/SKILL.md")} has that name and loaded first`,
    ]);
  });

  test.concurrent("the same skill reached twice (a link) loads once, silently", () => {
    const r = roots();
    writeTree(r.home, { "skills/review/SKILL.md": skillMd("review", "Once.") });
    const { skills, warnings } = loadSkills(r, { paths: [join(r.home, "skills/review")] });
    expect([skills.map((s) => s.description), warnings]).toEqual([["Once."], []]);
  });

  test.concurrent("disable-model-invocation is read", () => {
    const r = roots();
    writeTree(r.home, {
      "skills/manual/SKILL.md": "---\nname: manual\ndescription: Only on request.\ndisable-model-invocation: true\n---\n",
    });
    expect(loadSkills(r).skills[0].disableModelInvocation).toBe(true);
  });
});

describe("expandSkillCommand", () => {
  const setup = () => {
    const r = roots();
    writeTree(r.home, {
      "skills/pdf-tools/SKILL.md": skillMd(
        "pdf-tools",
        "Work with PDFs.",
        "# PDF tools\n\nSee [formats](references/formats.md#top), [web](https://example.com) and [gone](missing.md).",
      ),
      "skills/pdf-tools/references/formats.md": "formats",
    });
    const { skills } = loadSkills(r);
    return { skills, dir: join(r.home, "skills/pdf-tools") };
  };

  test.concurrent("wraps the body in a skill block and appends the request", () => {
    const { skills, dir } = setup();
    expect(expandSkillCommand('/skill:pdf-tools extract "report.pdf"\nplease', skills)).toBe(
      [
        `<skill name="pdf-tools" location="${dir}/SKILL.md">`,
        `Relative paths in this skill are relative to ${dir}.`,
        "",
        "# PDF tools",
        "",
        `See [formats](${dir}/references/formats.md#top), [web](https://example.com) and [gone](missing.md).`,
        "</skill>",
        "",
        'extract "report.pdf"\nplease',
      ].join("\n"),
    );
  });

  test.concurrent("without a request the block stands alone", () => {
    const { skills } = setup();
    const out = expandSkillCommand("/skill:pdf-tools", skills);
    expect(out.startsWith('<skill name="pdf-tools"')).toBe(true);
    expect(out.endsWith("</skill>")).toBe(true);
  });

  test.concurrent("unknown names and other text are left unchanged", () => {
    const { skills } = setup();
    for (const text of ["/skill:nope do it", "/skill:", "hello /skill:pdf-tools", "/pdf-tools", "/skill:pdf-toolsx"]) {
      expect(expandSkillCommand(text, skills)).toBe(text);
    }
  });

  test.concurrent("a skill whose file disappeared is an error naming it", () => {
    const { skills, dir } = setup();
    rmSync(join(dir, "SKILL.md"));
    expect(() => expandSkillCommand("/skill:pdf-tools", skills)).toThrow(/Cannot load skill "pdf-tools"/);
  });
});

describe("loadSkills with explicit paths (--skill, --no-skills)", () => {
  test.concurrent("a skill folder, a SKILL.md file, or a folder of skills, loaded after the discovered ones (which win a name), as in the reference", () => {
    const r = roots();
    writeTree(r.home, { "skills/review/SKILL.md": skillMd("review", "Discovered review.") });
    writeTree(r.cwd, {
      "mine/review/SKILL.md": skillMd("review", "Explicit review."),
      "mine/lint/SKILL.md": skillMd("lint", "Lint it."),
      "many/a-one/SKILL.md": skillMd("a-one", "First."),
      "many/b-two/SKILL.md": skillMd("b-two", "Second."),
    });
    const { skills, warnings } = loadSkills(r, { paths: ["mine/review", join(r.cwd, "mine/lint/SKILL.md"), "many", "gone"] });
    expect(warnings).toEqual([
      `Skill "review" at ${join(r.cwd, "mine/review/SKILL.md")} is left out: the one at ${join(r.home, "skills/review/SKILL.md")} has that name and loaded first`,
      `Skill path not found: ${join(r.cwd, "gone")}`,
    ]);
    expect(skills.map((s) => [s.name, s.location, s.description])).toEqual([
      ["review", "user", "Discovered review."],
      ["lint", "path", "Lint it."],
      ["a-one", "path", "First."],
      ["b-two", "path", "Second."],
    ]);
    // A command-line skill's sourceInfo is the reference's: local, temporary, its own folder.
    expect(skills[1]!.found).toEqual({ source: "local", scope: "temporary", origin: "top-level", baseDir: join(r.cwd, "mine/lint") });
  });

  test.concurrent("noDiscovery skips the conventional folders only", () => {
    const r = roots();
    writeTree(r.home, { "skills/review/SKILL.md": skillMd("review", "Discovered.") });
    writeTree(r.cwd, { "x/lint/SKILL.md": skillMd("lint", "Lint it.") });
    expect(loadSkills(r, { noDiscovery: true }).skills).toEqual([]);
    expect(loadSkills(r, { noDiscovery: true, paths: ["x/lint"] }).skills.map((s) => s.name)).toEqual(["lint"]);
  });
});
