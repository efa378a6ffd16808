/**
 * Helpers of the reference's packages that are plain functions of their arguments, done with
 * pion's own pieces: front matter (Bun's YAML parser, so values keep their YAML types, as the
 * reference's do) and thinking levels (pion's per-model levels; a level a model lacks becomes the
 * next higher one it has, else the next lower, as in the reference).
 */
import { THINKING_ORDER, thinkingLevelsFor } from "../../providers/thinking.ts";
import type { Model, ThinkingLevel } from "../../providers/types.ts";

function splitFrontmatter(content: string): { yaml: string | undefined; body: string } {
  const text = content.replace(/^\uFEFF/, "").replace(/\r\n?/g, "\n");
  if (!text.startsWith("---\n") && text !== "---") return { yaml: undefined, body: text };
  const end = text.indexOf("\n---", 3);
  if (end === -1) return { yaml: undefined, body: text };
  const after = text.indexOf("\n", end + 4);
  return { yaml: text.slice(4, end), body: after === -1 ? "" : text.slice(after + 1) };
}

function parseFrontmatter(content: string): { frontmatter: Record<string, unknown>; body: string } {
  const { yaml, body } = splitFrontmatter(content);
  if (yaml === undefined) return { frontmatter: {}, body };
  const parsed: unknown = yaml.trim() ? Bun.YAML.parse(yaml) : {};
  return { frontmatter: parsed && typeof parsed === "object" && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {}, body };
}

export const frontmatterExports = {
  parseFrontmatter,
  stripFrontmatter: (content: string): string => splitFrontmatter(content).body,
};

const supported = (model: Model | undefined): ThinkingLevel[] => thinkingLevelsFor(model);

function clampThinkingLevel(model: Model | undefined, level: ThinkingLevel): ThinkingLevel {
  const levels = supported(model);
  if (levels.includes(level)) return level;
  const at = THINKING_ORDER.indexOf(level);
  if (at === -1) return levels[0] ?? "off";
  for (let i = at; i < THINKING_ORDER.length; i++) if (levels.includes(THINKING_ORDER[i]!)) return THINKING_ORDER[i]!;
  for (let i = at - 1; i >= 0; i--) if (levels.includes(THINKING_ORDER[i]!)) return THINKING_ORDER[i]!;
  return levels[0] ?? "off";
}

export const thinkingExports = { clampThinkingLevel, getSupportedThinkingLevels: supported };
