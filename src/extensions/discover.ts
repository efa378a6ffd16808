/**
 * Where extensions come from: `$PION_HOME/extensions` and the project's `.pion/extensions`
 * (one level deep: `*.ts` / `*.js` files, or a folder with a `package.json` listing
 * `pi.extensions` entries, or an `index.ts` / `index.js`), then each `-e` path in order.
 * `noDiscovery` (`--no-extensions`) skips the two folders but keeps explicit paths; the
 * project's folder is scanned only when the project is trusted (`project`). Explicit paths
 * always load, even inside an untrusted folder: the user named them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { homedir } from "node:os";
import { join, resolve } from "node:path";
import { projectPaths } from "../resources/project-paths.ts";
import { log } from "../util/log.ts";

export interface DiscoverOptions {
  home: string;
  cwd: string;
  extra: string[];
  noDiscovery: boolean;
  /** Whether the cwd's own `.pion/extensions` may load (project trust). */
  project: boolean;
}

export function discoverExtensions(opts: DiscoverOptions): string[] {
  const found: string[] = [];
  if (!opts.noDiscovery) {
    found.push(...scanFolder(join(opts.home, "extensions")));
    if (opts.project) found.push(...scanFolder(projectPaths(opts.cwd).extensions));
  }
  for (const raw of opts.extra) {
    const path = resolve(opts.cwd, raw.startsWith("~/") ? join(homedir(), raw.slice(2)) : raw);
    // A missing -e path is passed on so the loader reports it like any failed extension.
    found.push(...(isDir(path) ? folderEntries(path) : [path]));
  }
  return [...new Set(found)];
}

function scanFolder(dir: string): string[] {
  if (!isDir(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (isDir(path)) out.push(...folderEntries(path));
    else if (isModuleFile(name)) out.push(path);
  }
  return out;
}

/** A folder extension: its package.json `pi.extensions`, else index.ts / index.js. */
function folderEntries(dir: string): string[] {
  const manifest = join(dir, "package.json");
  if (existsSync(manifest)) {
    const entries = manifestEntries(manifest);
    if (entries.length) return entries.map((e) => resolve(dir, e));
  }
  for (const index of ["index.ts", "index.js"]) {
    if (existsSync(join(dir, index))) return [join(dir, index)];
  }
  return [];
}

function manifestEntries(file: string): string[] {
  try {
    const json: unknown = JSON.parse(readFileSync(file, "utf8"));
    const pi = json && typeof json === "object" ? (json as { pi?: unknown }).pi : undefined;
    const list = pi && typeof pi === "object" ? (pi as { extensions?: unknown }).extensions : undefined;
    return Array.isArray(list) ? list.filter((e): e is string => typeof e === "string") : [];
  } catch (err) {
    log("extensions", `ignoring unreadable ${file}: ${err instanceof Error ? err.message : String(err)}`);
    return [];
  }
}

const isModuleFile = (name: string) => /\.(ts|js|mts|mjs)$/.test(name) && !name.endsWith(".d.ts");

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false; // missing: nothing to discover there
  }
}
