import { writeOut, writeErr } from "../util/stdio.ts";
import { resolve } from "node:path";
import { errorMessage } from "../util/errors.ts";
import { canonicalFolder, nearestDecision, readTrustDecisions, trustFilePath, writeDecision } from "../trust/trust-store.ts";

export interface TrustCliOptions {
  home: string;
  cwd: string;
}

const USAGE = "usage: pion trust [path] | pion trust --revoke [path] | pion trust --list [--json]";

/**
 * `pion trust [path]` saves the folder (default: the cwd) as trusted; `--revoke [path]` makes it
 * untrusted again; `--list` prints the saved decisions. Writes to stdout (this is not a protocol
 * mode) and returns the exit code: 2 for usage errors, 1 when the store or the folder is unusable.
 */
export function runTrustCli(argv: string[], o: TrustCliOptions): number {
  const flags = new Set<string>();
  const paths: string[] = [];
  for (const tok of argv) {
    if (tok === "--revoke" || tok === "--list" || tok === "--json") flags.add(tok);
    else if (tok.startsWith("-") && tok !== "-") return usage(`Unknown option: ${tok}`);
    else paths.push(tok);
  }
  if (paths.length > 1) return usage("pion trust takes at most one path");
  if (flags.has("--list") && (flags.has("--revoke") || paths.length > 0)) return usage("--list takes no path and no --revoke");
  if (flags.has("--json") && !flags.has("--list")) return usage("--json goes with --list");
  try {
    if (flags.has("--list")) return list(o.home, flags.has("--json"));
    const folder = canonicalFolder(resolve(o.cwd, paths[0] ?? "."));
    return flags.has("--revoke") ? revoke(o.home, folder) : trust(o.home, folder);
  } catch (err) {
    writeErr(`pion: ${errorMessage(err)}\n`);
    return 1;
  }
}

function trust(home: string, folder: string): number {
  writeDecision(home, folder, true);
  writeOut(`Trusted ${folder}: its own .pion/ resources load from now on.\n`);
  return 0;
}

/**
 * Forgets the folder's own decision; if a parent's saved trust would still cover it, saves
 * "not trusted" for it instead, so after a revoke the folder is never trusted by a saved decision.
 */
function revoke(home: string, folder: string): number {
  const before = readTrustDecisions(home);
  const after = writeDecision(home, folder, null);
  const inherited = nearestDecision(after, folder);
  if (inherited?.trusted) {
    writeDecision(home, folder, false);
    writeOut(`Not trusted: ${folder} (saved as not trusted, since ${inherited.path} stays trusted).\n`);
  } else if (before[folder] === undefined) {
    writeOut(`${folder} had no saved trust; nothing changed.\n`);
  } else {
    writeOut(`Not trusted: ${folder} (its saved decision is removed).\n`);
  }
  return 0;
}

function list(home: string, json: boolean): number {
  const decisions = readTrustDecisions(home);
  const entries = Object.entries(decisions).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (json) {
    writeOut(`${JSON.stringify(entries.map(([path, trusted]) => ({ path, trusted })))}\n`);
  } else if (entries.length === 0) {
    writeOut(`No saved trust decisions (${trustFilePath(home)}).\n`);
  } else {
    for (const [path, trusted] of entries) writeOut(`${trusted ? "trusted    " : "not trusted"}  ${path}\n`);
  }
  return 0;
}

function usage(problem: string): number {
  writeErr(`pion: ${problem}\n${USAGE}\n`);
  return 2;
}
