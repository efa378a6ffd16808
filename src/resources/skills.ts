import { existsSync } from "node:fs";
import type { FoundBy } from "./source-info.ts";
import { basename, dirname, isAbsolute, join, resolve } from "node:path";
import { errorMessage } from "../util/errors.ts";
import { isDirectory, listDir, pathKind, readTextIfFile, realPathOf, type ExplicitResources, type ResourceLocation, type ResourceScope } from "./files.ts";
import { parseFrontmatter } from "./frontmatter.ts";
import { foundFor, resourceSources, type ResourceSource } from "./load-order.ts";

export interface Skill {
  name: string;
  description: string;
  /** Absolute path of the skill's SKILL.md. */
  filePath: string;
  /** The folder holding SKILL.md; relative paths in the skill resolve against it. */
  baseDir: string;
  location: ResourceLocation;
  /** How it was found (the reference's `sourceInfo`, without the path). */
  found: FoundBy;
  /** `disable-model-invocation: true`: reachable through `/skill:name` only, not advertised to the model. */
  disableModelInvocation: boolean;
}

export interface LoadedSkills {
  /** In load order (load-order.ts); one per name. */
  skills: Skill[];
  /** One line per skipped or shadowed skill, for the caller to print on stderr. */
  warnings: string[];
}

export const SKILL_FILE = "SKILL.md";
const NAME = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const MAX_NAME = 64;
const MAX_DESCRIPTION = 1024;

/**
 * Every skill of the sources (load-order.ts), in their order: a `<folder>/<name>/SKILL.md` of a
 * conventional folder; for a path, a SKILL.md file, a skill folder, or a folder of skill folders.
 * The first skill of a name wins (the reference's rule); a later one is left out with a warning,
 * the same file reached twice silently. `noDiscovery` (`--no-skills`) keeps only the `-e`
 * packages' skills and the command line's paths. Invalid skills are skipped with a warning, never thrown.
 */
export function loadSkills(roots: ResourceScope, explicit: ExplicitResources = {}): LoadedSkills {
  const byName = new Map<string, Skill>();
  const files = new Set<string>();
  const warnings: string[] = [];
  const add = (skill: Skill | string | undefined) => {
    if (skill === undefined) return;
    if (typeof skill === "string") return void warnings.push(skill);
    if (skill.location !== "path" && explicit.listed?.enabled(skill.filePath) === false) return;
    const file = realPathOf(skill.filePath);
    if (files.has(file)) return;
    const first = byName.get(skill.name);
    if (first) return void warnings.push(`Skill "${skill.name}" at ${skill.filePath} is left out: the one at ${first.filePath} has that name and loaded first`);
    byName.set(skill.name, skill);
    files.add(file);
  };
  const addFolder = (dir: string, source: ResourceSource) => {
    let entries: string[];
    try {
      entries = listDir(dir);
    } catch (err) {
      warnings.push(`Cannot read skills folder ${dir}: ${errorMessage(err)}`);
      return;
    }
    for (const entry of entries) if (!entry.startsWith(".") && entry !== "node_modules") add(readSkill(resolve(dir, entry), entry, source));
  };
  for (const source of resourceSources("skills", roots, explicit)) {
    const { path } = source;
    if (source.as === "folder") {
      if (pathKind(path) === "folder") addFolder(path, source);
      continue;
    }
    const kind = pathKind(path);
    if (kind === "file") add(readSkill(dirname(path), basename(dirname(path)), source, basename(path)));
    else if (kind === "folder" && pathKind(join(path, SKILL_FILE)) === "file") add(readSkill(path, basename(path), source));
    else if (kind === "folder") addFolder(path, source);
    else warnings.push(`Skill path not found: ${path}`);
  }
  return { skills: [...byName.values()], warnings };
}

/** A skill, a warning explaining why the folder is not one, or `undefined` for a folder without SKILL.md. */
function readSkill(baseDir: string, folderName: string, source: ResourceSource, fileName = SKILL_FILE): Skill | string | undefined {
  const filePath = join(baseDir, fileName);
  let attributes: Record<string, string>;
  try {
    if (!isDirectory(baseDir)) return undefined;
    const text = readTextIfFile(filePath);
    if (text === undefined) return undefined;
    attributes = parseFrontmatter(text).attributes;
  } catch (err) {
    return `Skipping skill ${filePath}: ${errorMessage(err)}`;
  }
  const problem = validate(attributes, folderName);
  if (problem) return `Skipping skill ${filePath}: ${problem}`;
  return {
    name: attributes.name,
    description: attributes.description,
    filePath,
    baseDir,
    location: source.location,
    found: foundFor(source, filePath),
    disableModelInvocation: attributes["disable-model-invocation"] === "true",
  };
}

function validate(attributes: Record<string, string>, folderName: string): string | undefined {
  const { name, description } = attributes;
  if (!name) return 'front matter has no "name"';
  if (!description?.trim()) return 'front matter has no "description"';
  if (name.length > MAX_NAME) return `name is longer than ${MAX_NAME} characters`;
  if (!NAME.test(name)) return `name "${name}" must be lowercase letters, digits and single hyphens`;
  if (name !== folderName) return `name "${name}" does not match its folder "${folderName}"`;
  if (description.length > MAX_DESCRIPTION) return `description is longer than ${MAX_DESCRIPTION} characters`;
  return undefined;
}

/**
 * `/skill:<name> [request]` becomes the skill's instructions in a `<skill name=… location=…>` block,
 * followed by the request after a blank line. Relative Markdown links to files that exist in the
 * skill's folder are made absolute. Any other text, or an unknown name, is returned unchanged.
 * Throws when the skill's file can no longer be read.
 */
export function expandSkillCommand(text: string, skills: readonly Skill[]): string {
  const m = /^\/skill:(\S+)(?:\s+([\s\S]*))?$/.exec(text);
  const skill = m ? skills.find((s) => s.name === m[1]) : undefined;
  if (!m || !skill) return text;
  let body: string;
  try {
    const content = readTextIfFile(skill.filePath);
    if (content === undefined) throw new Error("the file is gone");
    body = parseFrontmatter(content).body.trim();
  } catch (err) {
    throw new Error(`Cannot load skill "${skill.name}" from ${skill.filePath}: ${errorMessage(err)}`);
  }
  const block = [
    `<skill name="${skill.name}" location="${skill.filePath}">`,
    `Relative paths in this skill are relative to ${skill.baseDir}.`,
    "",
    resolveLinks(body, skill.baseDir),
    "</skill>",
  ].join("\n");
  const request = m[2]?.trim();
  return request ? `${block}\n\n${request}` : block;
}

function resolveLinks(body: string, baseDir: string): string {
  return body.replace(/\]\(([^)\s]+)\)/g, (whole, target: string) => {
    if (isAbsolute(target) || target.startsWith("#") || /^[a-z][a-z0-9+.-]*:/i.test(target)) return whole;
    const file = resolve(baseDir, target.split("#")[0]);
    return existsSync(file) ? `](${resolve(baseDir, target)})` : whole;
  });
}
