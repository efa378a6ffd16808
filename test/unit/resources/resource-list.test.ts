import { describe, expect, test } from "bun:test";
import { homedir } from "node:os";
import { join } from "node:path";
import { filesIn, piAgentDir, projectConfigDirs, userConfigDirs } from "../../../src/config-dirs.ts";
import { resourceList } from "../../../src/resources/resource-list.ts";

describe("config folders", () => {
  test("the reference's agent folder before pion's home; one folder when they are the same", () => {
    expect(piAgentDir({ HOME: "/u" })).toBe("/u/.pi/agent");
    expect(piAgentDir({ HOME: "/u", PI_CODING_AGENT_DIR: "/agent" })).toBe("/agent");
    expect(userConfigDirs("/u/.pion", { HOME: "/u" })).toEqual(["/u/.pi/agent", "/u/.pion"]);
    expect(userConfigDirs("/agent", { PI_CODING_AGENT_DIR: "/agent/" })).toEqual(["/agent"]);
    expect(projectConfigDirs("/p")).toEqual(["/p/.pi", "/p/.pion"]);
    expect(filesIn(["/a", "/b"], "mcp.json")).toEqual(["/a/mcp.json", "/b/mcp.json"]);
  });
});

describe("settings resource lists", () => {
  const list = (...entries: string[]) => resourceList(entries.map((entry) => ({ entry, base: "/home/u/.pi/agent", level: "user" as const })));

  test("plain entries resolve from the settings file's folder, ~ from the home folder; builtin: names are dropped", () => {
    expect(list("skills-extra", "/abs/x.md", "~/mine", "builtin:mcp", "-builtin:mcp").paths).toEqual([
      { path: "/home/u/.pi/agent/skills-extra", location: "user" },
      { path: "/abs/x.md", location: "user" },
      { path: join(homedir(), "mine"), location: "user" },
    ]);
  });

  test("!glob leaves out, +path brings back, -path leaves out whatever else says; a skill's folder counts", () => {
    const l = list("!*.md", "+prompts/keep.md", "-prompts/keep.md", "+prompts/also.md", "!**/secret/**");
    expect(l.enabled("/home/u/.pi/agent/prompts/drop.md")).toBe(false);
    expect(l.enabled("/home/u/.pi/agent/prompts/keep.md")).toBe(false);
    expect(l.enabled("/home/u/.pi/agent/prompts/also.md")).toBe(true);
    expect(l.enabled("/home/u/.pi/agent/extensions/a.ts")).toBe(true);
    expect(l.enabled("/home/u/.pi/agent/extensions/secret/a.ts")).toBe(false);
    const skills = list("-skills/old");
    expect(skills.enabled("/home/u/.pi/agent/skills/old/SKILL.md")).toBe(false);
    expect(skills.enabled("/home/u/.pi/agent/skills/new/SKILL.md")).toBe(true);
    expect(list().enabled("/anything")).toBe(true);
  });
});
