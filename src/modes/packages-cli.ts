/**
 * `pion install <source> [-l]`, `pion remove|uninstall <source> [-l]`, `pion list`: the
 * reference's package commands (docs/packages.md). An npm source is installed with the `npm`
 * on the machine into the settings folder's `npm/` (`$PION_HOME/npm`, or the project's
 * `.pion/npm` with `-l`), a git source cloned with the machine's `git` into its `git/<host>/<path>`
 * (src/extensions/package-manager.ts); then the source is added to that folder's settings.json
 * `packages` as written (a local path relative to the settings folder), replacing an entry for
 * the same package. `remove` drops the entry and deletes the npm install or the checkout. Project scope needs a trusted folder (or one with no project files yet). Messages go
 * to stderr, the list to stdout; exit 2 for usage errors, 1 for failures.
 */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { parseSource } from "../extensions/packages.ts";
import { configuredPackages, installSource, readSettingsPackages, settingsEntryFor, uninstallSource, withPackageEntry, withoutPackageEntry, writeSettingsPackages } from "../extensions/package-manager.ts";
import { loadUserSettings } from "../config.ts";
import { decideProjectTrust } from "../trust/project-trust.ts";
import { errorMessage } from "../util/errors.ts";

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

async function install(o: PackagesCliOptions, source: string, dir: string): Promise<number> {
  if (parseSource(source).type !== "local") o.err(`Installing ${source}...\n`);
  await installSource(o, source, dir, o.cwd);
  const { raw, packages } = readSettingsPackages(dir);
  writeSettingsPackages(dir, raw, withPackageEntry(packages, settingsEntryFor(source, dir, o.cwd), dir) ?? packages);
  o.err(`Installed ${source} (${join(dir, "settings.json")})\n`);
  return 0;
}

async function remove(o: PackagesCliOptions, source: string, dir: string): Promise<number> {
  const { raw, packages } = readSettingsPackages(dir);
  const kept = withoutPackageEntry(packages, settingsEntryFor(source, dir, o.cwd), dir);
  await uninstallSource(o, source, dir);
  if (kept.length === packages.length) {
    o.err(`${source} is not in ${join(dir, "settings.json")}\n`);
    return 1;
  }
  writeSettingsPackages(dir, raw, kept);
  o.err(`Removed ${source}\n`);
  return 0;
}

function list(o: PackagesCliOptions): number {
  const packages = configuredPackages(o.home, o.cwd, o.env);
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
