/**
 * The package operations every front end shares (docs/packages.md): installing a source into a
 * settings folder (an npm source with the machine's `npm` into its `npm/`, a git source cloned
 * into its `git/<host>/<path>`, a local path only checked), removing it again, the settings
 * `packages` entry a source is written as (a local path relative to the settings folder) and
 * which entry names the same package, reading and writing a settings file's `packages`, the
 * packages the settings list, and the settings with those packages' resources added. `pion
 * install|remove|list` (src/modes/packages-cli.ts) and the extension surface's
 * `DefaultPackageManager` are both thin layers over this.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { loadSettings, loadUserSettings, type Settings } from "../config.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { isDir } from "../util/fs-kind.ts";
import { errorMessage } from "../util/errors.ts";
import { expandHome } from "../util/home-path.ts";
import { readJsonFile } from "../util/json-file.ts";
import { log } from "../util/log.ts";
import { gitPackageDir, gitRoot } from "./git-source.ts";
import { installGitPackage, installNpmPackage, removeGitPackage, runNpm, type InstallOptions } from "./package-install.ts";
import { dedupePackages, entrySource, npmPackageDir, npmRoot, packageIdentity, parseSource, resourcesOf, type PackageSource, type ResolvedPackage } from "./packages.ts";
import { RESOURCE_KINDS } from "./package-resources.ts";

export type { InstallOptions } from "./package-install.ts";

/** A settings file's `packages` (a copy) and the rest of the file, so a write keeps its other keys. */
export function readSettingsPackages(dir: string): { raw: Record<string, unknown>; packages: unknown[] } {
  const value = readJsonFile(join(dir, "settings.json"));
  const raw = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  return { raw, packages: Array.isArray(raw.packages) ? [...(raw.packages as unknown[])] : [] };
}

/** Write `packages` into the settings folder's settings.json (atomically, private to the user). */
export function writeSettingsPackages(dir: string, raw: Record<string, unknown>, packages: unknown[]): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, "settings.json");
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...raw, packages }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

/** Whether a settings entry of the folder `dir` names the package `source` (a settings-relative entry). */
export const sameIdentity = (entry: unknown, source: string, dir: string): boolean => {
  const s = entrySource(entry);
  return s !== undefined && packageIdentity(parseSource(s), dir) === packageIdentity(parseSource(source), dir);
};

/** How `source`, given relative to `cwd`, is written in the settings folder `dir`: a local path relative to `dir`, anything else as given. */
export function settingsEntryFor(source: string, dir: string, cwd: string): string {
  const parsed = parseSource(source);
  return parsed.type === "local" ? relative(dir, resolve(cwd, expandHome(parsed.path))) || "." : source;
}

/** Where a source of the settings folder `dir` is (or would be) installed; a local one is where it points, from `cwd`. */
export function installedPathOf(parsed: PackageSource, dir: string, cwd: string): string {
  if (parsed.type === "npm") return npmPackageDir(dir, parsed.name);
  if (parsed.type === "git") return gitPackageDir(dir, parsed);
  return resolve(cwd, expandHome(parsed.path));
}

/** Install `source` (given relative to `cwd`) for the settings folder `dir`; a local path is only checked. */
export async function installSource(o: InstallOptions, source: string, dir: string, cwd: string): Promise<void> {
  const parsed = parseSource(source);
  if (parsed.type === "npm") await installNpmPackage(o, parsed.spec, dir);
  else if (parsed.type === "git") await installGitPackage(o, parsed, gitPackageDir(dir, parsed), gitRoot(dir));
  else {
    const path = installedPathOf(parsed, dir, cwd);
    if (!existsSync(path)) throw new Error(`Path does not exist: ${path}`);
  }
}

/** Undo installSource: `npm uninstall` an installed npm source, delete a git checkout; a local path is left alone. */
export async function uninstallSource(o: InstallOptions, source: string, dir: string): Promise<void> {
  const parsed = parseSource(source);
  if (parsed.type === "npm" && existsSync(npmPackageDir(dir, parsed.name))) {
    await runNpm(o, ["uninstall", parsed.name, "--prefix", npmRoot(dir), "--no-audit", "--no-fund"]);
  }
  if (parsed.type === "git") removeGitPackage(gitPackageDir(dir, parsed), gitRoot(dir));
}

/** Put a settings-relative `entry` into the `packages` list, replacing the entry for the same package (its filters kept); false when it is there as written. */
export function withPackageEntry(packages: readonly unknown[], entry: string, dir: string): unknown[] | undefined {
  const next = [...packages];
  const at = next.findIndex((e) => sameIdentity(e, entry, dir));
  if (at === -1) next.push(entry);
  else if (entrySource(next[at]) === entry) return undefined;
  else next[at] = typeof next[at] === "string" ? entry : { ...(next[at] as object), source: entry };
  return next;
}

/** The `packages` list without the entries naming the package of the settings-relative `entry`. */
export const withoutPackageEntry = (packages: readonly unknown[], entry: string, dir: string): unknown[] => packages.filter((e) => !sameIdentity(e, entry, dir));

/**
 * The settings with their `packages` (src/extensions/packages.ts) added to the resource lists:
 * each package's extensions, skills and prompts join the `extensions`, `skills` and `prompts`
 * entries of the settings file that listed it, so they load, and obey `!`/`-` overrides, as
 * listed paths do. An npm or git package that is not installed yet is installed first, as the
 * reference does at start-up (not with PI_OFFLINE=1); one that cannot be is said on stderr and skipped.
 */
export async function withPackageResources(settings: Settings, env: Record<string, string | undefined> = process.env): Promise<Settings> {
  const listed = settings.listedPackages ?? [];
  if (listed.length === 0 || !settings.listedResources) return settings;
  const packages = dedupePackages(listed);
  const missing = packages.filter((p) => p.parsed.type !== "local" && !existsSync(p.root));
  if (missing.length > 0 && env.PI_OFFLINE !== "1") {
    const { installListedPackage } = await import("./package-install.ts");
    for (const p of missing) {
      log("packages", `installing ${p.source}...`);
      await installListedPackage({ env }, p).catch((err: unknown) => log("packages", `${p.source}: ${errorMessage(err)}`));
    }
  }
  const found = resourcesOf(packages, (msg) => log("packages", msg));
  const lists = { ...settings.listedResources };
  for (const kind of RESOURCE_KINDS) {
    const added = found[kind].map((path) => {
      const pkg = found.byPackage.get(path)!;
      return { entry: path, base: pkg.base, level: pkg.level, package: { source: pkg.source, root: isDir(pkg.root) ? pkg.root : dirname(pkg.root) } };
    });
    lists[kind] = [...lists[kind], ...added];
  }
  return { ...settings, listedResources: lists };
}

/** The packages the user's and (when trusted) the project's settings list, one per package, as they load. */
export function configuredPackages(home: string, cwd: string, env: Record<string, string | undefined>): ResolvedPackage[] {
  const user = loadUserSettings(home, env);
  const trust = decideProjectTrust({ home, cwd, defaultProjectTrust: user.defaultProjectTrust });
  return dedupePackages(loadSettings(home, cwd, trust.trusted, () => {}, user).listedPackages ?? []);
}
