import { describe, expect, test } from "bun:test";
import { buildSystemPrompt, type SystemPromptInput } from "../../../src/resources/system-prompt.ts";
import type { Skill } from "../../../src/resources/skills.ts";
import type { Tool } from "../../../src/tools/tool.ts";

const tool = (name: string, description = `${name} things.\nMore detail.`): Tool => ({
  name,
  description,
  parameters: { type: "object", properties: {} },
  parse: (args) => args,
  execute: async () => ({ content: [] }),
});
const ALL = ["read", "bash", "edit", "write", "grep", "find", "ls"].map((n) => tool(n));
const skill = (name: string, extra: Partial<Skill> = {}): Skill => ({
  name,
  description: `${name} description`,
  filePath: `/h/skills/${name}/SKILL.md`,
  baseDir: `/h/skills/${name}`,
  location: "user",
  found: { source: "auto", scope: "user", origin: "top-level" },
  disableModelInvocation: false,
  ...extra,
});
const build = (input: Partial<SystemPromptInput>) =>
  buildSystemPrompt({ cwd: "/work/proj", tools: ALL, now: new Date("2026-03-04T12:00:00Z"), ...input });

describe("buildSystemPrompt", () => {
  test("sections come in order: base, tools, guidelines, skills, context, date and cwd, append", () => {
    const out = build({
      skills: [skill("pdf-tools")],
      contextFiles: [{ path: "/work/AGENTS.md", content: "Use tabs.\n" }],
      append: "APPENDED",
    });
    const order = [
      "You are pion",
      "Available tools:\n- read: read things.\n- bash: bash things.",
      "Guidelines:",
      "Skills:",
      "- pdf-tools: pdf-tools description\n  File: /h/skills/pdf-tools/SKILL.md",
      "# Project context",
      "## /work/AGENTS.md\n\nUse tabs.",
      "Current date: 2026-03-04\nCurrent working directory: /work/proj",
      "APPENDED",
    ].map((s) => out.indexOf(s));
    expect(order.every((i) => i >= 0)).toBe(true);
    expect(order).toEqual([...order].sort((a, b) => a - b));
    expect(out.endsWith("APPENDED")).toBe(true);
    expect(out).not.toContain("More detail.");
  });

  test("custom replaces only the base text", () => {
    const out = build({ custom: "You are a pirate.", contextFiles: [{ path: "/AGENTS.md", content: "x" }] });
    expect(out.startsWith("You are a pirate.\n\nAvailable tools:")).toBe(true);
    expect(out).not.toContain("You are pion");
    expect(out).toContain("## /AGENTS.md");
    expect(out).toContain("Current working directory: /work/proj");
  });

  test("optional sections are absent when empty", () => {
    const out = build({ tools: [], skills: [], contextFiles: [] });
    expect(out).not.toContain("Available tools:");
    expect(out).not.toContain("Skills:");
    expect(out).not.toContain("# Project context");
    expect(out).toContain("None of your tools can change files");
  });

  test("guidelines follow the active tools", () => {
    const all = build({});
    expect(all).toContain("Explore the project with grep, find and ls rather than bash");
    expect(all).toContain("Use write only to create a file");
    expect(all).not.toContain("None of your tools can change files");

    const bashOnly = build({ tools: [tool("read"), tool("bash")] });
    expect(bashOnly).toContain("Explore the project with bash (ls, rg or grep, find)");
    expect(bashOnly).not.toContain("Change existing files with edit");

    const writeOnly = build({ tools: [tool("read"), tool("write")] });
    expect(writeOnly).toContain("Use write to create or change files; it replaces the whole file");

    const readOnly = build({ tools: [tool("read"), tool("grep")] });
    expect(readOnly).toContain("Explore the project with grep.");
    expect(readOnly).toContain("None of your tools can change files");
  });

  test("skills need a way to read them, and hidden skills are not advertised", () => {
    const skills = [skill("shown"), skill("hidden", { disableModelInvocation: true })];
    const withRead = build({ skills });
    expect(withRead).toContain("read its file with the read tool");
    expect(withRead).toContain("- shown: shown description");
    expect(withRead).not.toContain("hidden");
    expect(build({ skills, tools: [tool("bash")] })).toContain("read its file with bash");
    expect(build({ skills, tools: [tool("grep")] })).not.toContain("Skills:");
    expect(build({ skills: [skill("hidden", { disableModelInvocation: true })] })).not.toContain("Skills:");
  });

  test("context files keep their order, each under its path", () => {
    const out = build({
      contextFiles: [
        { path: "/home/.pion/AGENTS.md", content: "general" },
        { path: "/work/proj/CLAUDE.md", content: "specific" },
      ],
    });
    expect(out).toContain("## /home/.pion/AGENTS.md\n\ngeneral\n\n## /work/proj/CLAUDE.md\n\nspecific");
  });
});
