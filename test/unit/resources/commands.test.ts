import { describe, expect, test } from "bun:test";
import { listCommands } from "../../../src/resources/commands.ts";
import type { PromptTemplate } from "../../../src/resources/prompt-templates.ts";
import type { Skill } from "../../../src/resources/skills.ts";

describe("listCommands", () => {
  test("templates then skills, in get_commands' shape", () => {
    const templates: PromptTemplate[] = [
      { name: "fix-tests", description: "Fix failing tests", content: "Fix", filePath: "/p/.pion/prompts/fix-tests.md", location: "project", found: { source: "auto", scope: "project", origin: "top-level", baseDir: "/p/.pion" } },
    ];
    const skills: Skill[] = [
      {
        name: "brave-search",
        description: "Web search",
        filePath: "/h/skills/brave-search/SKILL.md",
        baseDir: "/h/skills/brave-search",
        location: "user",
        found: { source: "npm:skills-pkg", scope: "user", origin: "package", baseDir: "/h/npm/node_modules/skills-pkg" },
        disableModelInvocation: true,
      },
    ];
    expect(listCommands(skills, templates)).toEqual([
      {
        name: "fix-tests",
        description: "Fix failing tests",
        source: "prompt",
        location: "project",
        path: "/p/.pion/prompts/fix-tests.md",
        sourceInfo: { path: "/p/.pion/prompts/fix-tests.md", source: "auto", scope: "project", origin: "top-level", baseDir: "/p/.pion" },
      },
      {
        name: "skill:brave-search",
        description: "Web search",
        source: "skill",
        location: "user",
        path: "/h/skills/brave-search/SKILL.md",
        sourceInfo: { path: "/h/skills/brave-search/SKILL.md", source: "npm:skills-pkg", scope: "user", origin: "package", baseDir: "/h/npm/node_modules/skills-pkg" },
      },
    ]);
  });

  test("nothing loaded, no commands", () => {
    expect(listCommands([], [])).toEqual([]);
  });
});
