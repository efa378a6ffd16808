/**
 * `pion update`, the reference's update command for what pion can update:
 *
 * - `--extensions`: every configured package (the user's settings, and the project's when its
 *   trust is saved or `--approve` is given); `<source>` or `--extension <source>`: the configured
 *   package of that identity (an error naming it when none is configured). What moves and what
 *   stays is src/extensions/package-update.ts. Offline (`--offline`, `PI_OFFLINE=1`) nothing is
 *   fetched and the command says so, as the reference does (exit 0). Each package that changed
 *   is reported `source from -> to`.
 * - `--models`: `pion models refresh`.
 * - pion itself (`pion update`, `--self`, `self`, `pi`, and the self part of `--all`): pion is a
 *   release binary that cannot replace itself; the command says so and how to update (exit 1).
 *
 * Progress and errors go to stderr, the outcome to stdout; exit 2 for usage errors, 1 for failures.
 */
import { isOffline } from "../config.ts";
import { errorMessage } from "../util/errors.ts";
import type { PackagesCliOptions } from "./packages-cli.ts";

export const UPDATE_USAGE = "usage: pion update [<source>|self|pi] [--self|--extensions|--models|--all] [--extension <source>] [--approve|--no-approve]";

const UPDATE_HELP = `${UPDATE_USAGE}

Update the configured pi packages or the model catalog. pion itself is one release binary and is
not updated by this command: replace the binary with a newer release instead.

  --extensions            every configured package (user settings; the project's when trusted)
  <source>                one configured package, as listed by pion list
  --extension <source>    the same as <source>
  --models                refresh the model catalog (pion models refresh)
  --self, self, pi        pion itself (exit 1: says how to update it)
  --all                   the packages, then pion itself
  -a, --approve           count the project's packages for this run
  -na, --no-approve       leave the project's packages out for this run
  --offline               fetch nothing (also PI_OFFLINE=1)

A package pinned to an exact npm version (npm:name@1.2.3) stays as it is; a git tag or commit
stays where it is, a branch or the default branch moves to its newest commit.
`;

const SELF_UPDATE = "pion: pion cannot update itself: it is a single release binary. Download the newer binary for this system and put it in place of this one (see README, Release binaries).\n";

type Target = { type: "self" } | { type: "all" } | { type: "models" } | { type: "extensions"; source?: string };

interface UpdateArgs {
  target: Target;
  approve?: boolean;
  offline: boolean;
  /** `pion update` alone: the packages are not part of it (said once). */
  skippedNote: boolean;
}

/** The reference's reading of update's arguments; a string is the usage error. */
function parseUpdateArgs(argv: string[]): UpdateArgs | string {
  const flags = { self: false, extensions: false, models: false, all: false };
  let source: string | undefined;
  let extension: string | undefined;
  let approve: boolean | undefined;
  let offline = false;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--self" || arg === "--extensions" || arg === "--models" || arg === "--all") flags[arg.slice(2) as keyof typeof flags] = true;
    else if (arg === "--approve" || arg === "-a") approve = true;
    else if (arg === "--no-approve" || arg === "-na") approve = false;
    else if (arg === "--offline") offline = true;
    // The reference's --force reinstalls the agent itself, which pion never does.
    else if (arg === "--force") continue;
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
  const args = (target: Target, skippedNote = false): UpdateArgs => ({ target, skippedNote, offline, ...(approve !== undefined ? { approve } : {}) });
  if (flags.all && (flags.self || flags.extensions || flags.models || extension)) return "--all cannot be combined with --self, --extensions, --models or --extension";
  if (flags.all && source) return "--all cannot be combined with a source";
  if (flags.models) {
    if (flags.self || flags.extensions || extension) return "--models cannot be combined with --self, --extensions or --extension";
    if (source) return "--models cannot be combined with a source";
    return args({ type: "models" });
  }
  if (extension) {
    if (flags.self || flags.extensions) return "--extension cannot be combined with --self or --extensions";
    if (source) return "--extension cannot be combined with a source";
    return args({ type: "extensions", source: extension });
  }
  if (source === "self" || source === "pi") return args({ type: flags.extensions ? "all" : "self" });
  if (source) {
    if (flags.self || flags.extensions) return "a source cannot be combined with --self or --extensions";
    return args({ type: "extensions", source });
  }
  if (flags.all || (flags.self && flags.extensions)) return args({ type: "all" });
  if (flags.self) return args({ type: "self" });
  if (flags.extensions) return args({ type: "extensions" });
  return args({ type: "self" }, true);
}

export async function runUpdateCli(argv: string[], o: PackagesCliOptions): Promise<number> {
  if (argv.includes("-h") || argv.includes("--help")) {
    o.out(UPDATE_HELP);
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
      code = await updateConfigured(o, target.type === "extensions" ? target.source : undefined, args);
    } catch (err) {
      o.err(`pion: ${errorMessage(err)}\n`);
      code = 1;
    }
  }
  if (target.type === "all" || target.type === "self") {
    o.err(SELF_UPDATE);
    code = 1;
  }
  return code;
}

async function updateConfigured(o: PackagesCliOptions, source: string | undefined, args: UpdateArgs): Promise<number> {
  const { packagesNamed, updatablePackages, updatePackages } = await import("../extensions/package-update.ts");
  const all = updatablePackages(o.home, o.cwd, o.env, args.approve);
  // An unknown source is an error even offline, as in the reference.
  const chosen = source ? packagesNamed(all, source, o.cwd) : all;
  if (isOffline(args.offline, o.env)) {
    o.out("Skipped package updates (offline mode)\n");
    return 0;
  }
  const { changed, warnings, failures } = await updatePackages(o, chosen, {
    start: (message) => o.err(`${message}\n`),
    warn: (message) => o.err(`pion: warning: ${message}\n`),
    fail: (what, message) => o.err(`pion: ${what}: ${message}\n`),
  });
  if (changed.length > 0) o.out(`Updated ${changed.length} package${changed.length === 1 ? "" : "s"}:\n${changed.map((c) => `  ${c}\n`).join("")}`);
  else if (failures + warnings > 0) o.out(`${source ? `${source} was not updated` : "No packages were updated"}, see the ${failures > 0 ? "errors" : "warnings"} above\n`);
  else o.out(source ? `${source} is already up to date\n` : "Packages are already up to date\n");
  return failures > 0 ? 1 : 0;
}
