/**
 * The files the reference ships in its npm package beside its code and pion ships inside its
 * binary instead (coding-config-paths.ts): the README and the docs folder, pion's examples
 * included (docs/examples). build.ts embeds exactly this list; from source it is read in place.
 */
import { join } from "node:path";

/** Repository-relative paths of the shipped documentation, sorted. */
export function listPackageFiles(repoRoot: string): string[] {
  const docs = [...new Bun.Glob("docs/**/*").scanSync({ cwd: repoRoot, onlyFiles: true, dot: false })];
  return ["README.md", ...docs.sort()];
}

/** The repository pion's sources are in (from source runs only: the binary has no repository). */
export const sourceRepoRoot = (): string => join(import.meta.dir, "..", "..", "..");
