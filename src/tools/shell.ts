import { outputNotSaved } from "./output-space.ts";
import { closeSync, fstatSync, openSync, readSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countNewlines, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TailBuffer, type Truncation } from "./truncate.ts";

export interface ShellOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Kill the command's whole process group after this long. */
  timeoutMs?: number;
  /**
   * Every piece of output as raw bytes, a view into a reused buffer (copy it to keep it);
   * `final` marks the end of the output. A returned promise pauses reading.
   */
  onBytes?: (chunk: Uint8Array, final: boolean) => void | Promise<void>;
  /** A throttled snapshot of the output's tail, at most once per `updateIntervalMs`. */
  onTail?: (tail: ShellTail) => void;
  updateIntervalMs?: number;
  maxLines?: number;
  maxBytes?: number;
  /** The command's environment and the masking of its output (pion's credential guard). */
  guard?: ShellGuard;
  /** The command's whole environment; default: the guard's (pion's, minus its credentials). */
  env?: Record<string, string>;
  /** Runs the command somewhere else (an extension's operations, e.g. over ssh) instead of a local bash. */
  exec?: ShellExec;
  /** The tool call the command runs for, passed on to `exec`. */
  callId?: string;
  /** Runs the local bash inside a sandbox (src/sandbox/); its group is killed as without one. */
  sandbox?: ShellSandbox;
  /** The local shell to run `command` with (`-c`); default `bash` from PATH (settings `shellPath`). */
  shellPath?: string;
}

/**
 * A sandbox around a local command (src/sandbox/sandbox.ts implements it): the argv and
 * environment to start instead, and descriptors the child gets from slot 3 on; `release`
 * closes pion's copies once the child started.
 */
export interface ShellSandbox {
  wrap(argv: string[], env: Record<string, string>): { argv: string[]; env: Record<string, string>; fds: number[]; release(): void };
}

/**
 * Runs `command` in `cwd` elsewhere, passing its output (stdout and stderr, in order) to
 * `onData`; resolves with the exit code (null: killed by a signal). `signal` aborts when pion
 * stops the command (abort, timeout); the runner must end it then. `callId` names the tool call
 * the command runs for, when a tool runs it (a runner that shows the command may say where).
 */
export type ShellExec = (
  command: string,
  cwd: string,
  o: { onData: (chunk: Uint8Array) => void; signal: AbortSignal; env: Record<string, string>; callId?: string },
) => Promise<number | null>;

/**
 * What the shell needs of pion's credential guard (credentials/guard.ts): the environment
 * of the command and masking of what it prints, in the stream and in the tail kept.
 */
export interface ShellGuard {
  childEnv(): Record<string, string>;
  maskBytes(bytes: Uint8Array): Uint8Array;
  byteStream(): ByteMasker | undefined;
}

/**
 * A stream masker: `push` returns what to pass on (maybe a view of `chunk`); `masked` counts
 * replacements; `held` is how many bytes at the end of the last push wait for the next one.
 */
export interface ByteMasker {
  push(chunk: Uint8Array, final: boolean): Uint8Array;
  readonly masked: number;
  readonly held: number;
}

export interface ShellTail {
  truncation: Truncation;
  fullOutputPath: string | null;
}

export interface ShellResult extends ShellTail {
  /** The tail of the output kept for the model (see truncation). */
  output: string;
  /** null when the command was killed by a signal. */
  exitCode: number | null;
  cancelled: boolean;
  timedOut: boolean;
  /** Set when the full-output file's disk filled up, so the output may be cut short (output-space.ts). */
  outputNotSaved?: string;
}

/**
 * Runs `bash -c command` in its own process group (or through `exec`, elsewhere); abort and
 * timeout SIGKILL the whole group (or abort `exec`'s signal). The command writes straight into the full-output file (stdout and stderr share
 * it, so their order is kept), and pion scans that file with one reused buffer, counting
 * lines and reading back only the tail it needs: nothing the command prints passes
 * through the heap, so memory stays flat whatever it prints. The file is removed when the
 * output fits the limits. Never rejects for the command's own failures.
 */
/** Reads shorter than this are followed by a 1 ms pause while the command runs. */
const SMALL_READ = 1 << 16;
/** Longest stretch of back-to-back full reads before the event loop gets a turn. */
const YIELD_MS = 10;

export async function runShell(command: string, o: ShellOptions): Promise<ShellResult> {
  const maxLines = o.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const interval = o.updateIntervalMs ?? 100;
  const path = join(tmpdir(), `pion-bash-${Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex")}.log`);
  const env = o.env ?? o.guard?.childEnv();
  const proc = o.exec ? startElsewhere(o.exec, command, o.cwd, env ?? definedEnv(), path, o.callId) : startLocalShell(command, o.cwd, env, { path }, o.sandbox, o.shellPath);
  let input: number;
  try {
    input = openSync(path, "r");
  } catch (err) {
    proc.kill();
    throw err;
  }

  let killedFor: "abort" | "timeout" | null = null;
  const kill = (why: "abort" | "timeout") => {
    if (killedFor) return;
    killedFor = why;
    proc.kill();
  };
  const onAbort = () => kill("abort");
  const timeout = o.timeoutMs !== undefined ? setTimeout(() => kill("timeout"), o.timeoutMs) : undefined;
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  let exited = false;
  const exitCode = proc.exited.finally(() => (exited = true));
  // A runner that fails (not the command: the runner itself) ends the read loop; the error is rethrown below.
  exitCode.catch(() => undefined);

  // Every byte passes the masker (when pion knows a key): what streams out is masked, and a
  // kept full-output file that held a key is rewritten masked before the result.
  const masker = o.guard?.byteStream();
  const onBytes = masker
    ? (chunk: Uint8Array, final: boolean) => {
        const out = masker.push(chunk, final);
        return o.onBytes?.(out, final);
      }
    : o.onBytes;
  const buf = new Uint8Array(1 << 18);
  const totals = { bytes: 0, newlines: 0, lastByte: -1 };
  /**
   * The output's tail, masked. `running`: more output may follow, so an end that could begin a
   * secret is left out (held back as the byte stream holds it) until a later snapshot decides.
   */
  const tailOf = (running: boolean): TailBuffer => {
    const keep = Math.min(totals.bytes, maxBytes + 4096);
    const tail = new Uint8Array(keep);
    if (keep > 0) readSync(input, tail, 0, keep, totals.bytes - keep);
    if (!o.guard) return TailBuffer.fromTail(maxBytes, tail, totals);
    // Masked before truncating: a secret cut by the window's start lies in the 4 KB before it.
    const stream = running ? o.guard.byteStream() : undefined;
    const masked = stream ? stream.push(tail, false) : o.guard.maskBytes(tail);
    const held = stream ? tail.subarray(tail.length - stream.held) : tail.subarray(0, 0);
    return TailBuffer.fromTail(maxBytes, masked, {
      bytes: totals.bytes - keep + masked.length,
      newlines: totals.newlines - countNewlines(held),
      lastByte: held.length === 0 ? totals.lastByte : masked.length > 0 ? masked[masked.length - 1]! : -1,
    });
  };
  const snapshot = (running: boolean): ShellTail => {
    const truncation = tailOf(running).truncate({ maxLines, maxBytes });
    return { truncation, fullOutputPath: truncation.truncated ? path : null };
  };
  let lastUpdate = Number.NEGATIVE_INFINITY;
  let lastYield = performance.now();
  let changed = false;
  let keepFile = false;
  /** Once bash exited: read up to what the file held then (a background child may write on forever). */
  let endAt = Number.POSITIVE_INFINITY;

  try {
    for (let idle = 1; totals.bytes < endAt; ) {
      const got = readSync(input, buf, 0, Math.min(buf.length, endAt - totals.bytes), totals.bytes);
      if (got > 0) {
        const chunk = buf.subarray(0, got);
        totals.bytes += got;
        totals.newlines += countNewlines(chunk);
        totals.lastByte = chunk[got - 1]!;
        changed = true;
        idle = 1;
        let waited = false;
        if (onBytes) {
          const wait = onBytes(chunk, false);
          if (wait) {
            await wait;
            waited = true;
          }
        }
        // A fast writer is read a few kilobytes at a time unless pion waits a moment: a
        // millisecond lets a chunk build up (one update per chunk, not per write of the
        // command), and is nothing for output a person reads.
        if (got < SMALL_READ && !exited) {
          await Bun.sleep(1);
          waited = true;
        } else if (!waited && performance.now() - lastYield >= YIELD_MS) {
          // A command that prints faster than pion reads never lets the loop reach the file's
          // end: give the event loop a turn now and then (updates get written, abort arrives).
          await new Promise((resolve) => setImmediate(resolve));
          waited = true;
        }
        if (waited) lastYield = performance.now();
      } else if (exited) {
        endAt = fstatSync(input).size;
      } else {
        await Bun.sleep(idle);
        idle = Math.min(idle * 2, 16);
      }
      if (o.onTail && changed && performance.now() - lastUpdate >= interval) {
        lastUpdate = performance.now();
        changed = false;
        o.onTail(snapshot(true));
      }
    }
    // The last output goes out before the result, so the host sees it.
    if (onBytes) await onBytes(new Uint8Array(0), true);
    if (o.onTail && changed) o.onTail(snapshot(false));
    const final = snapshot(false);
    keepFile = final.fullOutputPath !== null;
    if (keepFile && masker && masker.masked > 0) maskFile(path, o.guard!.byteStream()!);
    let code: number | null;
    try {
      code = await exitCode;
    } catch (err) {
      // A runner elsewhere may reject once pion stopped it; the stop is what happened.
      if (!killedFor) throw err;
      code = null;
    }
    const lost = outputNotSaved(path);
    return {
      ...final,
      output: final.truncation.content,
      exitCode: code,
      cancelled: killedFor === "abort",
      timedOut: killedFor === "timeout",
      ...(lost ? { outputNotSaved: lost } : {}),
    };
  } finally {
    closeSync(input);
    if (!exited) kill("abort");
    clearTimeout(timeout);
    o.signal?.removeEventListener("abort", onAbort);
    if (!keepFile) unlinkSync(path);
  }
}

/** Rewrites `path` through `masker`, a chunk at a time, and replaces it (same mode, 0600). */
function maskFile(path: string, masker: ByteMasker): void {
  const tmp = `${path}.masked`;
  const input = openSync(path, "r");
  const output = openSync(tmp, "wx", 0o600);
  try {
    const buf = new Uint8Array(1 << 18);
    for (let pos = 0; ; ) {
      const got = readSync(input, buf, 0, buf.length, pos);
      pos += got;
      const out = masker.push(buf.subarray(0, got), got === 0);
      for (let w = 0; w < out.length; ) w += writeSync(output, out, w, out.length - w);
      if (got === 0) break;
    }
  } finally {
    closeSync(input);
    closeSync(output);
  }
  renameSync(tmp, path);
}

/** A started command: `exited` resolves with its exit code (null: killed by a signal); `kill` ends it. */
interface Started {
  exited: Promise<number | null>;
  kill(): void;
}

/**
 * `bash -c command` (or `shellPath -c command`) in its own process group, writing stdout and
 * stderr into the file at `path`; kill SIGKILLs the whole group. Also what extensions get as
 * local bash operations.
 */
export function startLocalShell(
  command: string,
  cwd: string,
  env: Record<string, string> | undefined,
  output: { path: string } | "pipe",
  sandbox?: ShellSandbox,
  shellPath = "bash",
): Started & { stdout?: ReadableStream<Uint8Array>; stderr?: ReadableStream<Uint8Array> } {
  const fd = output === "pipe" ? undefined : openSync(output.path, "wx", 0o600);
  let proc: ReturnType<typeof Bun.spawn>;
  const argv = [shellPath, "-c", command];
  const wrapped = sandbox?.wrap(argv, env ?? definedEnv());
  try {
    const stdio = fd ?? "pipe";
    proc = Bun.spawn(wrapped?.argv ?? argv, {
      cwd,
      env: wrapped?.env ?? env,
      stdio: ["ignore", stdio, stdio, ...(wrapped?.fds ?? [])],
      detached: true,
    });
  } finally {
    if (fd !== undefined) closeSync(fd);
    wrapped?.release();
  }
  return {
    exited: proc.exited.then((code) => (proc.signalCode ? null : code)),
    kill() {
      try {
        process.kill(-proc.pid, "SIGKILL");
      } catch {
        // The group has already exited.
      }
    },
    ...(output === "pipe" ? { stdout: proc.stdout as ReadableStream<Uint8Array>, stderr: proc.stderr as ReadableStream<Uint8Array> } : {}),
  };
}

/** The command through `exec`: its output is appended to the file at `path` as it arrives. */
function startElsewhere(exec: ShellExec, command: string, cwd: string, env: Record<string, string>, path: string, callId: string | undefined): Started {
  const fd = openSync(path, "wx", 0o600);
  let open = true;
  const stop = new AbortController();
  const onData = (chunk: Uint8Array) => {
    if (!open) return; // output after the runner settled has nowhere to go
    for (let w = 0; w < chunk.length; ) w += writeSync(fd, chunk, w, chunk.length - w);
  };
  let run: Promise<number | null>;
  try {
    run = Promise.resolve(exec(command, cwd, { onData, signal: stop.signal, env, ...(callId !== undefined ? { callId } : {}) }));
  } catch (err) {
    run = Promise.reject(err);
  }
  const exited = run.finally(() => {
    open = false;
    closeSync(fd);
  });
  return { exited, kill: () => stop.abort() };
}

/** The variables of `env` that are set (default: pion's own environment, as a child would inherit it). */
export function definedEnv(env: Readonly<Record<string, string | undefined>> = process.env): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
}
