/**
 * pi packages (the reference's docs/packages.md): a settings `packages` entry names a source —
 * `npm:<name>[@version]`, installed under the listing settings folder's `npm/` (the user's
 * `~/.pi/agent/npm` or `$PION_HOME/npm`, a project's `.pi/npm` or `.pion/npm`), or a local path
 * relative to that settings file — and optionally narrows what loads (`extensions`, `skills`,
 * `prompts`: omitted for all, `[]` for none, patterns as in resource lists). A package's
 * resources are its package.json `pi` field's entries (files, folders or globs, `!` excluding),
 * else its conventional `extensions/`, `skills/`, `prompts/` folders. Themes are ignored. The
 * same package listed twice (by npm name or resolved path) loads once, a project's entry
 * winning, then the later user folder's. A git source (src/extensions/git-source.ts) is checked
 * out under the listing settings folder's `git/<host>/<path>` and read like an npm package.
 */
import { existsSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { expandHome } from "../util/home-path.ts";
import { isDir } from "../util/fs-kind.ts";
import { RESOURCE_KINDS, packageResources, type PackageResources, type ResourceKind } from "./package-resources.ts";
import { gitIdentity, gitPackageDir, parseGitSource, type GitSource } from "./git-source.ts";

export type PackageSource = { type: "npm"; spec: string; name: string; version?: string } | { type: "local"; path: string } | GitSource;

/** One `packages` entry of one settings file: the entry as written and the folder of that file. */
export interface ListedPackage {
  entry: unknown;
  base: string;
  level: "user" | "project";
}


export function parseSource(source: string): PackageSource {
  const s = source.trim();
  if (s.startsWith("npm:")) {
    const spec = s.slice(4).trim();
    const at = spec.indexOf("@", spec.startsWith("@") ? 1 : 0);
    return at > 0 ? { type: "npm", spec, name: spec.slice(0, at), version: spec.slice(at + 1) } : { type: "npm", spec, name: spec };
  }
  // As in the reference, only these prefixes can start a git source; `git@host:…` needs `git:`.
  return (/^(git:|https?:|ssh:)/.test(s) && parseGitSource(s)) || { type: "local", path: s };
}

/** The `source` of a settings entry (a string, or an object with `source`). */
export const entrySource = (entry: unknown): string | undefined =>
  typeof entry === "string" ? entry : entry && typeof entry === "object" && typeof (entry as { source?: unknown }).source === "string" ? (entry as { source: string }).source : undefined;

/** Where an npm source of a settings folder is installed. */
export const npmRoot = (settingsDir: string): string => join(settingsDir, "npm");
export const npmPackageDir = (settingsDir: string, name: string): string => join(npmRoot(settingsDir), "node_modules", name);

/** What identifies a package across settings: its npm name, git host and path, or resolved path. */
export function packageIdentity(source: PackageSource, base: string): string {
  if (source.type === "npm") return `npm:${source.name}`;
  if (source.type === "git") return gitIdentity(source);
  return `local:${resolve(base, expandHome(source.path))}`;
}

/** The folder (or single file) a source names, installed or not. */
export function packageRoot(source: PackageSource, base: string): string {
  if (source.type === "npm") return npmPackageDir(base, source.name);
  if (source.type === "git") return gitPackageDir(base, source);
  return resolve(base, expandHome(source.path));
}


/** A settings entry's filter for one kind applied to the package's resources. */
export function filtered(kind: ResourceKind, files: string[], entry: unknown, root: string): string[] {
  const patterns = entry && typeof entry === "object" ? (entry as Record<string, unknown>)[kind] : undefined;
  if (!Array.isArray(patterns)) return files;
  const list = patterns.filter((p): p is string => typeof p === "string");
  const plain = list.filter((p) => !/^[!+-]/.test(p));
  const matches = (p: string, f: string) => new Bun.Glob(p.replace(/^\.\//, "")).match(relative(root, f)) || resolve(root, p) === f;
  return files.filter((f) => {
    let on = plain.some((p) => matches(p, f));
    if (list.some((p) => p.startsWith("!") && matches(p.slice(1), f))) on = false;
    if (list.some((p) => p.startsWith("+") && resolve(root, p.slice(1)) === f)) on = true;
    if (list.some((p) => p.startsWith("-") && resolve(root, p.slice(1)) === f)) on = false;
    return on;
  });
}

export interface ResolvedPackage {
  source: string;
  parsed: PackageSource;
  base: string;
  level: "user" | "project";
  root: string;
  entry: unknown;
}

/** The listed packages, one per identity (a project's entry wins, then the later user folder's), in listing order. */
export function dedupePackages(listed: readonly ListedPackage[]): ResolvedPackage[] {
  const byIdentity = new Map<string, ResolvedPackage>();
  const rank = (p: ResolvedPackage) => (p.level === "project" ? 1 : 0);
  for (const { entry, base, level } of listed) {
    const source = entrySource(entry);
    if (!source) continue;
    const parsed = parseSource(source);
    const pkg: ResolvedPackage = { source, parsed, base, level, root: packageRoot(parsed, base), entry };
    const id = packageIdentity(parsed, base);
    const prev = byIdentity.get(id);
    if (!prev || rank(pkg) >= rank(prev)) {
      byIdentity.delete(id);
      byIdentity.set(id, pkg);
    }
  }
  return [...byIdentity.values()];
}

/** What the resolved packages contribute, each kind filtered by its settings entry. */
export function resourcesOf(packages: readonly ResolvedPackage[], warn: (msg: string) => void): PackageResources & { byPackage: Map<string, ResolvedPackage> } {
  const out = { extensions: [] as string[], skills: [] as string[], prompts: [] as string[], byPackage: new Map<string, ResolvedPackage>() };
  for (const pkg of packages) {
    if (!existsSync(pkg.root)) {
      warn(`package ${pkg.source} is not installed (${pkg.root}); run: pion install ${pkg.source}`);
      continue;
    }
    const root = isDir(pkg.root) ? pkg.root : dirname(pkg.root);
    const all = packageResources(pkg.root);
    for (const kind of RESOURCE_KINDS) {
      for (const file of filtered(kind, all[kind], pkg.entry, root)) {
        out[kind].push(file);
        out.byPackage.set(file, pkg);
      }
    }
  }
  return out;
}
