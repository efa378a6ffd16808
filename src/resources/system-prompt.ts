import type { Tool } from "../tools/tool.ts";

export interface SystemPromptInput {
  cwd: string;
  tools: readonly Tool[];
  /** Replaces the base text (--system-prompt). */
  custom?: string;
  /** Added after everything else (--append-system-prompt). */
  append?: string;
  now?: Date;
}

const BASE = `You are pion, a coding agent working in a user's project through tools.
Read before you change: look at the relevant files first, then make focused edits.
Prefer small, verifiable steps; run commands to check your work when it helps.
Be concise in what you write back: say what you did and what remains.`;

/** pion's own system prompt, assembled from sections. */
export function buildSystemPrompt(input: SystemPromptInput): string {
  const parts = [input.custom ?? BASE];
  if (input.tools.length > 0) {
    parts.push(`Available tools:\n${input.tools.map((t) => `- ${t.name}: ${firstLine(t.description)}`).join("\n")}`);
  }
  const date = (input.now ?? new Date()).toISOString().slice(0, 10);
  parts.push(`Current date: ${date}\nCurrent working directory: ${input.cwd}`);
  if (input.append) parts.push(input.append);
  return parts.join("\n\n");
}

const firstLine = (s: string) => s.trim().split("\n")[0] ?? "";
