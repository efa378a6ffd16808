/**
 * Where a resource (an extension, a skill, a prompt template) came from, in the reference's
 * `sourceInfo` shape, as `get_commands`, `pi.getCommands()` and `pi.getAllTools()` report it:
 * - `auto`: found in a conventional folder (`extensions/`, `skills/`, `prompts/`) of a user
 *   folder or a trusted project's `.pi` / `.pion`; `baseDir` is that folder;
 * - `local`: a path listed in a settings file, scoped to that file's level;
 * - a package's source as written in `packages` (`npm:…`, a path): one of its resources, with
 *   `origin: "package"` and the package folder as `baseDir`;
 * - `cli`: named on the command line (`-e`, `--skill`, `--prompt-template`), `temporary`;
 * - `builtin`: shipped with pion (`builtin:<tool>`).
 */
export interface SourceInfo {
  path: string;
  source: string;
  scope: "user" | "project" | "temporary";
  origin: "package" | "top-level";
  baseDir?: string;
}

/** How a resource was found, without its path. */
export type FoundBy = Omit<SourceInfo, "path">;

/** The package a listed resource belongs to (settings `packages`). */
export interface ListedPackageOf {
  source: string;
  root: string;
}

export const autoFound = (scope: "user" | "project", baseDir: string): FoundBy => ({ source: "auto", scope, origin: "top-level", baseDir });

export const CLI_FOUND: FoundBy = { source: "cli", scope: "temporary", origin: "top-level" };

/** A path a settings file listed, itself or as one of a package's resources. */
export const listedFound = (scope: "user" | "project", pkg?: ListedPackageOf): FoundBy =>
  pkg ? { source: pkg.source, scope, origin: "package", baseDir: pkg.root } : { source: "local", scope, origin: "top-level" };

export const builtinSource = (name: string): SourceInfo => ({ path: `builtin:${name}`, source: "builtin", scope: "temporary", origin: "top-level" });

/** A tool the host supplies over the wire (host_tool_* frames): pion's own kind of source. */
export const hostToolSource = (name: string): SourceInfo => ({ path: `host:${name}`, source: "host", scope: "temporary", origin: "top-level" });

export const sourceInfoAt = (path: string, found: FoundBy): SourceInfo => ({ path, ...found });
