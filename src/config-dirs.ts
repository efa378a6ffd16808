/**
 * Which configuration folders pion reads, in which order: the one answer every loader asks.
 * pion's own folders (`PION_HOME`, a project's `.pion/`) and the reference agent's
 * (`PI_CODING_AGENT_DIR` or `~/.pi/agent`, a project's `.pi/`) have the same layout. Every list
 * here is lowest precedence first, so a loader that lets a later source win gives pion's folder
 * the last word over the reference's. Pure: paths only, nothing is read.
 */
import { homedir } from "node:os";
import { join, resolve } from "node:path";

type Env = Record<string, string | undefined>;

/** The reference agent's own folder: `PI_CODING_AGENT_DIR`, else `~/.pi/agent`. */
export const piAgentDir = (env: Env = process.env): string =>
  env.PI_CODING_AGENT_DIR || join(env.HOME || homedir(), ".pi", "agent");

/**
 * The user-level folders: the reference's agent folder, then pion's home (`home`, which wins).
 * When both are the same folder (PION_HOME unset and PI_CODING_AGENT_DIR set) it is read once.
 */
export function userConfigDirs(home: string, env: Env = process.env): string[] {
  const pion = resolve(home);
  const pi = resolve(piAgentDir(env));
  return pi === pion ? [pion] : [pi, pion];
}

/** A project's folders of its own resources under its root: the reference's `.pi`, then pion's `.pion` (which wins). */
export const PROJECT_DIR_NAMES = [".pi", ".pion"] as const;

/** `PROJECT_DIR_NAMES` under `cwd`, lowest precedence first. */
export const projectConfigDirs = (cwd: string): string[] => PROJECT_DIR_NAMES.map((name) => join(resolve(cwd), name));

/** `name` in each folder, in the folders' order. */
export const filesIn = (dirs: readonly string[], name: string): string[] => dirs.map((dir) => join(dir, name));
