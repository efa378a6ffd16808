/**
 * A settings resource list (`extensions`, `skills`, `prompts`) as the reference reads it: plain
 * entries are files or folders to load (relative to their settings file's folder; `~` and
 * absolute paths too); `!pattern` leaves out what a glob matches, `+path` brings back an exact
 * path a pattern left out, `-path` leaves out an exact path whatever else says. The overrides
 * apply to discovered resources as well. `builtin:` names (the reference's built-in extensions)
 * are no files: they switch pion's built-in commands (resources/builtin-commands.ts).
 */
import { basename, dirname, isAbsolute, relative, resolve } from "node:path";
import { expandHome } from "../util/home-path.ts";
import type { ListedEntry } from "../settings-files.ts";
import type { ListedPackageOf } from "./source-info.ts";

export interface ResourceList {
  /** The plain entries, resolved to absolute paths, in order, each with the level of the settings that listed it. */
  paths: { path: string; location: "user" | "project"; package?: ListedPackageOf }[];
  /** Whether a found resource (its file; a skill's folder counts too) may load. */
  enabled(path: string): boolean;
}

const absolute = (p: string, base: string): string => resolve(base, expandHome(p));
const isBuiltin = (p: string): boolean => p.startsWith("builtin:");

interface Override {
  kind: "!" | "+" | "-";
  pattern: string;
  base: string;
}

export function resourceList(entries: readonly ListedEntry[] = []): ResourceList {
  const paths: ResourceList["paths"] = [];
  const overrides: Override[] = [];
  for (const { entry, base, level, package: pkg } of entries) {
    const kind = entry[0];
    if (kind === "!" || kind === "+" || kind === "-") {
      const pattern = entry.slice(1);
      if (!isBuiltin(pattern)) overrides.push({ kind, pattern, base });
    } else if (!isBuiltin(entry)) paths.push({ path: absolute(entry, base), location: level, ...(pkg ? { package: pkg } : {}) });
  }
  const candidates = (path: string) => (basename(path) === "SKILL.md" ? [path, dirname(path)] : [path]);
  const exact = (o: Override, path: string) => candidates(path).some((p) => p === absolute(o.pattern, o.base));
  const glob = (o: Override, path: string) => {
    const g = new Bun.Glob(expandHome(o.pattern));
    return candidates(path).some((p) => g.match(isAbsolute(o.pattern) ? p : relative(o.base, p)) || g.match(basename(p)) || g.match(p));
  };
  return {
    paths,
    enabled(path) {
      let on = !overrides.some((o) => o.kind === "!" && glob(o, path));
      if (overrides.some((o) => o.kind === "+" && exact(o, path))) on = true;
      if (overrides.some((o) => o.kind === "-" && exact(o, path))) on = false;
      return on;
    },
  };
}
