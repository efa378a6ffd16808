/**
 * Shared pieces of the benchmarks: where pion and the reference live, temp homes pointing both at a
 * local fake provider, a cheap stdout watcher, peak memory, statistics and a table printer.
 *
 * Peak memory: every child runs under `/usr/bin/time -f %M` (ru_maxrss from wait4 in a small
 * parent: the process's VmHWM, folded with any children it reaped). Bun's own
 * `Subprocess.resourceUsage().maxRSS` is NOT used: Bun forks, and Linux folds the pre-exec copy
 * of the (large) bench process into the child's ru_maxrss. Without /usr/bin/time, VmHWM is
 * polled from /proc/<pid>/status every 10 ms and the last value read is used.
 */
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { atMostRef, type Stat, stat } from "./stats.ts";

export { type Stat, stat } from "./stats.ts";

export const ROOT = resolve(import.meta.dir, "..");
export const PION_BIN = process.env.PION_BENCH_BIN ?? join(ROOT, "dist/pion");
const DEFAULT_REF = "/work/ref/node_modules/@earendil-works/pi-coding-agent/dist/cli.js";
const refSetting = process.env.PION_BENCH_REF ?? DEFAULT_REF;
/** Path to the reference's cli.js, or undefined when it is not installed (or PION_BENCH_REF=none). */
export const REF_CLI = refSetting !== "none" && existsSync(refSetting) ? refSetting : undefined;

export type Agent = "pion" | "ref";

const TIME_BIN = process.env.BENCH_NO_TIME ? undefined : ["/usr/bin/time", "/bin/time"].find((p) => existsSync(p));
export const PEAK_METHOD = TIME_BIN
  ? `ru_maxrss via ${TIME_BIN} -f %M (adds ~1 ms of fork/exec to spawn timings)`
  : "VmHWM polled from /proc/<pid>/status every 10 ms";
let peakSeq = 0;

/** Wrap argv so the child's peak RSS can be read after it exits. */
export function measured(argv: string[]): { argv: string[]; attach(pid: number): void; peak(): number } {
  if (TIME_BIN) {
    const file = join(tmpdir(), `bench-peak-${process.pid}-${++peakSeq}.txt`);
    return {
      argv: [TIME_BIN, "-f", "%M", "-o", file, ...argv],
      attach() {},
      peak() {
        try {
          const lines = readFileSync(file, "utf8").trim().split("\n");
          rmSync(file, { force: true });
          return Number(lines[lines.length - 1]) * 1024;
        } catch {
          return Number.NaN;
        }
      },
    };
  }
  let hwm = Number.NaN;
  let timer: Timer | undefined;
  const poll = (pid: number) => {
    try {
      const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      if (m) hwm = Number(m[1]) * 1024;
    } catch {
      clearInterval(timer);
    }
  };
  return {
    argv,
    attach(pid) {
      poll(pid);
      timer = setInterval(() => poll(pid), 10);
    },
    peak() {
      clearInterval(timer);
      return hwm;
    },
  };
}

export function agents(): Agent[] {
  if (!existsSync(PION_BIN)) {
    console.error(`bench: ${PION_BIN} not found; run \`bun run build\` first`);
    process.exit(2);
  }
  return REF_CLI ? ["pion", "ref"] : ["pion"];
}

/** Iterations: BENCH_ITER overrides the script's default. */
export const iterations = (dflt: number): number => Number(process.env.BENCH_ITER ?? dflt) || dflt;

export interface Sandbox {
  agent: Agent;
  root: string;
  home: string;
  cwd: string;
  env: Record<string, string>;
  /** argv to run the agent with these arguments. */
  cmd(args: string[]): string[];
  cleanup(): void;
}

const MODEL = {
  id: "fake-model",
  name: "fake-model",
  reasoning: false,
  input: ["text"],
  contextWindow: 200000,
  maxTokens: 8192,
  cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
};

/** A temp home and project folder for one agent, with models.json pointing provider "fake" at `baseUrl`. */
export function sandbox(agent: Agent, baseUrl = "http://127.0.0.1:9"): Sandbox {
  const root = mkdtempSync(join(tmpdir(), `bench-${agent}-`));
  const home = join(root, "home");
  const cwd = join(root, "project");
  mkdirSync(cwd, { recursive: true });
  const models = JSON.stringify({
    providers: { fake: { baseUrl, api: "anthropic-messages", apiKey: "test-key", models: [MODEL] } },
  });
  // The agent's temp files (a long bash run keeps its full output there) go with the sandbox.
  const tmp = join(root, "tmp");
  mkdirSync(tmp, { recursive: true });
  const env: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: home, LANG: "C.UTF-8", TMPDIR: tmp };
  let cmd: (args: string[]) => string[];
  if (agent === "pion") {
    const pionHome = join(home, ".pion");
    mkdirSync(pionHome, { recursive: true });
    writeFileSync(join(pionHome, "models.json"), models);
    env.PION_HOME = pionHome;
    cmd = (args) => [PION_BIN, ...args];
  } else {
    const dir = join(home, ".pi/agent");
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "models.json"), models);
    Object.assign(env, { PI_CODING_AGENT_DIR: dir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" });
    cmd = (args) => [process.execPath, REF_CLI!, ...args];
  }
  return { agent, root, home, cwd, env, cmd, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

export const MODEL_ARGS = ["--provider", "fake", "--model", "fake-model"];

export interface Child {
  proc: Subprocess<"pipe", "pipe", "pipe">;
  out: Out;
  stderr: Promise<string>;
  send(line: string): void;
  /** Close stdin, wait for exit; returns exit code and peak RSS in bytes. */
  finish(timeoutMs?: number): Promise<{ code: number | null; peak: number }>;
}

/** keepLines: true keeps every stdout line, a string only lines containing it (others are never decoded). */
export function spawnAgent(box: Sandbox, args: string[], opts: { keepLines?: boolean | string } = {}): Child {
  const m = measured(box.cmd(args));
  const proc = Bun.spawn(m.argv, {
    cwd: box.cwd,
    env: box.env,
    stdin: "pipe",
    stdout: "pipe",
    stderr: "pipe",
  });
  m.attach(proc.pid);
  const out = new Out(proc.stdout, opts.keepLines ?? true);
  const stderr = new Response(proc.stderr).text();
  return {
    proc,
    out,
    stderr,
    send(line) {
      try {
        proc.stdin.write(line);
        proc.stdin.flush();
      } catch {} // the child exited; the caller sees stdout end
    },
    async finish(timeoutMs = 120_000) {
      try {
        proc.stdin.end();
      } catch {}
      const timer = setTimeout(() => proc.kill("SIGKILL"), timeoutMs);
      const code = await proc.exited;
      clearTimeout(timer);
      await out.done;
      return { code, peak: m.peak() };
    },
  };
}

/** Run to completion (one-shot modes): wall time from spawn to exit, peak RSS, stdout. */
export async function runToExit(box: Sandbox, args: string[]) {
  const m = measured(box.cmd(args));
  const t0 = performance.now();
  const proc = Bun.spawn(m.argv, { cwd: box.cwd, env: box.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  m.attach(proc.pid);
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  const ms = performance.now() - t0;
  return { ms, code, stdout, stderr, peak: m.peak() };
}

/**
 * Reads a child's stdout as cheaply as possible: counts bytes and newlines always, splits into
 * lines only when asked (the streaming and pipelined benches must not make the reader the bottleneck).
 */
export class Out {
  bytes = 0;
  newlines = 0;
  readonly lines: string[] = [];
  readonly done: Promise<void>;
  private pending: Uint8Array[] = [];
  private waiters: { test: () => boolean; resolve: () => void }[] = [];
  private markers: { needle: Buffer; carry: Buffer; resolve: (at: number) => void }[] = [];
  private dec = new TextDecoder();

  private filter: Buffer | undefined;

  constructor(stream: ReadableStream<Uint8Array>, private keepLines: boolean | string) {
    if (typeof keepLines === "string") this.filter = Buffer.from(keepLines);
    this.done = this.pump(stream);
  }

  private async pump(stream: ReadableStream<Uint8Array>): Promise<void> {
    for await (const chunk of stream) {
      const buf = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      this.bytes += buf.length;
      let i = buf.indexOf(10);
      let last = -1;
      while (i !== -1) {
        this.newlines++;
        last = i;
        i = buf.indexOf(10, i + 1);
      }
      if (this.keepLines) this.split(buf, last);
      for (const m of this.markers) {
        const hay = m.carry.length ? Buffer.concat([m.carry, buf]) : buf;
        if (hay.indexOf(m.needle) !== -1) {
          m.resolve(performance.now());
          m.needle = Buffer.alloc(0);
        } else m.carry = Buffer.from(hay.subarray(Math.max(0, hay.length - m.needle.length)));
      }
      this.markers = this.markers.filter((m) => m.needle.length > 0);
      this.check();
    }
    this.check();
    for (const w of this.waiters) w.resolve();
  }

  private split(buf: Buffer, last: number): void {
    if (last === -1) {
      this.pending.push(Buffer.from(buf));
      return;
    }
    const head = this.pending.length ? Buffer.concat([...this.pending, buf.subarray(0, last)]) : buf.subarray(0, last);
    this.pending = last + 1 < buf.length ? [Buffer.from(buf.subarray(last + 1))] : [];
    if (!this.filter) {
      for (const line of this.dec.decode(head).split("\n")) this.lines.push(line);
      return;
    }
    for (let start = 0; start <= head.length; ) {
      let end = head.indexOf(10, start);
      if (end === -1) end = head.length;
      const hit = head.indexOf(this.filter, start);
      if (hit !== -1 && hit < end) this.lines.push(this.dec.decode(head.subarray(start, end)));
      start = end + 1;
    }
  }

  private check(): void {
    this.waiters = this.waiters.filter((w) => (w.test() ? (w.resolve(), false) : true));
  }

  /** Resolves when `test` holds (or stdout ends). */
  until(test: () => boolean): Promise<void> {
    if (test()) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ test, resolve }));
  }

  /** Resolves with performance.now() at the chunk where `needle` first appears from now on. */
  marker(needle: string): Promise<number> {
    return new Promise((resolve) => this.markers.push({ needle: Buffer.from(needle), carry: Buffer.alloc(0), resolve }));
  }

  /** The first line (index >= from) containing `needle`, waiting for it. */
  async line(needle: string | string[], from = 0): Promise<{ line: string; index: number; at: number }> {
    const needles = typeof needle === "string" ? [needle] : needle;
    let found = -1;
    let scanned = from;
    await this.until(() => {
      for (; scanned < this.lines.length; scanned++) {
        const l = this.lines[scanned]!;
        if (needles.every((n) => l.includes(n))) {
          found = scanned;
          return true;
        }
      }
      return false;
    });
    if (found < 0) throw new Error(`stdout ended before a line containing ${needle}`);
    return { line: this.lines[found]!, index: found, at: performance.now() };
  }
}

/** Send a command with an id and wait for its response line; returns ms and the parsed response. */
export async function request(child: Child, cmd: Record<string, unknown>, id: string, timeoutMs = 60_000) {
  const from = child.out.lines.length;
  const t0 = performance.now();
  const p = child.out.line([`"id":"${id}"`, `"type":"response"`], from);
  child.send(`${JSON.stringify({ ...cmd, id })}\n`);
  let timer: Timer | undefined;
  const timeout = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs)));
  const r = await Promise.race([p.catch(() => undefined), timeout]);
  clearTimeout(timer);
  if (!r) return { ms: Number.NaN, res: { success: false, error: "no response (timeout or exit)" }, bytes: 0 };
  const ms = performance.now() - t0;
  // biome-ignore lint: arbitrary JSON
  let parsed: any;
  try {
    parsed = JSON.parse(r.line);
  } catch {
    parsed = { success: false, error: `unparsable response (${r.line.length} chars)` };
  }
  return { ms, res: parsed, bytes: r.line.length };
}

export function copyInto(src: string, dir: string, name: string): string {
  mkdirSync(dir, { recursive: true });
  const dst = join(dir, name);
  copyFileSync(src, dst);
  return dst;
}

// ---- statistics and printing ----

export type Unit = "ms" | "MB" | "/s" | "B" | "x" | "%" | "n";

export function fmt(x: number, unit: Unit): string {
  if (!Number.isFinite(x)) return "-";
  switch (unit) {
    case "ms":
      return x >= 1000 ? `${(x / 1000).toFixed(2)} s` : x >= 100 ? `${x.toFixed(0)} ms` : `${x.toFixed(1)} ms`;
    case "MB":
      return `${(x / 1048576).toFixed(1)} MB`;
    case "/s":
      return x >= 10000 ? `${Math.round(x).toLocaleString("en-US")}/s` : `${x.toFixed(0)}/s`;
    case "B":
      return `${x.toFixed(1)} B`;
    case "x":
      return `${x.toFixed(2)}×`;
    case "%":
      return `${(x * 100).toFixed(1)}%`;
    case "n":
      return Math.round(x).toLocaleString("en-US");
  }
}

const cell = (s: Stat | undefined, unit: Unit, note?: string) => {
  if (note) return note;
  if (!s) return "-";
  if (s.n === 1 || s.min === s.max) return fmt(s.median, unit);
  return `${fmt(s.median, unit)} (${fmt(s.min, unit)}–${fmt(s.max, unit)})`;
};

export interface Row {
  metric: string;
  unit: Unit;
  pion: number[];
  ref?: number[];
  /** Shown instead of figures (e.g. "not implemented", "fails"). */
  pionNote?: string;
  refNote?: string;
  goal?: string;
  /** For a goal other than "≤ ref": whether pion's figures meet it (shown with `verdicts`). */
  goalMet?: (pion: number[]) => boolean;
}

/** Whether a row's goal is met: "≤ ref" by stats.ts' atMostRef, any other goal by its `goalMet`. */
function verdict(r: Row, p: Stat | undefined): string {
  if (r.goalMet) return r.goalMet(r.pion) ? "met" : "**not met**";
  if (r.goal !== "≤ ref" || !p) return "";
  if (r.refNote) return `met (reference: ${r.refNote})`;
  return atMostRef(r.pion, r.ref ?? []);
}

/**
 * A markdown table: median (min–max) per agent and the ratio pion/reference of the medians;
 * with `verdicts`, a column saying whether each goal is met ("≤ ref": stats.ts, atMostRef; any
 * other goal by the row's `goalMet`).
 */
export function printTable(title: string, rows: Row[], opts: { verdicts?: boolean } = {}): void {
  const withRef = REF_CLI !== undefined;
  const verdicts = opts.verdicts === true && withRef;
  console.log(`\n### ${title}\n`);
  const head = ["metric", "pion", ...(withRef ? ["reference", "pion/ref"] : []), "goal", ...(verdicts ? ["verdict"] : [])];
  console.log(`| ${head.join(" | ")} |`);
  console.log(`|${head.map(() => "---").join("|")}|`);
  for (const r of rows) {
    const p = r.pionNote ? undefined : stat(r.pion);
    const q = r.refNote || !r.ref ? undefined : stat(r.ref);
    const ratio = p && q && q.median !== 0 ? fmt(p.median / q.median, "x") : "-";
    const cols = [r.metric, cell(p, r.unit, r.pionNote), ...(withRef ? [cell(q, r.unit, r.refNote), ratio] : []), r.goal ?? ""];
    if (verdicts) cols.push(verdict(r, p));
    console.log(`| ${cols.join(" | ")} |`);
  }
}

export function header(name: string, iters: number): void {
  console.log(`\n## ${name}: ${iters} iteration(s), pion ${PION_BIN}${REF_CLI ? `, reference ${REF_CLI}` : ", reference not found"}`);
}

export const sleep = (ms: number) => Bun.sleep(ms);
