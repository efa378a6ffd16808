import { existsSync } from "node:fs";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/bash.md" with { type: "text" };
import { defineParams } from "./params.ts";
import { runShell, type ShellGuard, type ShellResult } from "./shell.ts";
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

export function createBashTool(options: BashToolOptions = {}): Tool<BashArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "bash",
    label: "Bash",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const cwd = options.cwd ?? ctx.cwd;
      if (!existsSync(cwd)) throw new Error(`Working directory does not exist: ${cwd}`);
      // An empty partial result first, as the reference does: the host can show the tool as running.
      ctx.onUpdate?.({ content: [] });
      const result = await runShell(args.command, {
        cwd,
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
