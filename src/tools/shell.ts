import { randomBytes } from "node:crypto";
import { closeSync, fstatSync, openSync, readSync, unlinkSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { countNewlines, DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, TailBuffer, type Truncation } from "./truncate.ts";

export interface ShellOptions {
  cwd: string;
  signal?: AbortSignal;
  /** Kill the command's whole process group after this long. */
  timeoutMs?: number;
  /**
   * Every chunk of output as it arrives (stdout and stderr merged), decoded per stream.
   * A returned promise pauses reading until it resolves (the consumer's backpressure).
   */
  onChunk?: (text: string) => void | Promise<void>;
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
}

/** How long readers may lag behind a killed group (a process that left the group may hold the pipes). */
const KILL_GRACE_MS = 100;

/**
 * Output kept in memory only as a rolling tail; once it passes the limits, the whole
 * output so far and everything after is written through to a 0600 temp file.
 */
class OutputSpool {
  readonly tail: TailBuffer;
  private fd: number | null = null;
  path: string | null = null;

  constructor(private readonly maxLines: number, private readonly maxBytes: number) {
    this.tail = new TailBuffer(maxBytes);
  }

  push(chunk: Uint8Array): void {
    if (this.fd === null) {
      const next = this.tail.peek(chunk);
      if (next.bytes > this.maxBytes || next.lines > this.maxLines) this.open();
    }
    if (this.fd !== null) writeAll(this.fd, chunk);
    this.tail.push(chunk);
  }

  private open(): void {
    const path = join(tmpdir(), `pion-bash-${randomBytes(8).toString("hex")}.log`);
    this.fd = openSync(path, "wx", 0o600);
    this.path = path;
    // Nothing has been dropped from the tail yet: it still holds the whole output.
    writeAll(this.fd, this.tail.bytes());
  }

  snapshot(): ShellTail {
    return { truncation: this.tail.truncate({ maxLines: this.maxLines, maxBytes: this.maxBytes }), fullOutputPath: this.path };
  }

  /** Closes the file if still open, after a failure. */
  dispose(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  /** Closes the file; drops it when the output ended up within the limits after all. */
  close(): ShellTail {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
    const snap = this.snapshot();
    if (!snap.truncation.truncated && this.path) {
      unlinkSync(this.path);
      this.path = null;
      return { ...snap, fullOutputPath: null };
    }
    return snap;
  }
}

function writeAll(fd: number, data: Uint8Array): void {
  for (let off = 0; off < data.length; ) off += writeSync(fd, data, off, data.length - off);
}

/**
 * Runs `bash -c command` in its own process group with stdout and stderr merged in
 * arrival order. Abort and timeout SIGKILL the whole group. Memory stays bounded by
 * the tail limits whatever the command prints. Never rejects for the command's own
 * failures; rejects only if bash cannot be started.
 */
export async function runShell(command: string, o: ShellOptions): Promise<ShellResult> {
  if (!o.onChunk) return runShellToFile(command, o);
  const maxLines = o.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const interval = o.updateIntervalMs ?? 100;
  const spool = new OutputSpool(maxLines, maxBytes);

  const proc = Bun.spawn(["bash", "-c", command], {
    cwd: o.cwd,
    stdin: "ignore",
    stdout: "pipe",
    stderr: "pipe",
    detached: true,
  });

  let killedFor: "abort" | "timeout" | null = null;
  let graceTimer: ReturnType<typeof setTimeout> | undefined;
  const readers = [proc.stdout.getReader(), proc.stderr.getReader()];
  const kill = (why: "abort" | "timeout") => {
    if (killedFor) return;
    killedFor = why;
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // The group has already exited.
    }
    graceTimer = setTimeout(() => {
      for (const r of readers) void r.cancel().catch(() => {});
    }, KILL_GRACE_MS);
  };
  const onAbort = () => kill("abort");
  const timeout = o.timeoutMs !== undefined ? setTimeout(() => kill("timeout"), o.timeoutMs) : undefined;
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();

  let lastUpdate = Number.NEGATIVE_INFINITY;
  let updateTimer: ReturnType<typeof setTimeout> | undefined;
  const sendTail = () => {
    updateTimer = undefined;
    lastUpdate = performance.now();
    o.onTail?.(spool.snapshot());
  };
  const scheduleTail = () => {
    if (!o.onTail || updateTimer) return;
    updateTimer = setTimeout(sendTail, Math.max(0, lastUpdate + interval - performance.now()));
  };

  const pump = async (reader: (typeof readers)[number]) => {
    const decoder = new TextDecoder();
    for (;;) {
      let r: Awaited<ReturnType<typeof reader.read>>;
      try {
        r = await reader.read();
      } catch {
        break; // cancelled after a kill: what was read is kept
      }
      if (r.done) break;
      spool.push(r.value);
      if (o.onChunk) {
        const wait = o.onChunk(decoder.decode(r.value, { stream: true }));
        if (wait) await wait;
      }
      scheduleTail();
    }
    const rest = decoder.decode();
    if (rest && o.onChunk) await o.onChunk(rest);
  };

  try {
    const [, , code] = await Promise.all([pump(readers[0]), pump(readers[1]), proc.exited]);
    // A throttled update still pending goes out before the result, so the host sees the last output.
    if (updateTimer) {
      clearTimeout(updateTimer);
      sendTail();
    }
    const final = spool.close();
    return {
      ...final,
      output: final.truncation.content,
      exitCode: proc.signalCode ? null : code,
      cancelled: killedFor === "abort",
      timedOut: killedFor === "timeout",
    };
  } finally {
    spool.dispose();
    if (proc.exitCode === null && proc.signalCode === null) kill("abort");
    clearTimeout(timeout);
    clearTimeout(graceTimer);
    clearTimeout(updateTimer);
    o.signal?.removeEventListener("abort", onAbort);
  }
}

/**
 * runShell without a string consumer (the bash tool; the host's bash command reads bytes):
 * the command writes straight into the full-output file (stdout and stderr share it, so their order is kept), and pion scans
 * that file with one reused buffer, counting lines and reading back only the tail it needs.
 * Nothing the command prints passes through the heap, so memory stays flat whatever it
 * prints. The file is removed when the output fits the limits.
 */
async function runShellToFile(command: string, o: ShellOptions): Promise<ShellResult> {
  const maxLines = o.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = o.maxBytes ?? DEFAULT_MAX_BYTES;
  const interval = o.updateIntervalMs ?? 100;
  const path = join(tmpdir(), `pion-bash-${randomBytes(8).toString("hex")}.log`);
  const out = openSync(path, "wx", 0o600);
  let proc: ReturnType<typeof Bun.spawn>;
  try {
    proc = Bun.spawn(["bash", "-c", command], { cwd: o.cwd, stdin: "ignore", stdout: out, stderr: out, detached: true });
  } finally {
    closeSync(out);
  }
  const input = openSync(path, "r");

  let killedFor: "abort" | "timeout" | null = null;
  const kill = (why: "abort" | "timeout") => {
    if (killedFor) return;
    killedFor = why;
    try {
      process.kill(-proc.pid, "SIGKILL");
    } catch {
      // The group has already exited.
    }
  };
  const onAbort = () => kill("abort");
  const timeout = o.timeoutMs !== undefined ? setTimeout(() => kill("timeout"), o.timeoutMs) : undefined;
  o.signal?.addEventListener("abort", onAbort, { once: true });
  if (o.signal?.aborted) onAbort();
  let exited = false;
  void proc.exited.then(() => (exited = true));

  const buf = new Uint8Array(1 << 18);
  const totals = { bytes: 0, newlines: 0, lastByte: -1 };
  const tailOf = (): TailBuffer => {
    const keep = Math.min(totals.bytes, maxBytes + 4096);
    const tail = new Uint8Array(keep);
    if (keep > 0) readSync(input, tail, 0, keep, totals.bytes - keep);
    return TailBuffer.fromTail(maxBytes, tail, totals);
  };
  const snapshot = (): ShellTail => {
    const truncation = tailOf().truncate({ maxLines, maxBytes });
    return { truncation, fullOutputPath: truncation.truncated ? path : null };
  };
  let lastUpdate = Number.NEGATIVE_INFINITY;
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
        if (o.onBytes) {
          const wait = o.onBytes(chunk, false);
          if (wait) await wait;
        }
      } else if (exited) {
        endAt = fstatSync(input).size;
      } else {
        await Bun.sleep(idle);
        idle = Math.min(idle * 2, 16);
      }
      if (o.onTail && changed && performance.now() - lastUpdate >= interval) {
        lastUpdate = performance.now();
        changed = false;
        o.onTail(snapshot());
      }
    }
    // The last output goes out before the result, so the host sees it.
    if (o.onBytes) await o.onBytes(new Uint8Array(0), true);
    if (o.onTail && changed) o.onTail(snapshot());
    const final = snapshot();
    keepFile = final.fullOutputPath !== null;
    const code = await proc.exited;
    return {
      ...final,
      output: final.truncation.content,
      exitCode: proc.signalCode ? null : code,
      cancelled: killedFor === "abort",
      timedOut: killedFor === "timeout",
    };
  } finally {
    closeSync(input);
    if (proc.exitCode === null && proc.signalCode === null) kill("abort");
    clearTimeout(timeout);
    o.signal?.removeEventListener("abort", onAbort);
    if (!keepFile) unlinkSync(path);
  }
}
