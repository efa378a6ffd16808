import { closeSync, existsSync, fstatSync, openSync, readSync } from "node:fs";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/bash.md" with { type: "text" };
import { defineParams } from "./params.ts";
import { definedEnv, runShell, type ShellExec, type ShellGuard, type ShellResult, type ShellSandbox } from "./shell.ts";
import type { Tool, ToolResult } from "./tool.ts";
import { formatSize, type Truncation } from "./truncate.ts";

const Params = v.object({
  command: v.pipe(v.string(), v.description("The bash command to run")),
  timeout: v.optional(
    v.pipe(v.number(), v.minValue(0, "timeout must be positive"), v.description("Timeout in seconds (none by default)")),
  ),
});
export type BashArgs = v.InferOutput<typeof Params>;

export interface BashDetails {
  truncation: Truncation | null;
  fullOutputPath: string | null;
}

export interface BashToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** The commands' environment and output masking (pion's credential guard). */
  guard?: ShellGuard;
  /** Put before every command, on its own line (shell set-up; settings `shellCommandPrefix`). */
  commandPrefix?: string;
  /** The local shell (settings `shellPath`); default `bash`. */
  shellPath?: string;
  /** Adjusts the command, its folder and its environment just before it starts. */
  spawnHook?: (spawn: BashSpawn) => BashSpawn;
  /** Runs the commands elsewhere (e.g. over ssh) instead of a local bash. */
  exec?: ShellExec;
  /** Runs the local commands inside pion's sandbox (not those `exec` runs elsewhere). */
  sandbox?: BashSandbox;
}

/** The sandbox as the bash tool uses it (src/sandbox/sandbox.ts). */
export interface BashSandbox extends ShellSandbox {
  /** Whether it can start here (probed once), and if not why and what to do. */
  probe(): Promise<{ ok: true } | { ok: false; why: string; remedy: string }>;
  /** One line for the model after a command the sandbox may have refused. */
  note(): string;
  /** Whether the host lets a command the sandbox refused run again outside it (ask mode only). */
  rerunOutside?(callId: string, command: string, signal: AbortSignal): Promise<boolean>;
}

/** What a command prints when the sandbox stopped it (a write, a connection, a socket). */
const REFUSED = /Read-only file system|Permission denied|Operation not permitted|Network is unreachable|Could not resolve host|Temporary failure in name resolution|Name or service not known|Connection refused/i;

export interface BashSpawn {
  command: string;
  cwd: string;
  env: Record<string, string>;
}

function note(t: Truncation, fullOutputPath: string | null): string {
  const first = t.totalLines - t.outputLines + 1;
  const shown = t.partialLine
    ? `Showing the last ${formatSize(t.outputBytes)} of line ${t.totalLines}`
    : `Showing lines ${first}-${t.totalLines} of ${t.totalLines}`;
  const limit = t.truncatedBy === "bytes" ? ` (${formatSize(t.maxBytes)} limit)` : "";
  return `[${shown}${limit}. Full output: ${fullOutputPath ?? "not saved"}]`;
}

/**
 * bash's structuredContent, with the reference's keys: the command's whole output (stdout and
 * stderr as they interleaved, masked like the text), not the tail the model sees.
 */
export interface BashStructured {
  /** Up to STRUCTURED_MAX_BYTES; beyond that its head and tail around an omission marker. */
  output: string;
  /** Whether `output` left out the middle. */
  truncated: boolean;
  /** The file holding all of it, when `output` left out the middle. */
  full_output_path?: string;
  exit_code: number;
  /** Rounded to a tenth of a second. */
  wall_time_seconds: number;
}

export const STRUCTURED_MAX_BYTES = 1024 * 1024;

/** Only for a command that ended with an exit code: an abort, a timeout or a signal gives none, as in the reference. */
export function bashStructured(r: ShellResult, wallMs: number): BashStructured | undefined {
  if (r.cancelled || r.timedOut || r.exitCode === null) return undefined;
  // Without a full-output file the output fitted the model's limits: the text is all of it.
  const full = r.fullOutputPath ? readClipped(r.fullOutputPath, STRUCTURED_MAX_BYTES) : { text: r.output, clipped: false };
  return {
    output: full.text,
    truncated: full.clipped,
    ...(full.clipped && r.fullOutputPath ? { full_output_path: r.fullOutputPath } : {}),
    exit_code: r.exitCode,
    wall_time_seconds: Math.round(wallMs / 100) / 10,
  };
}

/**
 * The file's text when it has at most `maxBytes`; otherwise its first and last `maxBytes / 2`
 * bytes (cut at character boundaries) around `[... N bytes omitted ...]`, N counting the bytes left out.
 */
export function readClipped(path: string, maxBytes: number): { text: string; clipped: boolean } {
  const fd = openSync(path, "r");
  try {
    const size = fstatSync(fd).size;
    const read = (length: number, at: number) => {
      const buf = new Uint8Array(length);
      for (let got = 0; got < length; ) {
        const n = readSync(fd, buf, got, length - got, at + got);
        if (n === 0) return buf.subarray(0, got);
        got += n;
      }
      return buf;
    };
    if (size <= maxBytes) return { text: new TextDecoder().decode(read(size, 0)), clipped: false };
    const headBytes = Math.floor(maxBytes / 2);
    const tailBytes = maxBytes - headBytes;
    // A streaming decode holds back a character cut at the head's end; the tail skips continuation bytes.
    const head = new TextDecoder().decode(read(headBytes, 0), { stream: true });
    const tail = read(tailBytes, size - tailBytes);
    let start = 0;
    while (start < tail.length && (tail[start]! & 0xc0) === 0x80) start++;
    const omitted = size - headBytes - tailBytes;
    return { text: `${head}\n\n[... ${omitted} bytes omitted ...]\n\n${new TextDecoder().decode(tail.subarray(start))}`, clipped: true };
  } finally {
    closeSync(fd);
  }
}

export function formatShellResult(r: ShellResult, timeoutSeconds?: number): ToolResult {
  const parts: string[] = [];
  if (r.truncation.truncated) parts.push(note(r.truncation, r.fullOutputPath));
  if (r.outputNotSaved) parts.push(r.outputNotSaved);
  let isError = false;
  if (r.cancelled) {
    parts.push("Command aborted");
    isError = true;
  } else if (r.timedOut) {
    parts.push(`Command timed out after ${timeoutSeconds} seconds`);
    isError = true;
  } else if (r.exitCode !== 0) {
    parts.push(`Command exited with code ${r.exitCode ?? "unknown (killed by a signal)"}`);
    isError = true;
  }
  const details: BashDetails = {
    truncation: r.truncation.truncated ? r.truncation : null,
    fullOutputPath: r.fullOutputPath,
  };
  // Plain output is passed through as printed; notes follow after a blank line.
  const body = r.output === "" ? "(no output)" : r.output;
  const text = parts.length === 0 ? body : [body.replace(/\n$/, ""), ...parts].join("\n\n");
  return { content: [{ type: "text", text }], details, isError };
}

/** The command, folder and environment a call starts with; without prefix or hook, the guard decides the environment. */
function prepareSpawn(command: string, cwd: string, o: BashToolOptions): { command: string; cwd: string; env?: Record<string, string> } {
  const full = o.commandPrefix ? `${o.commandPrefix}\n${command}` : command;
  if (!o.spawnHook) return { command: full, cwd };
  const env = o.guard?.childEnv() ?? definedEnv();
  const out = o.spawnHook({ command: full, cwd, env });
  if (!out || typeof out.command !== "string" || typeof out.cwd !== "string") throw new Error("The bash spawn hook returned no command and cwd");
  return { command: out.command, cwd: out.cwd, env: out.env ?? env };
}

export function createBashTool(options: BashToolOptions = {}): Tool<BashArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "bash",
    label: "Bash",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const spawn = prepareSpawn(args.command, options.cwd ?? ctx.cwd, options);
      // Elsewhere, the folder is the remote side's to check.
      if (!options.exec && !existsSync(spawn.cwd)) throw new Error(`Working directory does not exist: ${spawn.cwd}`);
      let sandbox = options.exec ? undefined : options.sandbox;
      if (sandbox) {
        const probe = await sandbox.probe();
        if (!probe.ok) {
          // Only the host may let a command run outside (the permission gate asked it).
          if (!ctx.sandboxWaived) throw new Error(`pion's sandbox cannot start here: ${probe.why}. The command did not run. (${probe.remedy})`);
          sandbox = undefined;
        }
      }
      // An empty partial result first, as the reference does: the host can show the tool as running.
      ctx.onUpdate?.({ content: [] });
      const run = (box: BashSandbox | undefined) => runShell(spawn.command, {
        cwd: spawn.cwd,
        env: spawn.env,
        exec: options.exec,
        callId: ctx.callId,
        sandbox: box,
        shellPath: options.shellPath,
        signal: ctx.signal,
        guard: options.guard,
        timeoutMs: args.timeout !== undefined ? args.timeout * 1000 : undefined,
        onTail: ctx.onUpdate
          ? (tail) => {
              const details: BashDetails = {
                truncation: tail.truncation.truncated ? tail.truncation : null,
                fullOutputPath: tail.fullOutputPath,
              };
              ctx.onUpdate?.({ content: [{ type: "text", text: tail.truncation.content }], details });
            }
          : undefined,
      });
      const timed = async (box: BashSandbox | undefined) => {
        const started = performance.now();
        const r = await run(box);
        return { r, structured: bashStructured(r, performance.now() - started) };
      };
      const withStructured = (t: ToolResult, structured: BashStructured | undefined): ToolResult =>
        structured ? { ...t, structuredContent: structured } : t;
      const { r: result, structured } = await timed(sandbox);
      const refused = sandbox !== undefined && result.exitCode !== 0 && !result.cancelled && !result.timedOut && REFUSED.test(result.output);
      if (refused && (await sandbox?.rerunOutside?.(ctx.callId, args.command, ctx.signal))) {
        const rerun = await timed(undefined);
        const again = formatShellResult(rerun.r, args.timeout);
        const text = again.content[0];
        if (text?.type === "text") text.text = `[ran again outside the sandbox, as the user allowed]\n${text.text}`;
        return withStructured(again, rerun.structured);
      }
      const formatted = formatShellResult(result, args.timeout);
      const note = refused ? (sandbox?.note() ?? "") : "";
      const first = formatted.content[0];
      if (note && first?.type === "text") first.text = `${first.text}\n\n${note}`;
      return withStructured(formatted, structured);
    },
  };
}
