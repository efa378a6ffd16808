/**
 * Where skills and prompt templates are read from, in the reference's load order, which is also
 * their precedence: the first resource of a name wins, a later one of the same name is reported
 * and left out, and the listing (get_commands, the system prompt's skills) keeps this order.
 *
 * 1. the skills and prompts of the package folders `-e` names;
 * 2. unless `--no-skills` / `--no-prompt-templates`: a trusted project's settings paths, its own
 *    folders (`.pion/`, then `.pi/`, then for skills the `.agents/skills` folders from `cwd` up to
 *    the repository's root), the user's settings paths, the user's folders (PION_HOME, then the
 *    reference's agent folder, then for skills `~/.agents/skills`), the project's packages, the
 *    user's packages;
 * 3. the command line's `--skill` / `--prompt-template` paths.
 */
import { homedir } from "node:os";
import { dirname, join, relative, resolve } from "node:path";
import { projectPaths } from "./project-paths.ts";
import { autoFound, CLI_FOUND, listedFound, type FoundBy } from "./source-info.ts";
import { userDirsOf, type ExplicitResources, type ResourceLocation, type ResourceScope } from "./files.ts";

export type ResourceKind = "skills" | "prompts";

/** One place to read: a conventional folder (its children are the resources) or a path named by settings, a package or the command line. */
export interface ResourceSource {
  path: string;
  /** `folder`: a conventional folder; `path`: a file, a resource's folder or a folder of them. */
  as: "folder" | "path";
  location: ResourceLocation;
  /** How a resource read here was found; for a command-line path it depends on the file. */
  found: FoundBy | ((filePath: string) => FoundBy);
}

const userHome = (): string => resolve(process.env.HOME || homedir());

export function resourceSources(kind: ResourceKind, scope: ResourceScope, explicit: ExplicitResources): ResourceSource[] {
  const out: ResourceSource[] = (explicit.fromPackages ?? []).map(({ path, found }) => ({ path, as: "path", location: "path", found }));
  if (!explicit.noDiscovery) {
    const listed = explicit.listed?.paths ?? [];
    const settingsPaths = (level: "user" | "project", packages: boolean): ResourceSource[] =>
      listed.filter((l) => l.location === level && (l.package !== undefined) === packages).map((l) => ({ path: l.path, as: "path", location: level, found: listedFound(level, l.package) }));
    if (scope.project) {
      out.push(...settingsPaths("project", false));
      const own = projectPaths(scope.cwd)[kind];
      // projectPaths lists lowest precedence first: `.pi/`, `.pion/`, then the `.agents/skills` folders outermost first.
      const configDirs = own.filter((d) => !d.includes(`${join(".agents", "skills")}`));
      const agents = own.filter((d) => d.includes(`${join(".agents", "skills")}`));
      for (const dir of [...configDirs.reverse(), ...agents.reverse()]) out.push({ path: dir, as: "folder", location: "project", found: autoFound("project", dirname(dir)) });
    }
    out.push(...settingsPaths("user", false));
    for (const home of [...userDirsOf(scope)].reverse()) out.push({ path: join(home, kind), as: "folder", location: "user", found: autoFound("user", home) });
    if (kind === "skills") {
      const agents = join(userHome(), ".agents");
      out.push({ path: join(agents, "skills"), as: "folder", location: "user", found: autoFound("user", agents) });
    }
    if (scope.project) out.push(...settingsPaths("project", true));
    out.push(...settingsPaths("user", true));
  }
  for (const raw of explicit.paths ?? []) out.push({ path: resolve(scope.cwd, raw), as: "path", location: "path", found: (filePath) => commandLineFound(kind, scope, filePath) });
  return out;
}

/**
 * A `--skill` / `--prompt-template` resource's `sourceInfo`, as the reference gives it: `local`,
 * with the user's or the project's scope when the file lies in their folder of that kind, else
 * `temporary` with the file's folder as `baseDir`.
 */
function commandLineFound(kind: ResourceKind, scope: ResourceScope, filePath: string): FoundBy {
  const under = (root: string) => !relative(root, filePath).startsWith("..");
  for (const home of userDirsOf(scope)) if (under(join(home, kind))) return { source: "local", scope: "user", origin: "top-level", baseDir: join(home, kind) };
  for (const dir of projectPaths(scope.cwd)[kind]) if (under(dir)) return { source: "local", scope: "project", origin: "top-level", baseDir: dir };
  return { ...CLI_FOUND, source: "local", baseDir: dirname(filePath) };
}

/** `found` for a resource read from `source` at `filePath`. */
export const foundFor = (source: ResourceSource, filePath: string): FoundBy => (typeof source.found === "function" ? source.found(filePath) : source.found);
