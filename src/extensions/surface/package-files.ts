/**
 * The files the reference ships in its npm package beside its code and pion ships inside its
 * binary instead (coding-config-paths.ts): the README and the docs folder, pion's examples
 * included (docs/examples). build.ts embeds exactly this list (package-docs.ts).
 */

/** Repository-relative paths of the shipped documentation, sorted. */
export function listPackageFiles(repoRoot: string): string[] {
  const docs = [...new Bun.Glob("docs/**/*").scanSync({ cwd: repoRoot, onlyFiles: true, dot: false })];
  return ["README.md", ...docs.sort()];
}
