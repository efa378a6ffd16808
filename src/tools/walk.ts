import { type Dirent, existsSync } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { dirname, join, relative } from "node:path";
import { type IgnoreRule, isIgnored, parseGitignore } from "./gitignore.ts";

/** Folders never searched, ignored or not. */
const SKIPPED_DIRS = new Set([".git", "node_modules"]);

export interface WalkEntry {
  abs: string;
  /** Relative to the walk's root, with "/" separators. */
  rel: string;
  isDir: boolean;
}

async function rulesIn(dir: string): Promise<IgnoreRule[]> {
  try {
    return parseGitignore(await readFile(join(dir, ".gitignore"), "utf8"), dir);
  } catch {
    return []; // no .gitignore here (or unreadable): nothing to add
  }
}

/** Rules from .gitignore files above `root` up to the enclosing git work tree, if any. */
async function inheritedRules(root: string): Promise<IgnoreRule[]> {
  const chain: string[] = [];
  for (let dir = dirname(root); ; dir = dirname(dir)) {
    chain.unshift(dir);
    if (existsSync(join(dir, ".git"))) return (await Promise.all(chain.map(rulesIn))).flat();
    if (dirname(dir) === dir) return [];
  }
}

/**
 * Depth-first walk in name order, honouring .gitignore files and skipping .git and
 * node_modules. Symlinked folders are not followed; symlinked files are listed.
 */
export async function* walk(root: string, signal?: AbortSignal): AsyncGenerator<WalkEntry> {
  const start = existsSync(join(root, ".git")) ? [] : await inheritedRules(root);
  yield* walkDir(root, root, start, signal);
}

async function* walkDir(
  root: string,
  dir: string,
  parentRules: readonly IgnoreRule[],
  signal?: AbortSignal,
): AsyncGenerator<WalkEntry> {
  signal?.throwIfAborted();
  const rules = [...parentRules, ...(await rulesIn(dir))];
  let entries: Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return; // unreadable folder: skip it rather than fail the whole search
  }
  entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  for (const entry of entries) {
    const abs = join(dir, entry.name);
    let isDir = entry.isDirectory();
    if (entry.isSymbolicLink()) {
      const target = await stat(abs).catch(() => null);
      if (!target || target.isDirectory()) continue;
      isDir = false;
    } else if (!isDir && !entry.isFile()) continue;
    if (isDir && SKIPPED_DIRS.has(entry.name)) continue;
    if (isIgnored(rules, abs, isDir)) continue;
    const rel = relative(root, abs);
    yield { abs, rel, isDir };
    if (isDir) yield* walkDir(root, abs, rules, signal);
  }
}
