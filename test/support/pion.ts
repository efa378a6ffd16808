import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { Subprocess } from "bun";
import { jsonLines } from "../../src/rpc/jsonl.ts";
import { RecordLog, type Rec } from "./record-log.ts";

const ROOT = resolve(import.meta.dir, "../..");
export const SOURCE_ENTRY = join(ROOT, "src/cli.ts");
export const BINARY = join(ROOT, "dist/pion");

export type { Rec } from "./record-log.ts";

export interface SpawnOptions {
  args?: string[];
  home?: string;
  cwd?: string;
  env?: Record<string, string>;
  /** Run dist/pion instead of the source entry (default: PION_E2E_BINARY=1 in the environment). */
  binary?: boolean;
}

/** PION_E2E_BINARY=1 runs every e2e test that does not choose against the compiled binary (.ci/run does, for a second pass). */
const binaryByDefault = process.env.PION_E2E_BINARY === "1";
export const entryCommand = (binary?: boolean): string[] => ((binary ?? binaryByDefault) ? [BINARY] : ["bun", SOURCE_ENTRY]);

/**
 * A bash command that runs until the test releases it (`releaseGate(cwd)` creates `go` in
 * its cwd): a window for steering and queueing that no machine load can close, unlike a sleep.
 */
export const GATED_COMMAND = "while [ ! -e go ]; do sleep 0.02; done";
export const releaseGate = (cwd: string): void => writeFileSync(join(cwd, "go"), "");

/** A temp folder pair: PION_HOME and a project cwd. */
export function tempDirs(): { home: string; cwd: string } {
  const root = mkdtempSync(join(tmpdir(), "pion-e2e-"));
  const home = join(root, "home");
  const cwd = join(root, "project");
  mkdirSync(home, { recursive: true });
  mkdirSync(cwd, { recursive: true });
  return { home, cwd };
}

/** models.json with a "fake" provider for each API, all pointing at `baseUrl`. */
export function writeFakeModels(home: string, baseUrl: string, extra: Record<string, unknown> = {}): void {
  const model = (id: string, reasoning: boolean) => ({
    id,
    name: id,
    reasoning,
    input: ["text", "image"],
    contextWindow: 200000,
    maxTokens: 8192,
    cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 },
  });
  const providers = {
    fake: { baseUrl, api: "anthropic-messages", apiKey: "test-key", models: [model("fake-model", true), model("fake-plain", false)] },
    "fake-openai": { baseUrl: `${baseUrl}/v1`, api: "openai-completions", apiKey: "test-key", models: [model("fake-chat", true)] },
    "fake-responses": { baseUrl: `${baseUrl}/v1`, api: "openai-responses", apiKey: "test-key", models: [model("fake-resp", true)] },
    ...extra,
  };
  writeFileSync(join(home, "models.json"), JSON.stringify({ providers }, null, 2));
}

/** A models.json provider with one model, "tiny", whose 4000-token window a test fills quickly. */
export const tinyProvider = (baseUrl: string, api = "anthropic-messages") => ({
  baseUrl,
  api,
  apiKey: "k",
  models: [{ id: "tiny", reasoning: false, contextWindow: 4000, maxTokens: 1000, cost: { input: 1, output: 2 } }],
});

export function writeSettings(home: string, settings: Record<string, unknown>): void {
  writeFileSync(join(home, "settings.json"), JSON.stringify(settings));
}

/** A running pion with its stdout parsed into records as they arrive. */
export class Pion {
  private readonly log = new RecordLog(() => `stderr: ${this.stderr.slice(-1000)}`);
  get records(): Rec[] {
    return this.log.records;
  }
  stderr = "";
  private nextId = 0;
  readonly exited: Promise<number>;
  private proc: Subprocess<"pipe", "pipe", "pipe">;
  private stdoutDone: Promise<void>;

  constructor(opts: SpawnOptions = {}) {
    const dirs = opts.home && opts.cwd ? { home: opts.home, cwd: opts.cwd } : tempDirs();
    const cmd = entryCommand(opts.binary);
    this.proc = Bun.spawn([...cmd, ...(opts.args ?? ["--mode", "rpc"])], {
      cwd: opts.cwd ?? dirs.cwd,
      env: { ...process.env, PION_HOME: opts.home ?? dirs.home, ...opts.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    this.stdoutDone = this.readStdout();
    void this.readStderr();
    this.exited = this.proc.exited.then(async (code) => {
      await this.stdoutDone;
      return code;
    });
  }

  get pid(): number {
    return this.proc.pid;
  }

  /** Records that do not validate against the published wire schemas (schemas/*.json). */
  readonly wireIssues: string[] = [];

  private async readStdout(): Promise<void> {
    // Imported here: wire-check.ts imports this module.
    const { recordProblems } = await import("./wire-check.ts");
    for await (const rec of jsonLines(this.proc.stdout)) {
      if ("error" in rec) throw new Error(rec.error);
      if (rec.line === "") continue;
      let parsed: Rec;
      try {
        parsed = JSON.parse(rec.line);
      } catch {
        throw new Error(`pion wrote a non-JSON line to stdout: ${rec.line.slice(0, 200)}`);
      }
      for (const problem of recordProblems(parsed)) this.wireIssues.push(`${String(parsed.type)}: ${problem}`);
      this.log.add(parsed);
    }
  }

  private async readStderr(): Promise<void> {
    const dec = new TextDecoder();
    for await (const chunk of this.proc.stderr) this.stderr += dec.decode(chunk, { stream: true });
  }

  /** Write raw bytes or text to stdin. */
  write(data: string | Uint8Array): void {
    this.proc.stdin.write(data);
    this.proc.stdin.flush();
  }

  send(cmd: Rec): void {
    this.write(`${JSON.stringify(cmd)}\n`);
  }

  /** Send a command (an id is added when missing) and wait for its response. */
  async request(cmd: Rec): Promise<Rec> {
    const id = (cmd.id as string | undefined) ?? `t${++this.nextId}`;
    const from = this.records.length;
    const p = this.waitFor((r) => r.type === "response" && r.id === id, from);
    this.send({ ...cmd, id });
    return p;
  }

  /** The first record (at index >= from) matching `pred`, waiting for it if needed. */
  waitFor(pred: string | ((r: Rec) => boolean), from = 0, timeoutMs = 15000): Promise<Rec> {
    return this.log.waitFor(pred, from, timeoutMs);
  }


  /** Types of records from index `from`, for asserting order. */
  types(from = 0): string[] {
    return this.records.slice(from).map((r) => (r.type === "message_update" ? `message_update:${r.assistantMessageEvent?.type}` : r.type));
  }

  /** Close stdin and wait for exit. Fails when pion wrote a record its own schemas reject. */
  async close(): Promise<number> {
    this.proc.stdin.end();
    const code = await this.exited;
    if (this.wireIssues.length > 0) throw new Error(`records outside the wire schemas:\n${this.wireIssues.slice(0, 10).join("\n")}`);
    return code;
  }

  kill(signal: NodeJS.Signals | number = "SIGKILL"): void {
    this.proc.kill(signal);
  }
}

/** Run pion to completion with the given stdin (one-shot modes, bad flags). */
export async function runPion(args: string[], opts: { home: string; cwd: string; stdin?: string; env?: Record<string, string>; binary?: boolean }) {
  const cmd = entryCommand(opts.binary);
  const proc = Bun.spawn([...cmd, ...args], {
    cwd: opts.cwd,
    env: { ...process.env, PION_HOME: opts.home, ...opts.env },
    stdin: opts.stdin === undefined ? "ignore" : new TextEncoder().encode(opts.stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

/** Sends a prompt with an id and resolves with the records from it to its prompt_result. */
export async function promptToResult(p: Pion, message: string, timeoutMs = 60_000): Promise<Rec[]> {
  const from = p.records.length;
  const id = `p${from}`;
  p.send({ id, type: "prompt", message });
  await p.waitFor((r) => r.type === "prompt_result" && r.id === id, from, timeoutMs);
  return p.records.slice(from);
}

/**
 * pion (source or dist/pion, as the other helpers) with stdout and stderr on real pipes the
 * caller reads; stdin ignored unless given (bytes, or "pipe" to write to it).
 */
export function spawnPiped<In extends Uint8Array | "pipe" | "ignore" = "ignore">(
  args: string[],
  dirs: { home: string; cwd: string },
  o: { env?: Record<string, string>; stdin?: In } = {},
) {
  return Bun.spawn([...entryCommand(), ...args], {
    cwd: dirs.cwd,
    env: { ...process.env, ...o.env, PION_HOME: dirs.home },
    stdin: (o.stdin ?? "ignore") as In,
    stdout: "pipe",
    stderr: "pipe",
  });
}
