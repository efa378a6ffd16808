import { existsSync } from "node:fs";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/bash.md" with { type: "text" };
import { defineParams } from "./params.ts";
import { definedEnv, runShell, type ShellExec, type ShellGuard, type ShellResult } from "./shell.ts";
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
  /** Put before every command, on its own line (shell set-up). */
  commandPrefix?: string;
  /** Adjusts the command, its folder and its environment just before it starts. */
  spawnHook?: (spawn: BashSpawn) => BashSpawn;
  /** Runs the commands elsewhere (e.g. over ssh) instead of a local bash. */
  exec?: ShellExec;
}

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

export function formatShellResult(r: ShellResult, timeoutSeconds?: number): ToolResult {
  const parts: string[] = [];
  if (r.truncation.truncated) parts.push(note(r.truncation, r.fullOutputPath));
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
      // An empty partial result first, as the reference does: the host can show the tool as running.
      ctx.onUpdate?.({ content: [] });
      const result = await runShell(spawn.command, {
        cwd: spawn.cwd,
        env: spawn.env,
        exec: options.exec,
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
      return formatShellResult(result, args.timeout);
    },
  };
}
