/**
 * The reference's skill and context-file helpers over pion's loaders (src/resources/skills.ts,
 * context-files.ts): the skills and files pion itself would load, in the reference's shapes
 * (`sourceInfo`, `diagnostics`), and the reference's text for a prompt's skill list.
 */
import { userConfigDirs } from "../../config-dirs.ts";
import { pionHome } from "../../config.ts";
import { loadContextFiles } from "../../resources/context-files.ts";
import { loadSkills as loadPionSkills, type Skill as PionSkill } from "../../resources/skills.ts";
import { expandHome } from "../../util/home-path.ts";
import { resolve } from "node:path";

export type SourceScope = "user" | "project" | "temporary";
export interface SourceInfo {
  path: string;
  source: string;
  scope: SourceScope;
  origin: "package" | "top-level";
  baseDir?: string;
  changelogPath?: string;
}

/** Where a resource came from, for one that no package or settings entry named. */
export function createSyntheticSourceInfo(
  path: string,
  options: { source: string; scope?: SourceScope; origin?: SourceInfo["origin"]; baseDir?: string; changelogPath?: string },
): SourceInfo {
  return {
    path,
    source: options.source,
    scope: options.scope ?? "temporary",
    origin: options.origin ?? "top-level",
    baseDir: options.baseDir,
    ...(options.changelogPath ? { changelogPath: options.changelogPath } : {}),
  };
}

export interface Skill {
  name: string;
  description: string;
  filePath: string;
  baseDir: string;
  sourceInfo: SourceInfo;
  disableModelInvocation: boolean;
}
export interface Diagnostic {
  type: "warning";
  message: string;
}

const SCOPES: Partial<Record<string, SourceScope>> = { user: "user", project: "project" };

/** `source` "user", "project" and "path" are local files of that scope; any other names itself. */
export function toSkill(s: PionSkill, source: string = s.location): Skill {
  const local = source === "user" || source === "project" || source === "path";
  return {
    name: s.name,
    description: s.description,
    filePath: s.filePath,
    baseDir: s.baseDir,
    sourceInfo: createSyntheticSourceInfo(s.filePath, { source: local ? "local" : source, scope: local ? SCOPES[source] : undefined, baseDir: s.baseDir }),
    disableModelInvocation: s.disableModelInvocation,
  };
}

const abs = (p: string, base?: string) => resolve(base ?? process.cwd(), expandHome(p.trim()));

/**
 * The skills pion loads for `cwd`: with `includeDefaults`, the user folders' (the reference's
 * agent folder and `agentDir`) and the project's; then `skillPaths` (a SKILL.md, a skill folder
 * or a folder of them), which win on a name. Skipped skills are diagnostics, never thrown.
 */
export function loadSkills(options: { cwd: string; agentDir?: string; skillPaths?: string[]; includeDefaults?: boolean }): { skills: Skill[]; diagnostics: Diagnostic[] } {
  const cwd = abs(options.cwd);
  const home = abs(options.agentDir ?? pionHome());
  const loaded = loadPionSkills(
    { home, cwd, userDirs: userConfigDirs(home), project: true },
    { paths: (options.skillPaths ?? []).map((p) => abs(p, cwd)), noDiscovery: options.includeDefaults === false },
  );
  return { skills: loaded.skills.map((s) => toSkill(s)), diagnostics: loaded.warnings.map((message) => ({ type: "warning", message })) };
}

/** The skills in one folder: the folder's own SKILL.md, else its skill folders' (`source` names where they came from). */
export function loadSkillsFromDir(options: { dir: string; source: string }): { skills: Skill[]; diagnostics: Diagnostic[] } {
  const dir = abs(options.dir);
  const loaded = loadPionSkills({ home: dir, cwd: dir, userDirs: [], project: false }, { paths: [dir], noDiscovery: true });
  // A folder that does not exist has no skills, as the reference answers it.
  const warnings = loaded.warnings.filter((w) => !w.startsWith("Skill path not found"));
  return { skills: loaded.skills.map((s) => toSkill(s, options.source)), diagnostics: warnings.map((message) => ({ type: "warning", message })) };
}

const escapeXml = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;").replace(/'/g, "&apos;");

/** The skills the model may invoke as the reference lists them in its system prompt ("" when none). */
export function formatSkillsForPrompt(skills: readonly Skill[], fileReadTool: "read" | "bash" | "indirect" = "read"): string {
  const visible = skills.filter((s) => !s.disableModelInvocation);
  if (visible.length === 0) return "";
  const how = { read: "Use the read tool to load", bash: "Use bash to load", indirect: "Load" }[fileReadTool];
  const entries = visible.flatMap((s) => [
    "  <skill>",
    `    <name>${escapeXml(s.name)}</name>`,
    `    <description>${escapeXml(s.description)}</description>`,
    `    <location>${escapeXml(s.filePath)}</location>`,
    "  </skill>",
  ]);
  return [
    "\n\nThe following skills provide specialized instructions for specific tasks.",
    `${how} a skill's file when the task matches its description.`,
    "Resolve relative paths against the skill's directory (parent of SKILL.md). Use absolute paths in tool calls.",
    "",
    "<available_skills>",
    ...entries,
    "</available_skills>",
  ].join("\n");
}

/** A message that is one expanded `/skill:` block (skills.ts `expandSkillCommand`), taken apart; null for any other text. */
export function parseSkillBlock(text: string): { name: string; location: string; content: string; userMessage: string | undefined } | null {
  const m = /^<skill name="([^"]+)" location="([^"]+)">\n([\s\S]*?)\n<\/skill>(?:\n\n([\s\S]+))?$/.exec(text);
  if (!m) return null;
  return { name: m[1]!, location: m[2]!, content: m[3]!, userMessage: m[4]?.trim() || undefined };
}

/** The context files (AGENTS.md, CLAUDE.md) pion gives the model for `cwd`: the user folders' first, then root down to `cwd`. */
export function loadProjectContextFiles(options: { cwd: string; agentDir?: string }): { path: string; content: string }[] {
  const home = abs(options.agentDir ?? pionHome());
  return loadContextFiles({ home, cwd: abs(options.cwd), userDirs: userConfigDirs(home) });
}
