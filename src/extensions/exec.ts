/**
 * `pi.exec(command, args, options)`: run a program without a shell. `signal` and `timeout`
 * terminate it (SIGTERM, then SIGKILL after a grace period); a process ended by a signal
 * reports 128 + the signal number as `code`, like a shell. `env` is the program's whole
 * environment (pion's, minus its credentials); undefined inherits pion's.
 */
import { constants } from "node:os";

export interface ExecOptions {
  signal?: AbortSignal;
  timeout?: number;
  cwd?: string;
}

export interface ExecResult {
  stdout: string;
  stderr: string;
  code: number;
  killed: boolean;
}

const KILL_GRACE_MS = 5000;

export async function execProgram(
  command: string,
  args: readonly string[],
  defaultCwd: string,
  opts: ExecOptions = {},
  env?: Record<string, string>,
): Promise<ExecResult> {
  let proc: ReturnType<typeof spawnPiped>;
  try {
    proc = spawnPiped([command, ...args], opts.cwd ?? defaultCwd, env);
  } catch (err) {
    // Not found or not executable: a result like a shell's, not an exception.
    return { stdout: "", stderr: err instanceof Error ? err.message : String(err), code: 127, killed: false };
  }
  let killed = false;
  let hardKill: ReturnType<typeof setTimeout> | undefined;
  const terminate = () => {
    if (killed) return;
    killed = true;
    proc.kill("SIGTERM");
    hardKill = setTimeout(() => proc.kill("SIGKILL"), KILL_GRACE_MS);
  };
  const timer = opts.timeout !== undefined && opts.timeout > 0 ? setTimeout(terminate, opts.timeout) : undefined;
  opts.signal?.addEventListener("abort", terminate, { once: true });
  if (opts.signal?.aborted) terminate();
  try {
    const [stdout, stderr, exit] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
    const signo = proc.signalCode ? (constants.signals as Record<string, number>)[proc.signalCode] : undefined;
    return { stdout, stderr, code: signo !== undefined ? 128 + signo : exit, killed };
  } finally {
    if (timer) clearTimeout(timer);
    if (hardKill) clearTimeout(hardKill);
    opts.signal?.removeEventListener("abort", terminate);
  }
}

function spawnPiped(cmd: string[], cwd: string, env: Record<string, string> | undefined) {
  return Bun.spawn(cmd, { cwd, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
}
