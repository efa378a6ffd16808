/**
 * What the reference's `DefaultPackageManager.resolve()` answers, from pion's package and
 * resource-list mechanisms: every resource file a settings scope offers (its packages', the
 * plain entries of its `extensions`/`skills`/`prompts` lists, and its conventional folders),
 * each with whether it loads and where it came from. A path found twice keeps its first finding;
 * the lists are ordered project before user, top-level entries before auto-discovered ones,
 * packages last. Skills are their SKILL.md files. Themes are not a pion resource: none are listed.
 */
import { existsSync, readdirSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { filtered } from "../packages.ts";
import { filesOf, packageResources, RESOURCE_KINDS, type PackageResources, type ResourceKind } from "../package-resources.ts";
import { resourceList } from "../../resources/resource-list.ts";
import { SKILL_FILE } from "../../resources/skills.ts";
import { isDir } from "../../util/fs-kind.ts";

export type Scope = "user" | "project" | "temporary";

export interface PathMetadata {
  source: string;
  scope: Scope;
  origin: "package" | "top-level";
  baseDir?: string;
  changelogPath?: string;
  packageRoot?: string;
}
export interface ResolvedResource {
  path: string;
  enabled: boolean;
  metadata: PathMetadata;
}
export interface ResolvedPaths {
  extensions: ResolvedResource[];
  skills: ResolvedResource[];
  prompts: ResolvedResource[];
  themes: ResolvedResource[];
  installFailures?: { source: string; scope: Scope; message: string }[];
}

/** The SKILL.md files under a folder: its own, else those of its sub-folders (dot folders and node_modules skipped), in the folder's order as the reference lists them. */
function skillFiles(dir: string): string[] {
  if (existsSync(join(dir, SKILL_FILE))) return [join(dir, SKILL_FILE)];
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (name.startsWith(".") || name === "node_modules") continue;
    if (isDir(join(dir, name))) out.push(...skillFiles(join(dir, name)));
  }
  return out;
}

/** A resource path as files: a skill folder becomes its SKILL.md files, an extension folder its index or its contents. */
function expand(kind: ResourceKind, path: string): string[] {
  if (!existsSync(path)) return [];
  if (!isDir(path)) return [path];
  if (kind === "skills") return skillFiles(path);
  const index = kind === "extensions" ? ["index.ts", "index.js"].map((i) => join(path, i)).find((p) => existsSync(p)) : undefined;
  return index ? [index] : filesOf(kind, path);
}

/** Resources found so far, by kind, the first finding of a path winning. */
export class Found {
  #maps: Record<ResourceKind | "themes", Map<string, ResolvedResource>> = { extensions: new Map(), skills: new Map(), prompts: new Map(), themes: new Map() };

  add(kind: ResourceKind, path: string, enabled: boolean, metadata: PathMetadata): void {
    if (!this.#maps[kind].has(path)) this.#maps[kind].set(path, { path, enabled, metadata });
  }

  /** A package (or local folder) at `root`: its resources, each enabled as the settings entry's filters say. */
  addPackage(root: string, entry: unknown, metadata: PathMetadata): void {
    const changelog = join(root, "CHANGELOG.md");
    const meta: PathMetadata = { ...metadata, ...(existsSync(changelog) && !isDir(changelog) ? { changelogPath: changelog } : {}) };
    const all: PackageResources = packageResources(root);
    for (const kind of RESOURCE_KINDS) {
      const files = all[kind].flatMap((p) => expand(kind, p));
      const on = new Set(filtered(kind, files, entry, root));
      for (const file of files) this.add(kind, file, on.has(file), meta);
    }
  }

  /** A settings scope's top-level entries (resolved from `base`) and its conventional folders, both obeying the lists' overrides. */
  addTopLevel(settings: Record<string, unknown>, scope: "user" | "project", base: string, autoDirs: Partial<Record<ResourceKind, string[]>>): void {
    for (const kind of RESOURCE_KINDS) {
      const raw = settings[kind];
      const entries = (Array.isArray(raw) ? raw : []).filter((e): e is string => typeof e === "string").map((entry) => ({ entry, base, level: scope }));
      const list = resourceList(entries);
      for (const { path } of list.paths) for (const file of expand(kind, path)) this.add(kind, file, list.enabled(file), { source: "local", scope, origin: "top-level" });
      for (const dir of autoDirs[kind] ?? []) {
        const files = kind === "skills" ? (existsSync(dir) ? skillFiles(dir) : []) : expand(kind, dir);
        const baseDir = kind === "skills" && dir.endsWith(join(".agents", "skills")) ? dirname(dir) : base;
        for (const file of files) this.add(kind, file, list.enabled(file), { source: "auto", scope, origin: "top-level", baseDir });
      }
    }
  }

  result(): Omit<ResolvedPaths, "installFailures"> {
    const rank = (m: PathMetadata) => (m.origin === "package" ? 4 : (m.scope === "project" ? 0 : 2) + (m.source === "local" ? 0 : 1));
    const sorted = (m: Map<string, ResolvedResource>) => [...m.values()].sort((a, b) => rank(a.metadata) - rank(b.metadata));
    return { extensions: sorted(this.#maps.extensions), skills: sorted(this.#maps.skills), prompts: sorted(this.#maps.prompts), themes: sorted(this.#maps.themes) };
  }
}

/** The `.agents/skills` folders from `cwd` up to its git repository's root (or the filesystem's). */
export function ancestorAgentsSkillDirs(cwd: string): string[] {
  const dirs: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    dirs.push(join(dir, ".agents", "skills"));
    if (existsSync(join(dir, ".git")) || dirname(dir) === dir) break;
  }
  return dirs;
}
