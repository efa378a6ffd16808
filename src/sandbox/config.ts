import { existsSync, realpathSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";

export const SANDBOX_MODES = ["off", "read-only", "workspace-write"] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** settings.json `sandbox` (the user's; a trusted project's may only narrow it). */
export interface SandboxSettings {
  mode?: SandboxMode;
  /** Folders writable besides the cwd (workspace-write only). */
  writableRoots?: string[];
  /** Network inside the sandbox (off by default). */
  network?: boolean;
  /** The bwrap to run instead of the one found on PATH. */
  bwrapPath?: string;
}

/** What a sandboxed command may do. Paths are absolute, symlinks resolved. */
export interface SandboxPolicy {
  mode: Exclude<SandboxMode, "off">;
  cwd: string;
  /** The cwd first, then `writableRoots`, then the host's `extraRoots` (empty in read-only mode). */
  writable: string[];
  network: boolean;
  bwrapPath?: string;
  /** pion's home (its keys, trust and sessions): hidden from commands. */
  pionHome: string;
  /** The other user-level config folders pion reads (the reference's agent folder, with its auth.json): hidden too. */
  configDirs?: string[];
  /** The user's home folder, whose credential folders are hidden. */
  userHome: string;
}

const rank: Record<SandboxMode, number> = { off: 0, "workspace-write": 1, "read-only": 2 };

/**
 * The sandbox for a session, or undefined when it is off. The command line's `--sandbox` wins;
 * otherwise the user's settings, which a trusted project's settings may only narrow (a stricter
 * mode, the network off); they never add writable roots or a bwrap path. `extraRoots` are the
 * session's further workspace roots that its host named (ACP `additionalDirectories`, absolute
 * paths): writable like `writableRoots` in workspace-write mode. Throws a one-line message for a
 * value that is not a mode.
 */
export function sandboxPolicy(
  o: { user?: SandboxSettings; project?: SandboxSettings; cliMode?: string; cwd: string; pionHome: string; configDirs?: readonly string[]; userHome: string; extraRoots?: readonly string[] },
): SandboxPolicy | undefined {
  const check = (m: unknown, where: string): SandboxMode | undefined => {
    if (m === undefined) return undefined;
    if (typeof m === "string" && (SANDBOX_MODES as readonly string[]).includes(m)) return m as SandboxMode;
    throw new Error(`Invalid sandbox mode ${JSON.stringify(m)} (${where}): expected off, read-only or workspace-write`);
  };
  const user = check(o.user?.mode, "settings sandbox.mode");
  const project = check(o.project?.mode, "project settings sandbox.mode");
  const cli = check(o.cliMode, "--sandbox");
  let mode = user ?? "off";
  if (project && rank[project] > rank[mode]) mode = project;
  if (cli) mode = cli;
  if (mode === "off") return undefined;
  const network = cli === undefined && o.project?.network === false ? false : o.user?.network === true;
  const real = (p: string) => (existsSync(p) ? realpathSync(p) : p);
  const cwd = real(o.cwd);
  const roots = mode === "workspace-write" ? [...(o.user?.writableRoots ?? []), ...(o.extraRoots ?? [])].map((r) => real(isAbsolute(r) ? r : resolve(o.cwd, r))) : [];
  const policy: SandboxPolicy = {
    mode,
    cwd,
    writable: mode === "workspace-write" ? [...new Set([cwd, ...roots])] : [],
    network,
    pionHome: real(o.pionHome),
    ...(o.configDirs?.length ? { configDirs: o.configDirs.map(real) } : {}),
    userHome: real(o.userHome),
  };
  if (o.user?.bwrapPath) policy.bwrapPath = o.user.bwrapPath;
  return policy;
}
