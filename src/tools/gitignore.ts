import { relative } from "node:path";

/**
 * The common forms of .gitignore patterns: comments, `!` negation, a trailing `/` for
 * folders only, anchoring by a leading or inner `/`, and `*`, `?`, `[..]`, `**`
 * wildcards. The last matching rule wins, across files from the root down.
 */
export interface IgnoreRule {
  /** Absolute folder holding the .gitignore; patterns are relative to it. */
  base: string;
  glob: Bun.Glob;
  negate: boolean;
  dirOnly: boolean;
  anchored: boolean;
}

export function parseGitignore(text: string, base: string): IgnoreRule[] {
  const rules: IgnoreRule[] = [];
  for (const raw of text.split(/\r?\n/)) {
    let line = raw.replace(/(?<!\\)\s+$/, "");
    if (line === "" || line.startsWith("#")) continue;
    const negate = line.startsWith("!");
    if (negate) line = line.slice(1);
    if (line.startsWith("\\#") || line.startsWith("\\!")) line = line.slice(1);
    const dirOnly = line.endsWith("/");
    if (dirOnly) line = line.replace(/\/+$/, "");
    const anchored = line.includes("/");
    if (line.startsWith("/")) line = line.slice(1);
    if (line === "") continue;
    // Braces are literal in .gitignore but alternation in Bun.Glob.
    const pattern = line.replace(/[{}]/g, (c) => `\\${c}`);
    rules.push({ base, glob: new Bun.Glob(pattern), negate, dirOnly, anchored });
  }
  return rules;
}

export function isIgnored(rules: readonly IgnoreRule[], absPath: string, isDir: boolean): boolean {
  let ignored = false;
  for (const rule of rules) {
    if (rule.dirOnly && !isDir) continue;
    if (rule.negate === !ignored) continue;
    const rel = relative(rule.base, absPath);
    if (rel === "" || rel.startsWith("..")) continue;
    const target = rule.anchored ? rel : rel.slice(rel.lastIndexOf("/") + 1);
    if (rule.glob.match(target)) ignored = !rule.negate;
  }
  return ignored;
}
