import { dirname, join, resolve } from "node:path";
import { readTextIfFile, userDirsOf, type ResourceRoots } from "./files.ts";

export interface ContextFile {
  path: string;
  content: string;
}

/** Checked in this order in each folder; the first one present is used. */
export const CONTEXT_FILE_NAMES = ["AGENTS.md", "CLAUDE.md"] as const;

/**
 * Instruction files the model should see: the user folders' first (the reference's agent folder,
 * then PION_HOME), then one per folder from the filesystem root down to `cwd`, so the most
 * specific comes last. A folder is read once even when a user folder lies on that path.
 * Unreadable files (other than missing ones) throw.
 */
export function loadContextFiles(roots: ResourceRoots): ContextFile[] {
  const folders = [...userDirsOf(roots).map((dir) => resolve(dir)), ...ancestors(resolve(roots.cwd))];
  const seen = new Set<string>();
  const files: ContextFile[] = [];
  for (const folder of folders) {
    if (seen.has(folder)) continue;
    seen.add(folder);
    const file = readContextFile(folder);
    if (file) files.push(file);
  }
  return files;
}

function readContextFile(folder: string): ContextFile | undefined {
  for (const name of CONTEXT_FILE_NAMES) {
    const path = join(folder, name);
    const content = readTextIfFile(path);
    if (content !== undefined) return { path, content };
  }
  return undefined;
}

/** `dir` and its parents, root first. */
function ancestors(dir: string): string[] {
  const chain = [dir];
  for (let d = dir, up = dirname(d); up !== d; d = up, up = dirname(d)) chain.push(up);
  return chain.reverse();
}
