/**
 * `pion install <source> [-l]`, `pion remove|uninstall <source> [-l]`, `pion list`: the
 * reference's package commands (docs/packages.md). An npm source is installed with the `npm`
 * on the machine into the settings folder's `npm/` (`$PION_HOME/npm`, or the project's
 * `.pion/npm` with `-l`), a git source cloned with the machine's `git` into its `git/<host>/<path>`
 * (src/modes/package-install.ts); then the source is added to that folder's settings.json
 * `packages` as written (a local path relative to the settings folder), replacing an entry for
 * the same package. `remove` drops the entry and deletes the npm install or the checkout. Project scope needs a trusted folder (or one with no project files yet). Messages go
 * to stderr, the list to stdout; exit 2 for usage errors, 1 for failures.
 */
import { existsSync, mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { gitPackageDir, gitRoot } from "../extensions/git-source.ts";
import { dedupePackages, entrySource, npmRoot, packageIdentity, parseSource, type ListedPackage } from "../extensions/packages.ts";
import { installGitPackage, installNpmPackage, removeGitPackage, runNpm } from "./package-install.ts";
import { loadSettings, loadUserSettings } from "../config.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { errorMessage } from "../util/errors.ts";
import { expandHome } from "../util/home-path.ts";
import { readJsonFile } from "../util/json-file.ts";

export interface PackagesCliOptions {
  home: string;
  cwd: string;
  env: Record<string, string | undefined>;
  out: (text: string) => void;
  err: (text: string) => void;
  /** The npm program (tests point it elsewhere); default `npm` on PATH. */
  npm?: string;
}

const USAGE = "usage: pion install <npm:name[@version]|git:host/user/repo[@ref]|url|path> [-l] | pion remove <source> [-l] | pion list";

export async function runPackagesCli(command: string, argv: string[], o: PackagesCliOptions): Promise<number> {
  const local = argv.includes("-l") || argv.includes("--local");
  const rest = argv.filter((a) => a !== "-l" && a !== "--local");
  const unknown = rest.find((a) => a.startsWith("-"));
  if (unknown) return usage(o, `Unknown option: ${unknown}`);
  try {
    if (command === "list") return rest.length ? usage(o, "pion list takes no arguments") : list(o);
    if (rest.length !== 1) return usage(o, `pion ${command} takes one source`);
    const dir = settingsDir(o, local);
    return command === "install" ? await install(o, rest[0]!, dir) : await remove(o, rest[0]!, dir);
  } catch (err) {
    o.err(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

function usage(o: PackagesCliOptions, msg: string): number {
  o.err(`pion: ${msg}\n${USAGE}\n`);
  return 2;
}

/** The settings folder a command writes: `$PION_HOME`, or the trusted project's `.pion`. */
function settingsDir(o: PackagesCliOptions, local: boolean): string {
  if (!local) return o.home;
  const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, defaultProjectTrust: loadUserSettings(o.home, o.env).defaultProjectTrust });
  if (trust.state === "untrusted") throw new Error(`${trust.folder} is not trusted; run pion trust first (its packages would not load)`);
  return join(trust.folder, ".pion");
}

function readPackages(dir: string): { raw: Record<string, unknown>; packages: unknown[] } {
  const value = readJsonFile(join(dir, "settings.json"));
  const raw = value && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
  return { raw, packages: Array.isArray(raw.packages) ? [...(raw.packages as unknown[])] : [] };
}

function writePackages(dir: string, raw: Record<string, unknown>, packages: unknown[]): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const file = join(dir, "settings.json");
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...raw, packages }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}

const sameIdentity = (entry: unknown, source: string, dir: string): boolean => {
  const s = entrySource(entry);
  return s !== undefined && packageIdentity(parseSource(s), dir) === packageIdentity(parseSource(source), dir);
};

async function install(o: PackagesCliOptions, source: string, dir: string): Promise<number> {
  const parsed = parseSource(source);
  let written = source;
  if (parsed.type !== "local") o.err(`Installing ${source}...\n`);
  if (parsed.type === "npm") await installNpmPackage(o, parsed.spec, dir);
  else if (parsed.type === "git") await installGitPackage(o, parsed, gitPackageDir(dir, parsed), gitRoot(dir));
  else {
    const path = resolve(o.cwd, expandHome(parsed.path));
    if (!existsSync(path)) throw new Error(`Path does not exist: ${path}`);
    written = relative(dir, path) || ".";
  }
  const { raw, packages } = readPackages(dir);
  const at = packages.findIndex((e) => sameIdentity(e, written, dir));
  if (at === -1) packages.push(written);
  else packages[at] = typeof packages[at] === "string" ? written : { ...(packages[at] as object), source: written };
  writePackages(dir, raw, packages);
  o.err(`Installed ${source} (${join(dir, "settings.json")})\n`);
  return 0;
}

async function remove(o: PackagesCliOptions, source: string, dir: string): Promise<number> {
  const parsed = parseSource(source);
  const key = parsed.type === "local" ? relative(dir, resolve(o.cwd, expandHome(parsed.path))) || "." : source;
  const { raw, packages } = readPackages(dir);
  const kept = packages.filter((e) => !sameIdentity(e, key, dir));
  if (parsed.type === "npm" && existsSync(join(npmRoot(dir), "node_modules", parsed.name))) {
    await runNpm(o, ["uninstall", parsed.name, "--prefix", npmRoot(dir), "--no-audit", "--no-fund"]);
  }
  if (parsed.type === "git") removeGitPackage(gitPackageDir(dir, parsed), gitRoot(dir));
  if (kept.length === packages.length) {
    o.err(`${source} is not in ${join(dir, "settings.json")}\n`);
    return 1;
  }
  writePackages(dir, raw, kept);
  o.err(`Removed ${source}\n`);
  return 0;
}

function list(o: PackagesCliOptions): number {
  const user = loadUserSettings(o.home, o.env);
  const trust = decideProjectTrust({ home: o.home, cwd: o.cwd, defaultProjectTrust: user.defaultProjectTrust });
  const listed: ListedPackage[] = loadSettings(o.home, o.cwd, trust.trusted, () => {}, user).listedPackages ?? [];
  const packages = dedupePackages(listed);
  if (packages.length === 0) {
    o.out("No packages installed.\n");
    return 0;
  }
  for (const level of ["user", "project"] as const) {
    const here = packages.filter((p) => p.level === level);
    if (here.length === 0) continue;
    o.out(`${level === "user" ? "User" : "Project"} packages:\n`);
    for (const p of here) {
      o.out(`  ${p.source}\n    ${existsSync(p.root) ? p.root : "(not installed)"}\n`);
    }
  }
  return 0;
}
