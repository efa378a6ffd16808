/**
 * Where extensions come from: the user folders' `extensions/` (the reference's agent folder,
 * then `$PION_HOME`) and the project's `.pi/extensions` and `.pion/extensions` (one level deep:
 * `*.ts` / `*.js` files, or a folder with a `package.json` listing `pi.extensions` entries, or
 * an `index.ts` / `index.js`), then the settings' `extensions` paths, then each `-e` path in
 * order. `noDiscovery` (`--no-extensions`) skips the folders and the settings' list but keeps
 * explicit paths; the project's folders are scanned only when the project is trusted
 * (`project`). Explicit paths always load, even inside an untrusted folder: the user named them.
 */
import { readdirSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import type { ResourceList } from "../resources/resource-list.ts";
import { projectPaths } from "../resources/project-paths.ts";
import { packageResources } from "./packages.ts";
import { isDir } from "../util/fs-kind.ts";

export interface DiscoverOptions {
  home: string;
  /** The user-level folders, lowest precedence first (default: `[home]`). */
  userDirs?: readonly string[];
  /** The settings' `extensions` list. */
  listed?: ResourceList;
  cwd: string;
  extra: string[];
  noDiscovery: boolean;
  /** Whether the cwd's own `.pi/extensions` and `.pion/extensions` may load (project trust). */
  project: boolean;
}

export function discoverExtensions(opts: DiscoverOptions): string[] {
  const found: string[] = [];
  if (!opts.noDiscovery) {
    const user = (opts.userDirs ?? [opts.home]).map((dir) => join(dir, "extensions"));
    const levels = [user, opts.project ? projectPaths(opts.cwd).extensions : []];
    const configured = [...levels.flatMap(scanLevel), ...(opts.listed?.paths ?? []).flatMap(({ path }) => (isDir(path) ? folderEntries(path) : [path]))];
    found.push(...configured.filter((p) => opts.listed?.enabled(p) !== false && opts.listed?.enabled(dirname(p)) !== false));
  }
  for (const raw of opts.extra) {
    const path = resolve(opts.cwd, raw.startsWith("~/") ? join(homedir(), raw.slice(2)) : raw);
    // A missing -e path is passed on so the loader reports it like any failed extension.
    found.push(...(isDir(path) ? folderEntries(path) : [path]));
  }
  return [...new Set(found)];
}

/**
 * The extensions of one level's folders (the user's, or the project's), lowest precedence
 * first: an extension (a file or folder name) in a later folder replaces the earlier one's, so
 * pion's folder wins over the reference's.
 */
function scanLevel(dirs: readonly string[]): string[] {
  const byName = new Map<string, string[]>();
  for (const dir of dirs) {
    if (!isDir(dir)) continue;
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (isDir(path)) byName.set(name, folderEntries(path));
      else if (isModuleFile(name)) byName.set(name.replace(/\.(ts|js|mts|mjs)$/, ""), [path]);
    }
  }
  return [...byName.values()].flat();
}

/** A folder extension, loaded as a package (packages.ts): its `pi.extensions`, else its `extensions/` folder, else index.ts / index.js. */
const folderEntries = (dir: string): string[] => packageResources(dir).extensions;

const isModuleFile = (name: string) => /\.(ts|js|mts|mjs)$/.test(name) && !name.endsWith(".d.ts");

