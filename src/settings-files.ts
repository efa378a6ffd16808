/**
 * Several settings.json files as one: each later file overrides the earlier ones key by key
 * (nested objects merged one level deep), except the resource lists (`extensions`, `skills`,
 * `prompts`), which are combined, each entry keeping the folder its relative path resolves
 * from. Records which file each top-level key came from, for `--verbose`.
 */
import { dirname } from "node:path";

/** The settings keys whose values are lists of resource paths, combined across files. */
export const RESOURCE_LIST_KEYS = ["extensions", "skills", "prompts"] as const;
export type ResourceListKey = (typeof RESOURCE_LIST_KEYS)[number];

/** One entry of a resource list and the folder its relative path resolves from (the settings file's). */
export interface ListedEntry {
  entry: string;
  base: string;
  /** Whether a user's or a project's settings file listed it. */
  level: "user" | "project";
  /** Set when the entry is one of a listed package's resources (its source as written, and its folder). */
  package?: { source: string; root: string };
}

export interface MergedSettings {
  values: Record<string, unknown>;
  /** Top-level key → the file its value came from (the last file that set it). */
  sources: Record<string, string>;
  lists: Record<ResourceListKey, ListedEntry[]>;
  /** Every file's `packages` entries, in file order, each with its file's folder (src/extensions/packages.ts). */
  packages: { entry: unknown; base: string; level: ListedEntry["level"] }[];
}

export const emptyMerge = (): MergedSettings => ({ values: {}, sources: {}, lists: { extensions: [], skills: [], prompts: [] }, packages: [] });

const isObject = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** Adds one file's (already validated) settings on top of `into`. */
export function mergeSettingsFile(into: MergedSettings, file: string, settings: Record<string, unknown>, level: ListedEntry["level"] = "user"): MergedSettings {
  for (const [key, value] of Object.entries(settings)) {
    into.sources[key] = file;
    if (key === "packages" && Array.isArray(value)) into.packages.push(...value.map((entry: unknown) => ({ entry, base: dirname(file), level })));
    if ((RESOURCE_LIST_KEYS as readonly string[]).includes(key) && Array.isArray(value)) {
      const base = dirname(file);
      into.lists[key as ResourceListKey].push(...value.filter((e): e is string => typeof e === "string").map((entry) => ({ entry, base, level })));
      continue;
    }
    const prev = into.values[key];
    into.values[key] = isObject(value) && isObject(prev) ? { ...prev, ...value } : value;
  }
  return into;
}
