/**
 * `pion update`, the reference's update command for what pion can update:
 *
 * - `--extensions`: every configured package (the user's settings, and a trusted project's);
 *   `<source>` or `--extension <source>`: the configured package of that identity (an error
 *   naming it when none is configured). An unpinned npm package is installed again at its latest
 *   version (a range at the newest that fits), a pinned one (`npm:name@1.2.3`) is left alone; a
 *   git package is fetched and reset to its ref or default branch (a commit ref already checked
 *   out stays); a local path has nothing to update. Offline (`--offline`, `PI_OFFLINE=1`) nothing
 *   is fetched, as in the reference. Each package that changed is reported `source from -> to`.
 * - `--models`: `pion models refresh`.
 * - pion itself (`pion update`, `--self`, `self`, `pi`, and the self part of `--all`): pion is a
 *   release binary that cannot replace itself; the command says so and how to update (exit 1).
 *
 * Progress goes to stderr, the outcome to stdout; exit 2 for usage errors, 1 for failures.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isOffline } from "../config.ts";
import { configuredPackages, sameIdentity, settingsEntryFor } from "../extensions/package-manager.ts";
import { errorMessage } from "../util/errors.ts";
import type { PackagesCliOptions } from "./packages-cli.ts";

export const UPDATE_USAGE = "usage: pion update [<source>|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve]";

type Target = { type: "self" } | { type: "all" } | { type: "models" } | { type: "extensions"; source?: string };

interface UpdateArgs {
  target: Target;
  approve?: boolean;
  /** `pion update` alone: the packages are not part of it (said once). */
  skippedNote: boolean;
}

/** The reference's reading of update's arguments; a string is the usage error. */
function parseUpdateArgs(argv: string[]): UpdateArgs | string {
  const flags = { self: false, extensions: false, models: false, all: false };
  let source: string | undefined;
  let extension: string | undefined;
  let approve: boolean | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--self" || arg === "--extensions" || arg === "--models" || arg === "--all") flags[arg.slice(2) as keyof typeof flags] = true;
    else if (arg === "--approve" || arg === "-a") approve = approve === false ? false : true;
    else if (arg === "--no-approve" || arg === "-na") approve = false;
    else if (arg === "--force" || arg === "--offline") continue;
    else if (arg === "--extension") {
      const value = argv[i + 1];
      if (!value || value.startsWith("-")) return "--extension needs a source";
      if (extension) return "--extension can only be given once";
      extension = value;
      i++;
    } else if (arg.startsWith("-")) return `Unknown option: ${arg}`;
    else if (source) return `Unexpected argument: ${arg}`;
    else source = arg;
  }
  const withApprove = (target: Target, skippedNote = false): UpdateArgs => ({ target, skippedNote, ...(approve !== undefined ? { approve } : {}) });
  if (flags.all && (flags.self || flags.extensions || flags.models || extension)) return "--all cannot be combined with --self, --extensions, --models or --extension";
  if (flags.all && source) return "--all cannot be combined with a source";
  if (flags.models) {
    if (flags.self || flags.extensions || extension) return "--models cannot be combined with --self, --extensions or --extension";
    if (source) return "--models cannot be combined with a source";
    return withApprove({ type: "models" });
  }
  if (extension) {
    if (flags.self || flags.extensions) return "--extension cannot be combined with --self or --extensions";
    if (source) return "--extension cannot be combined with a source";
    return withApprove({ type: "extensions", source: extension });
  }
  if (source === "self" || source === "pi") return withApprove({ type: flags.extensions ? "all" : "self" });
  if (source) {
    if (flags.self || flags.extensions) return "a source cannot be combined with --self or --extensions";
    return withApprove({ type: "extensions", source });
  }
  if (flags.all || (flags.self && flags.extensions)) return withApprove({ type: "all" });
  if (flags.self) return withApprove({ type: "self" });
  if (flags.extensions) return withApprove({ type: "extensions" });
  return withApprove({ type: "self" }, true);
}

const installedVersion = (root: string): string | undefined => {
  try {
    return String((JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { version?: unknown }).version ?? "") || undefined;
  } catch {
    return undefined;
  }
};

/** An exact npm version (`1.2.3`, `1.2.3-beta.1`): the package is pinned there. */
const EXACT_VERSION = /^v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?$/;

export async function runUpdateCli(argv: string[], o: PackagesCliOptions): Promise<number> {
  if (argv.includes("-h") || argv.includes("--help")) {
    o.out(`${UPDATE_USAGE}\n`);
    return 0;
  }
  const args = parseUpdateArgs(argv);
  if (typeof args === "string") {
    o.err(`pion: ${args}\n${UPDATE_USAGE}\n`);
    return 2;
  }
  const { target } = args;
  if (target.type === "models") {
    const { runModelsCli } = await import("./models-cli.ts");
    try {
      return await runModelsCli("refresh", { home: o.home, env: o.env, json: false });
    } catch (err) {
      o.err(`pion: ${errorMessage(err)}\n`);
      return 1;
    }
  }
  if (args.skippedNote) o.out("Packages are not updated with pion itself: run pion update --extensions to update them.\n");
  let code = 0;
  if (target.type === "all" || target.type === "extensions") {
    try {
      code = await updatePackages({ ...o, offline: argv.includes("--offline") }, target.type === "extensions" ? target.source : undefined, args.approve);
    } catch (err) {
      o.err(`pion: ${errorMessage(err)}\n`);
      code = 1;
    }
  }
  if (target.type === "all" || target.type === "self") {
    o.err("pion: pion cannot update itself: it is a single release binary. Download the newer binary for this system and put it in place of this one (see README, Release binaries).\n");
    code = 1;
  }
  return code;
}

async function updatePackages(o: PackagesCliOptions & { offline?: boolean }, source: string | undefined, approve: boolean | undefined): Promise<number> {
  const all = configuredPackages(o.home, o.cwd, o.env, approve);
  const chosen = source ? all.filter((p) => sameIdentity(p.entry, settingsEntryFor(source, p.base, o.cwd), p.base)) : all;
  if (source && chosen.length === 0) throw new Error(`No matching package found for ${source}`);
  if (isOffline(o.offline === true, o.env)) {
    o.out("Skipped package updates (offline mode)\n");
    return 0;
  }
  const { installGitPackage, installNpmPackage } = await import("../extensions/package-install.ts");
  const { gitRoot } = await import("../extensions/git-source.ts");
  const changed: string[] = [];
  let failed = 0;
  for (const pkg of chosen) {
    const p = pkg.parsed;
    if (p.type === "local" || (p.type === "npm" && p.version !== undefined && EXACT_VERSION.test(p.version))) continue;
    const scope = pkg.level === "project" ? " (project)" : "";
    const before = p.type === "npm" ? installedVersion(pkg.root) : await gitHead(pkg.root);
    o.err(`Updating ${pkg.source}${scope}...\n`);
    try {
      if (p.type === "npm") await installNpmPackage(o, p.version !== undefined ? p.spec : `${p.name}@latest`, pkg.base);
      else await installGitPackage(o, p, pkg.root, gitRoot(pkg.base));
    } catch (err) {
      o.err(`pion: ${pkg.source}: ${errorMessage(err)}\n`);
      failed++;
      continue;
    }
    const after = p.type === "npm" ? installedVersion(pkg.root) : await gitHead(pkg.root);
    const shown = (v: string | undefined) => (v === undefined ? "(none)" : p.type === "git" ? v.slice(0, 7) : v);
    if (after !== before) changed.push(`${pkg.source}${scope} ${shown(before)} -> ${shown(after)}`);
  }
  if (changed.length > 0) o.out(`Updated ${changed.length} package${changed.length === 1 ? "" : "s"}:\n${changed.map((c) => `  ${c}\n`).join("")}`);
  else if (failed > 0) o.out(source ? `${source} was not updated, see the errors above\n` : "No packages were updated, see the errors above\n");
  else o.out(source ? `${source} is already up to date\n` : "Packages are already up to date\n");
  return failed > 0 ? 1 : 0;
}

async function gitHead(dir: string): Promise<string | undefined> {
  if (!existsSync(dir)) return undefined;
  const proc = Bun.spawn(["git", "rev-parse", "HEAD"], { cwd: dir, stdin: "ignore", stdout: "pipe", stderr: "ignore" });
  const [out, code] = await Promise.all([new Response(proc.stdout).text(), proc.exited]);
  return code === 0 ? out.trim() || undefined : undefined;
}
