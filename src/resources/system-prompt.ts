import type { Tool } from "../tools/tool.ts";
import type { ContextFile } from "./context-files.ts";
import type { Skill } from "./skills.ts";

export interface SystemPromptInput {
  cwd: string;
  /** The active tools, in the order they are offered to the model. */
  tools: readonly Tool[];
  /** Replaces the base text (--system-prompt); the sections after it stay. */
  custom?: string;
  /** Added after everything else (--append-system-prompt). */
  append?: string;
  now?: Date;
  /** Advertised by name, description and path; skills marked disableModelInvocation are left out. */
  skills?: readonly Skill[];
  /** Shown in the given order, each under its path. */
  contextFiles?: readonly ContextFile[];
}

const BASE = `You are pion, a coding agent working in the user's project. You complete software tasks by reading code, running commands and changing files through the tools listed below.

How you work:
- Understand before you change: read the relevant files and the code around what you touch. Look things up instead of guessing at an API, a file's layout or a command's output.
- Make the smallest change that does the job, in the style of the code around it. Edit existing files rather than rewriting them.
- Check your work: run the tests, the build or a command that shows the change works, and read what it prints.
- When something fails, find the cause before trying again; do not repeat a failing step unchanged.
- If the request is ambiguous in a way that matters, ask. Otherwise take the reasonable reading and say which one you took.

How you report:
- Be concise and direct: what you changed, how you checked it, and what is left.
- Refer to files by path (with a line number when it helps) so the user can find them.
- Give your answer as text in your reply, not through a tool.`;

/** pion's own system prompt: base text, tools, guidelines, skills, context files, date and cwd, then `append`. */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const names = new Set(input.tools.map((t) => t.name));
  const parts = [input.custom ?? BASE];
  if (input.tools.length > 0) {
    parts.push(`Available tools:\n${input.tools.map((t) => `- ${t.name}: ${firstLine(t.description)}`).join("\n")}`);
  }
  const guidelines = toolGuidelines(names);
  if (guidelines.length > 0) parts.push(`Guidelines:\n${guidelines.map((g) => `- ${g}`).join("\n")}`);
  const skills = skillsSection(input.skills ?? [], names);
  if (skills) parts.push(skills);
  const context = contextSection(input.contextFiles ?? []);
  if (context) parts.push(context);
  const date = (input.now ?? new Date()).toISOString().slice(0, 10);
  parts.push(`Current date: ${date}\nCurrent working directory: ${input.cwd}`);
  if (input.append) parts.push(input.append);
  return parts.join("\n\n");
}

const EXPLORE_TOOLS = ["grep", "find", "ls"] as const;

function toolGuidelines(names: ReadonlySet<string>): string[] {
  const has = (name: string) => names.has(name);
  const out: string[] = [];
  const explore = EXPLORE_TOOLS.filter(has);
  if (explore.length > 0 && has("bash")) {
    out.push(`Explore the project with ${list(explore)} rather than bash: they skip ignored files and keep output short.`);
  } else if (explore.length > 0) {
    out.push(`Explore the project with ${list(explore)}.`);
  } else if (has("bash")) {
    out.push("Explore the project with bash (ls, rg or grep, find), keeping output short with head or filters.");
  }
  if (has("read")) out.push("Read a file before you change it; read long files in parts with offset and limit.");
  if (has("edit")) {
    out.push("Change existing files with edit. Its old text must match the file exactly, so copy it from what you read.");
  }
  if (has("write")) {
    out.push(
      has("edit")
        ? "Use write only to create a file or to replace one completely."
        : "Use write to create or change files; it replaces the whole file, so include all of its content.",
    );
  }
  if (has("bash")) {
    out.push(
      "Use bash to run tests, builds, git and other commands. Avoid commands that wait for input or never exit (servers, watchers, editors).",
    );
  }
  if (!has("edit") && !has("write") && !has("bash")) {
    out.push("None of your tools can change files: describe the changes you would make instead of claiming to have made them.");
  }
  return out;
}

function skillsSection(skills: readonly Skill[], names: ReadonlySet<string>): string | undefined {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  const reader = names.has("read") ? "the read tool" : names.has("bash") ? "bash" : undefined;
  if (visible.length === 0 || !reader) return undefined;
  const entries = visible.map((s) => `- ${s.name}: ${s.description}\n  File: ${s.filePath}`);
  return [
    "Skills:",
    `Skills are instructions for particular kinds of work. When a task matches a skill's description, read its file with ${reader} before starting, and follow it. Paths in a skill are relative to the folder holding its file.`,
    ...entries,
  ].join("\n");
}

function contextSection(files: readonly ContextFile[]): string | undefined {
  if (files.length === 0) return undefined;
  const sections = files.map((f) => `## ${f.path}\n\n${f.content.trim()}`);
  return [
    "# Project context",
    "Instructions from the user and the project, from the most general to the most specific. Follow them; where they conflict, the later one wins.",
    ...sections,
  ].join("\n\n");
}

const list = (items: readonly string[]) =>
  items.length === 1 ? items[0] : `${items.slice(0, -1).join(", ")} and ${items[items.length - 1]}`;

const firstLine = (s: string) => s.trim().split("\n")[0] ?? "";
