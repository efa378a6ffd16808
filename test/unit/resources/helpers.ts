import { afterAll } from "bun:test";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp folder (real path, so comparisons with resolved paths hold), removed after the file's tests. */
export function tmp(): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), "pion-resources-")));
  dirs.push(dir);
  return dir;
}

/** Write `files` (relative path → text) under `root`, creating folders; returns `root`. */
export function writeTree(root: string, files: Record<string, string>): string {
  for (const [rel, text] of Object.entries(files)) {
    const path = join(root, rel);
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, text);
  }
  return root;
}

/** A PION_HOME and a trusted project folder side by side in a fresh temp folder. */
export function roots(): { home: string; cwd: string; project: boolean } {
  const base = tmp();
  const home = join(base, "home");
  const cwd = join(base, "proj");
  mkdirSync(home);
  mkdirSync(cwd);
  return { home, cwd, project: true };
}

export const skillMd = (name: string, description: string, body = "Do the thing.") =>
  `---\nname: ${name}\ndescription: ${description}\n---\n${body}\n`;
