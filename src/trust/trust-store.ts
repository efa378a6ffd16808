/**
 * Saved project-trust decisions: `$PION_HOME/trust.json`, an object from a folder's canonical
 * path (symlinks resolved) to `true` (trusted) or `false` (not trusted), the reference's format.
 * A decision covers the folder and everything below it; the nearest saved ancestor decides.
 */
import { chmodSync, existsSync, readFileSync, realpathSync, renameSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { ensurePrivateDir } from "../store/paths.ts";
import { errorMessage } from "../util/errors.ts";

export const TRUST_FILE = "trust.json";

export type TrustDecisions = Record<string, boolean>;

export interface SavedDecision {
  /** The folder the decision was saved for: the asked folder or one of its parents. */
  path: string;
  trusted: boolean;
}

export const trustFilePath = (home: string): string => join(home, TRUST_FILE);

/** The folder's canonical path; throws a one-line error when it is missing or not a folder. */
export function canonicalFolder(path: string): string {
  let real: string;
  try {
    real = realpathSync(resolve(path));
  } catch (err) {
    throw new Error(`Cannot trust ${path}: ${errorMessage(err)}`);
  }
  if (!statSync(real).isDirectory()) throw new Error(`Cannot trust ${path}: not a folder`);
  return real;
}

/**
 * Every saved decision. A missing file has none; a file that is not an object of booleans
 * (`null`, the reference's "no decision", is skipped) is an error naming the file, so a
 * damaged store is never silently replaced.
 */
export function readTrustDecisions(home: string): TrustDecisions {
  const file = trustFilePath(home);
  if (!existsSync(file)) return {};
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(file, "utf8").replace(/^\uFEFF/, ""));
  } catch (err) {
    throw new Error(`Invalid trust store ${file}: ${errorMessage(err)}`);
  }
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error(`Invalid trust store ${file}: expected an object`);
  const out: TrustDecisions = {};
  for (const [path, value] of Object.entries(raw)) {
    if (value === null) continue;
    if (typeof value !== "boolean") throw new Error(`Invalid trust store ${file}: the value for ${JSON.stringify(path)} must be true or false`);
    out[path] = value;
  }
  return out;
}

/** The decision saved for `folder` (canonical) or its nearest parent. */
export function nearestDecision(decisions: TrustDecisions, folder: string): SavedDecision | undefined {
  for (let dir = folder; ; dir = dirname(dir)) {
    const value = decisions[dir];
    if (value !== undefined) return { path: dir, trusted: value };
    if (dirname(dir) === dir) return undefined;
  }
}

/**
 * Save (`true` / `false`) or forget (`null`) the decision for `folder` (canonical). The file is
 * replaced in one rename, so a reader never sees half of it; PION_HOME is created 0700, the
 * file 0600.
 */
export function writeDecision(home: string, folder: string, decision: boolean | null): TrustDecisions {
  const decisions = readTrustDecisions(home);
  if (decision === null) delete decisions[folder];
  else decisions[folder] = decision;
  const sorted: TrustDecisions = {};
  for (const key of Object.keys(decisions).sort()) sorted[key] = decisions[key]!;
  ensurePrivateDir(home);
  const file = trustFilePath(home);
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(sorted, null, 2)}\n`, { mode: 0o600 });
  chmodSync(temp, 0o600);
  renameSync(temp, file);
  return sorted;
}
