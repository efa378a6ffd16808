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
import { existsSync, readdirSync } from "node:fs";
import { basename, dirname, join, relative, resolve } from "node:path";
import { expandHome } from "../util/home-path.ts";
import { readManifest } from "./resolve.ts";
import { isDir } from "../util/fs-kind.ts";
import { gitIdentity, gitPackageDir, parseGitSource, type GitSource } from "./git-source.ts";

export type PackageSource = { type: "npm"; spec: string; name: string; version?: string } | { type: "local"; path: string } | GitSource;

/** One `packages` entry of one settings file: the entry as written and the folder of that file. */
export interface ListedPackage {
  entry: unknown;
  base: string;
  level: "user" | "project";
}

export const RESOURCE_KINDS = ["extensions", "skills", "prompts"] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
export type PackageResources = Record<ResourceKind, string[]>;

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


const EXT_FILE = /\.(ts|js|mts|mjs)$/;

/** A folder of a resource kind, as the package's own discovery finds it. */
export function filesOf(kind: ResourceKind, dir: string): string[] {
  if (kind === "skills") return [dir];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (kind === "prompts") {
      if (name.endsWith(".md")) out.push(path);
    } else if (isDir(path)) {
      for (const index of ["index.ts", "index.js"]) if (existsSync(join(path, index))) out.push(join(path, index));
    } else if (EXT_FILE.test(name) && !name.endsWith(".d.ts")) out.push(path);
  }
  return out;
}

/** A manifest's entries for one kind: plain paths and globs from the root, `!pattern` excluding. */
function manifestFiles(kind: ResourceKind, root: string, entries: readonly string[]): string[] {
  const found: string[] = [];
  for (const entry of entries.filter((e) => !e.startsWith("!"))) {
    if (/[*?[{]/.test(entry)) {
      for (const rel of new Bun.Glob(entry.replace(/^\.\//, "")).scanSync({ cwd: root, onlyFiles: kind !== "skills" })) found.push(join(root, rel));
      continue;
    }
    const path = resolve(root, entry);
    if (kind !== "skills" && isDir(path)) {
      const index = kind === "extensions" ? ["index.ts", "index.js"].map((i) => join(path, i)).find((p) => existsSync(p)) : undefined;
      found.push(...(index ? [index] : filesOf(kind, path)));
    } else if (existsSync(path)) found.push(path);
  }
  const excluded = entries.filter((e) => e.startsWith("!")).map((e) => new Bun.Glob(e.slice(1).replace(/^\.\//, "")));
  return [...new Set(found)].filter((p) => !excluded.some((g) => g.match(relative(root, p)) || g.match(basename(p))));
}

/** Every resource a package offers (before any settings filter). */
export function packageResources(root: string): PackageResources {
  const out: PackageResources = { extensions: [], skills: [], prompts: [] };
  if (!isDir(root)) {
    if (existsSync(root)) out.extensions.push(root); // a file path loads one extension
    return out;
  }
  const pi = readManifest(root) as { pi?: Record<string, unknown> } | null;
  const manifest = pi?.pi && typeof pi.pi === "object" ? pi.pi : undefined;
  const declared = manifest && RESOURCE_KINDS.some((k) => Array.isArray(manifest[k]));
  for (const kind of RESOURCE_KINDS) {
    const list = manifest?.[kind];
    if (declared) {
      if (Array.isArray(list)) out[kind] = manifestFiles(kind, root, list.filter((e): e is string => typeof e === "string"));
    } else if (isDir(join(root, kind))) out[kind] = filesOf(kind, join(root, kind));
  }
  if (!declared && out.extensions.length === 0) {
    const index = ["index.ts", "index.js"].map((i) => join(root, i)).find((p) => existsSync(p));
    if (index) out.extensions.push(index);
  }
  return out;
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
