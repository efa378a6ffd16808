/**
 * What a package folder offers (the reference's docs/packages.md): its package.json `pi` field's
 * entries (files, folders or globs, `!` excluding), else its conventional `extensions/`,
 * `skills/`, `prompts/` folders, else its index file. Apart from packages.ts (sources, settings
 * entries), so reading an extensions folder at start-up loads none of the source parsing.
 */
import { existsSync, readdirSync } from "node:fs";
import { basename, join, relative, resolve } from "node:path";
import { isDir } from "../util/fs-kind.ts";
import { readManifest } from "./resolve.ts";

export const RESOURCE_KINDS = ["extensions", "skills", "prompts"] as const;
export type ResourceKind = (typeof RESOURCE_KINDS)[number];
export type PackageResources = Record<ResourceKind, string[]>;

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

