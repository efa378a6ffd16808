/**
 * A pion RPC process for the reliability suite: like `Pion`, but records of chosen types
 * (endless bash output, streaming deltas) are only counted and measured, never kept, so a
 * test can run a command that prints forever without the test process growing with it.
 * Also: the process's resident memory, and a scan of /proc for leftover processes.
 */
import { readdirSync, readFileSync } from "node:fs";
import type { Subprocess } from "bun";
import { jsonLines } from "../../src/rpc/jsonl.ts";
import { SOURCE_ENTRY, tempDirs } from "./pion.ts";
import { RecordLog, type Rec } from "./record-log.ts";

export interface LeanOptions {
  home?: string;
  cwd?: string;
  args?: string[];
  env?: Record<string, string>;
  /** Record types counted in `counts`/`bytes` but not parsed or kept. */
  drop?: Iterable<string>;
}

export class LeanPion {
  private readonly log = new RecordLog(() => `stderr: ${this.stderr.slice(-1500)}`);
  get records(): Rec[] {
    return this.log.records;
  }
  /** Records seen per type, kept or dropped. */
  readonly counts = new Map<string, number>();
  /** Line bytes seen per dropped type. */
  readonly bytes = new Map<string, number>();
  stderr = "";
  readonly exited: Promise<number>;
  readonly home: string;
  readonly cwd: string;
  private readonly dropPrefixes: [string, string][];
  private nextId = 0;
  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  /** Set when stdout carried something that is not one JSON object per line. */
  protocolError: string | undefined;

  constructor(opts: LeanOptions = {}) {
    const dirs = opts.home && opts.cwd ? { home: opts.home, cwd: opts.cwd } : tempDirs();
    this.home = dirs.home;
    this.cwd = dirs.cwd;
    this.dropPrefixes = [...(opts.drop ?? [])].map((t) => [t, `{"type":${JSON.stringify(t)}`]);
    this.proc = Bun.spawn(["bun", SOURCE_ENTRY, ...(opts.args ?? ["--mode", "rpc"])], {
      cwd: dirs.cwd,
      env: { ...process.env, PION_HOME: dirs.home, ...opts.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    const stdoutDone = this.readStdout();
    void this.readStderr();
    this.exited = this.proc.exited.then(async (code) => {
      await stdoutDone;
      return code;
    });
  }

  get pid(): number {
    return this.proc.pid;
  }

  get exitCode(): number | null {
    return this.proc.exitCode;
  }

  count(type: string): number {
    return this.counts.get(type) ?? 0;
  }

  private bump(type: string, bytes: number): void {
    this.counts.set(type, (this.counts.get(type) ?? 0) + 1);
    if (bytes > 0) this.bytes.set(type, (this.bytes.get(type) ?? 0) + bytes);
  }

  private async readStdout(): Promise<void> {
    for await (const rec of jsonLines(this.proc.stdout)) {
      if ("error" in rec) {
        this.protocolError ??= rec.error;
        continue;
      }
      const line = rec.line;
      if (line === "") continue;
      const dropped = this.dropPrefixes.find(([, prefix]) => line.startsWith(prefix));
      if (dropped) {
        this.bump(dropped[0], line.length);
        continue;
      }
      let parsed: Rec;
      try {
        parsed = JSON.parse(line);
      } catch {
        this.protocolError ??= `non-JSON line on stdout: ${line.slice(0, 200)}`;
        continue;
      }
      this.bump(String(parsed.type), 0);
      this.log.add(parsed);
    }
  }

  private async readStderr(): Promise<void> {
    const dec = new TextDecoder();
    for await (const chunk of this.proc.stderr) this.stderr += dec.decode(chunk, { stream: true });
  }

  /** Queues bytes for stdin; large writes are flushed as the pipe drains. */
  write(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    void this.proc.stdin.flush();
  }

  /** Writes and waits until the bytes have been handed to the pipe. */
  async writeAll(data: string | Uint8Array): Promise<void> {
    this.proc.stdin.write(data);
    await this.proc.stdin.flush();
  }

  send(cmd: Rec): void {
    this.write(`${JSON.stringify(cmd)}\n`);
  }

  async request(cmd: Rec, timeoutMs = 15000): Promise<Rec> {
    const id = (cmd.id as string | undefined) ?? `l${++this.nextId}`;
    const p = this.waitFor((r) => r.type === "response" && r.id === id, this.records.length, timeoutMs);
    this.send({ ...cmd, id });
    return p;
  }

  waitFor(pred: string | ((r: Rec) => boolean), from = 0, timeoutMs = 15000): Promise<Rec> {
    return this.log.waitFor(pred, from, timeoutMs);
  }


  /** Bounded polling for a condition that no record announces. */
  async until(cond: () => boolean, what: string, timeoutMs = 15000, everyMs = 10): Promise<void> {
    const deadline = performance.now() + timeoutMs;
    while (!cond()) {
      if (performance.now() > deadline) throw new Error(`timed out waiting until ${what}\nstderr: ${this.stderr.slice(-1500)}`);
      await Bun.sleep(everyMs);
    }
  }

  /** Resident set size in bytes (VmRSS), or null once the process is gone. */
  rss(): number | null {
    return rssOf(this.proc.pid);
  }

  async close(): Promise<number> {
    this.proc.stdin.end();
    return this.exited;
  }

  kill(signal: NodeJS.Signals | number = "SIGKILL"): void {
    this.proc.kill(signal);
  }
}

/** Samples the process's RSS every 10 ms until `done` settles; returns the peak (rethrows what `done` throws). */
export async function peakRss(p: LeanPion, done: Promise<unknown>): Promise<number> {
  let peak = p.rss() ?? 0;
  let finished = false;
  void done.finally(() => (finished = true)).catch(() => {});
  while (!finished) {
    peak = Math.max(peak, p.rss() ?? 0);
    await Bun.sleep(10);
  }
  await done;
  return Math.max(peak, p.rss() ?? 0);
}

export function rssOf(pid: number): number | null {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Pids of live processes whose command line contains `marker` (zombies excluded). */
export function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const cmdline = readFileSync(`/proc/${name}/cmdline`, "utf8");
      if (!cmdline.includes(marker)) continue;
      const state = /^State:\s+(\S)/m.exec(readFileSync(`/proc/${name}/status`, "utf8"))?.[1];
      if (state !== "Z") found.push(Number(name));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

/** Polls until no live process carries `marker`; returns what is left when time runs out. */
export async function waitNoProcesses(marker: string, timeoutMs = 5000): Promise<number[]> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const left = processesWith(marker);
    if (left.length === 0 || performance.now() > deadline) return left;
    await Bun.sleep(20);
  }
}

/** Lines of a JSONL file, parsed. */
export function readJsonl(file: string): Rec[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Rec);
}
