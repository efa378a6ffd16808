/**
 * Bringing configured packages up to date, as the reference's package update does
 * (docs/packages.md: versioned npm specs, git tags and commits are pinned):
 *
 * - npm: a pinned version (`npm:name@1.2.3`) is left alone, installed or not. Otherwise the
 *   registry is asked for the newest version of the spec (`npm view`), and the package is
 *   installed again (`name@latest`, or the spec as written for a range or tag) only when that is
 *   newer than the installed one, or when it is not installed, or when the registry could not be
 *   asked. The packages of one settings folder go to one `npm install`.
 * - git: a missing checkout is cloned; one that is there is fetched and reset to its ref (a tag
 *   stays where it is, a branch moves) or, without a ref, to the remote's default branch; a
 *   commit ref already checked out needs no network (src/extensions/package-install.ts).
 * - a local path has nothing to update.
 *
 * The project's packages count only when its trust is saved in trust.json or `approve` says so:
 * the reference's update never goes by `defaultProjectTrust`. Offline handling is the caller's.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { loadSettings, loadUserSettings } from "../config.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { errorMessage } from "../util/errors.ts";
import { gitRoot, type GitSource } from "./git-source.ts";
import { installGitPackage, installNpmPackage, runNpm, type InstallOptions } from "./package-install.ts";
import { entrySource, packageIdentity, packageRoot, parseSource, type PackageSource, type ResolvedPackage } from "./packages.ts";

/** Where an update says what it does; each call is one line's text, without the newline. */
export interface UpdateReporter {
  /** Work that may take a while is starting. */
  start(message: string): void;
  /** Something did not go as announced, though nothing failed. */
  warn(message: string): void;
  /** One package (or one npm batch) could not be updated; the others still are. */
  fail(what: string, message: string): void;
}

export interface UpdateOutcome {
  /** One line per package that changed, `source[ (project)] from -> to`, npm ones first, each kind in settings order. */
  changed: string[];
  warnings: number;
  failures: number;
}

type NpmSource = Extract<PackageSource, { type: "npm" }>;

/** At most this many registry look-ups or git fetches at once, as in the reference. */
const CONCURRENCY = 4;

/**
 * Every `packages` entry of the user's settings, and of the project's when it is trusted for
 * an update; one per package and settings folder, so a package both list is updated in both.
 */
export function updatablePackages(home: string, cwd: string, env: Record<string, string | undefined>, approve?: boolean): ResolvedPackage[] {
  const user = loadUserSettings(home, env);
  const trust = decideProjectTrust({ home, cwd, ...(approve !== undefined ? { approve } : {}) });
  const seen = new Set<string>();
  const out: ResolvedPackage[] = [];
  for (const { entry, base, level } of loadSettings(home, cwd, trust.trusted, () => {}, user).listedPackages ?? []) {
    const source = entrySource(entry);
    if (!source) continue;
    const parsed = parseSource(source);
    const key = `${base}\0${packageIdentity(parsed, base)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ source, parsed, base, level, root: packageRoot(parsed, base), entry });
  }
  return out;
}

/** The configured packages that `source` (given relative to `cwd`) names; none is an error that suggests the entry meant. */
export function packagesNamed(packages: readonly ResolvedPackage[], source: string, cwd: string): ResolvedPackage[] {
  const identity = packageIdentity(parseSource(source), cwd);
  const found = packages.filter((p) => packageIdentity(p.parsed, p.base) === identity);
  if (found.length > 0) return found;
  const meant = packages.find((p) => looksMeant(p.parsed, source.trim()));
  throw new Error(`No matching package found for ${source}${meant ? `. Did you mean ${meant.source}?` : ""}`);
}

/** A bare npm name or spec, or a git `host/path[@ref]`, written for a configured package without its prefix. */
function looksMeant(p: PackageSource, text: string): boolean {
  if (p.type === "npm") return text === p.name || text === p.spec;
  if (p.type === "git") return text === `${p.host}/${p.path}` || (p.ref !== undefined && text === `${p.host}/${p.path}@${p.ref}`);
  return false;
}

/** An exact version (`1.2.3`, `v1.2.3-beta.1`): the reference's pin. A range or a dist-tag is not one. */
const EXACT_VERSION = /^[=v]?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;
export const isPinnedNpm = (p: NpmSource): boolean => p.version !== undefined && EXACT_VERSION.test(p.version.trim());

/** Update `packages` (npm and git at once); failures are reported and counted, never thrown. */
export async function updatePackages(o: InstallOptions, packages: readonly ResolvedPackage[], report: UpdateReporter): Promise<UpdateOutcome> {
  const outcome: UpdateOutcome = { changed: [], warnings: 0, failures: 0 };
  const [npmChanges, gitChanges] = await Promise.all([updateNpm(o, packages, report, outcome), updateGit(o, packages, report, outcome)]);
  outcome.changed = [...npmChanges, ...gitChanges];
  return outcome;
}

const label = (p: ResolvedPackage): string => `${p.source}${p.level === "project" ? " (project)" : ""}`;
const change = (p: ResolvedPackage, from: string | undefined, to: string | undefined, short = false): string => {
  const shown = (v: string | undefined) => (v === undefined ? "(none)" : short ? v.slice(0, 7) : v);
  return `${label(p)} ${shown(from)} -> ${shown(to)}`;
};

interface NpmCheck {
  pkg: ResolvedPackage & { parsed: NpmSource };
  due: boolean;
  installed?: string;
  /** What the registry named as newest, when it was asked. */
  target?: string;
}

async function updateNpm(o: InstallOptions, packages: readonly ResolvedPackage[], report: UpdateReporter, outcome: UpdateOutcome): Promise<string[]> {
  const candidates = packages.filter((p): p is NpmCheck["pkg"] => p.parsed.type === "npm" && !isPinnedNpm(p.parsed));
  const due = (await inPool(candidates, (pkg) => checkNpm(o, pkg))).filter((c) => c.due);
  const changed: string[] = [];
  for (const base of new Set(due.map((c) => c.pkg.base))) {
    const batch = due.filter((c) => c.pkg.base === base);
    const what = batch.length === 1 ? batch[0]!.pkg.source : `${batch[0]!.pkg.level} npm packages`;
    report.start(`Updating ${what}...`);
    try {
      await installNpmPackage(o, batch.map(({ pkg }) => (pkg.parsed.version !== undefined ? pkg.parsed.spec : `${pkg.parsed.name}@latest`)), base);
    } catch (err) {
      report.fail(what, errorMessage(err));
      outcome.failures++;
      continue;
    }
    for (const { pkg, installed, target } of batch) {
      const after = installedVersion(pkg.root);
      if (after !== installed) changed.push(change(pkg, installed, after));
      else if (target !== undefined) {
        // npm can read a packument from before a publish and install the old version without an error.
        report.warn(`${pkg.source} is still ${after} though the registry names ${target}; its metadata may be stale, try again in a few minutes`);
        outcome.warnings++;
      }
    }
  }
  return changed;
}

async function checkNpm(o: InstallOptions, pkg: NpmCheck["pkg"]): Promise<NpmCheck> {
  const installed = installedVersion(pkg.root);
  if (installed === undefined) return { pkg, due: true };
  try {
    const target = await newestVersion(o, pkg.parsed);
    return { pkg, due: Bun.semver.order(target, installed) > 0, installed, target };
  } catch {
    // As the reference: a failed look-up must not keep a package from its update.
    return { pkg, due: true, installed };
  }
}

/** The newest version the registry has for the spec: npm answers one string, or every version a range matches. */
async function newestVersion(o: InstallOptions, p: NpmSource): Promise<string> {
  const value: unknown = JSON.parse(await runNpm(o, ["view", p.version !== undefined ? p.spec : p.name, "version", "--json"]));
  if (typeof value === "string" && value) return value;
  const versions = Array.isArray(value) ? value.filter((v): v is string => typeof v === "string" && v !== "") : [];
  const newest = versions.sort((a, b) => Bun.semver.order(b, a))[0];
  if (newest === undefined) throw new Error(`npm view named no version of ${p.spec}`);
  return newest;
}

function installedVersion(root: string): string | undefined {
  try {
    const version = (JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version;
    return typeof version === "string" && version ? version : undefined;
  } catch {
    return undefined;
  }
}

async function updateGit(o: InstallOptions, packages: readonly ResolvedPackage[], report: UpdateReporter, outcome: UpdateOutcome): Promise<string[]> {
  const git = packages.filter((p): p is ResolvedPackage & { parsed: GitSource } => p.parsed.type === "git");
  const results = await inPool(git, async (pkg) => {
    report.start(`Updating ${pkg.source}...`);
    const before = await gitHead(pkg.root);
    try {
      await installGitPackage(o, pkg.parsed, pkg.root, gitRoot(pkg.base));
    } catch (err) {
      report.fail(pkg.source, errorMessage(err));
      outcome.failures++;
      return undefined;
    }
    const after = await gitHead(pkg.root);
    return after === before ? undefined : change(pkg, before, after, true);
  });
  return results.filter((r): r is string => r !== undefined);
}

async function gitHead(dir: string): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const proc = Bun.spawn(["git", "rev-parse", "HEAD"], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return code === 0 ? out.trim() || undefined : undefined;
}

/** `fn` over `items`, at most CONCURRENCY at once; results in the items' order. */
async function inPool<T, R>(items: readonly T[], fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
  return out;
}
