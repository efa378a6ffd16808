import { readdirSync, readFileSync, realpathSync, statSync } from "node:fs";
import type { ResourceList } from "./resource-list.ts";
import type { FoundBy } from "./source-info.ts";

/** Where a resource was found: in a user folder or the user's settings, in the project (the cwd) or its settings, or at a path the command line named. */
export type ResourceLocation = "user" | "project" | "path";

const isAbsent = (err: unknown): boolean =>
  err instanceof Error && "code" in err && (err.code === "ENOENT" || err.code === "ENOTDIR");

/** A file's text, or `undefined` when nothing (or a folder) is there; other failures throw. */
export function readTextIfFile(path: string): string | undefined {
  try {
    if (statSync(path, { throwIfNoEntry: false })?.isFile() !== true) return undefined;
    return readFileSync(path, "utf8");
  } catch (err) {
    if (isAbsent(err)) return undefined;
    throw err;
  }
}

/** Sorted entry names of a folder (symlinks followed by the caller); a missing folder has none. */
export function listDir(path: string): string[] {
  try {
    // A missing folder is the common case: asked without the cost of a thrown ENOENT.
    if (statSync(path, { throwIfNoEntry: false }) === undefined) return [];
    return readdirSync(path).sort();
  } catch (err) {
    if (isAbsent(err)) return [];
    throw err;
  }
}

/** Whether `path` is a folder (following symlinks); a dangling link is not. */
export function isDirectory(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false })?.isDirectory() === true;
  } catch (err) {
    if (isAbsent(err)) return false;
    throw err;
  }
}

/** The roots resources are read from: PION_HOME and the session's working directory. */
export interface ResourceRoots {
  home: string;
  cwd: string;
  /** The user-level folders, lowest precedence first (config-dirs.ts `userConfigDirs`); default: `[home]`. */
  userDirs?: readonly string[];
}

/** The user-level folders of `roots`, lowest precedence first. */
export const userDirsOf = (roots: ResourceRoots): readonly string[] => roots.userDirs ?? [roots.home];

/** Roots plus whether the cwd's own resources (`projectPaths`) may load: project trust decides. */
export interface ResourceScope extends ResourceRoots {
  project: boolean;
}

/** Paths the command line names (`--skill`, `--prompt-template`) and whether to skip discovery (`--no-skills` ...). */
export interface ExplicitResources {
  paths?: readonly string[];
  noDiscovery?: boolean;
  /** The settings' list for this kind: more paths to load, and which found resources may (resource-list.ts). */
  listed?: ResourceList;
  /** Resources of the packages `-e` names (their skills, prompts), loaded like command-line paths but with their own `sourceInfo`. */
  fromPackages?: readonly { path: string; found: FoundBy }[];
}

/** The file behind links, so one reached twice loads once. */
export function realPathOf(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}

/** What is at `path`, following symlinks; anything unreadable counts as missing. */
export function pathKind(path: string): "file" | "folder" | "missing" {
  try {
    const st = statSync(path);
    return st.isFile() ? "file" : st.isDirectory() ? "folder" : "missing";
  } catch {
    return "missing"; // absent, a dangling link, or a name the system refuses (too long)
  }
}
