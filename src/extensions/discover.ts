/**
 * Where extensions come from, in the reference's load order: each `-e` path (a file, or a folder
 * loaded as a package), then a trusted project's `.pi/extensions` and `.pion/extensions`, then the
 * settings' `extensions` paths, then the user folders' `extensions/` (the reference's agent
 * folder, then `$PION_HOME`), then the settings' packages' extensions. A folder is scanned one
 * level deep: `*.ts` / `*.js` files, or a folder with a `package.json` listing `pi.extensions`
 * entries, or an `index.ts` / `index.js`. `noDiscovery` (`--no-extensions`) skips the folders
 * and the settings' lists but keeps explicit paths; the project's folders are scanned only when
 * the project is trusted (`project`). Explicit paths always load, even inside an untrusted
 * folder: the user named them. A file found twice loads once, where it was first found.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ResourceList } from "../resources/resource-list.ts";
import { projectPaths } from "../resources/project-paths.ts";
import { autoFound, CLI_FOUND, listedFound, type FoundBy } from "../resources/source-info.ts";
import { packageResources } from "./package-resources.ts";
import { isDir } from "../util/fs-kind.ts";

export interface DiscoverOptions {
  home: string;
  /** The user-level folders, lowest precedence first (default: `[home]`). */
  userDirs?: readonly string[];
  /** The settings' `extensions` list (packages' extensions included, marked with their package). */
  listed?: ResourceList;
  cwd: string;
  extra: string[];
  noDiscovery: boolean;
  /** Whether the cwd's own `.pi/extensions` and `.pion/extensions` may load (project trust). */
  project: boolean;
}

/** An extension to load and how it was found (its `sourceInfo`). */
export interface DiscoveredExtension {
  path: string;
  found: FoundBy;
}

export function discoverExtensions(opts: DiscoverOptions): DiscoveredExtension[] {
  const found: DiscoveredExtension[] = [];
  for (const raw of opts.extra) {
    const path = resolve(opts.cwd, raw.startsWith("~/") ? join(homedir(), raw.slice(2)) : raw);
    // A missing -e path is passed on so the loader reports it like any failed extension.
    for (const p of isDir(path) ? folderEntries(path) : [path]) found.push({ path: p, found: CLI_FOUND });
  }
  if (!opts.noDiscovery) {
    const enabled = (p: string) => opts.listed?.enabled(p) !== false && opts.listed?.enabled(dirname(p)) !== false;
    const listed = (opts.listed?.paths ?? []).flatMap(({ path, location, package: pkg }) =>
      (isDir(path) ? folderEntries(path) : [path]).map((p) => ({ path: p, found: listedFound(location, pkg), pkg: pkg !== undefined })),
    );
    const configured = [
      ...(opts.project ? scanLevel(projectPaths(opts.cwd).extensions, "project") : []),
      ...listed.filter((e) => !e.pkg),
      ...scanLevel((opts.userDirs ?? [opts.home]).map((dir) => join(dir, "extensions")), "user"),
      ...listed.filter((e) => e.pkg),
    ];
    for (const e of configured) if (enabled(e.path)) found.push({ path: e.path, found: e.found });
  }
  const seen = new Set<string>();
  return found.filter((e) => !seen.has(e.path) && seen.add(e.path));
}

/**
 * The extensions of one level's folders (the user's, or the project's), lowest precedence
 * first: an extension (a file or folder name) in a later folder replaces the earlier one's, so
 * pion's folder wins over the reference's.
 */
export function scanLevel(dirs: readonly string[], scope: "user" | "project"): DiscoveredExtension[] {
  const byName = new Map<string, DiscoveredExtension[]>();
  for (const dir of dirs) {
    if (!isDir(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const found = autoFound(scope, dirname(dir));
      if (isDir(path)) byName.set(name, folderEntries(path).map((p) => ({ path: p, found })));
      else if (isModuleFile(name)) byName.set(name.replace(/\.(ts|js|mts|mjs)$/, ""), [{ path, found }]);
    }
  }
  return [...byName.values()].flat();
}

/** A folder extension, loaded as a package (packages.ts): its `pi.extensions`, else its `extensions/` folder, else index.ts / index.js. */
const folderEntries = (dir: string): string[] => packageResources(dir).extensions;

const isModuleFile = (name: string) => /\.(ts|js|mts|mjs)$/.test(name) && !name.endsWith(".d.ts");

