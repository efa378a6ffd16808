import type { BashExecutionMessage } from "../store/entries.ts";
import { runShell, type ShellExec, type ShellGuard } from "../tools/shell.ts";
import { PionError } from "../util/errors.ts";

/** What a host command did, as the bashExecution message the session records. */
export function bashExecutionMessage(
  command: string,
  excludeFromContext: boolean,
  r: { output: string; exitCode?: number; cancelled: boolean; truncated: boolean; fullOutputPath?: string | null },
): BashExecutionMessage {
  const message: BashExecutionMessage = {
    role: "bashExecution",
    command,
    output: r.output,
    exitCode: r.exitCode,
    cancelled: r.cancelled,
    truncated: r.truncated,
    timestamp: Date.now(),
  };
  if (r.fullOutputPath) message.fullOutputPath = r.fullOutputPath;
  if (excludeFromContext) message.excludeFromContext = true;
  return message;
}

/** The host's own shell (the `bash` command): one command at a time, abortable. */
export class HostShell {
  private running: AbortController | undefined;

  constructor(
    private cwd: string,
    private guard?: ShellGuard,
    /** The shell and the line put before each command (settings `shellPath`, `shellCommandPrefix`), as for the bash tool. */
    private shell: { path?: string; commandPrefix?: string } = {},
  ) {}

  /**
   * Run `command` and describe it as the bashExecution message the session records.
   * `onBytes` gets the output as it arrives, masked (a reused buffer: copy what you keep);
   * `exec` runs it elsewhere (an extension's `user_bash` operations) instead of a local bash.
   */
  async run(
    command: string,
    excludeFromContext: boolean,
    onBytes: (chunk: Uint8Array, final: boolean) => void | Promise<void>,
    exec?: ShellExec,
  ): Promise<BashExecutionMessage> {
    if (this.running) throw new PionError("A bash command is already running", "busy");
    const controller = new AbortController();
    this.running = controller;
    try {
      const full = this.shell.commandPrefix ? `${this.shell.commandPrefix}\n${command}` : command;
      const r = await runShell(full, { cwd: this.cwd, signal: controller.signal, onBytes, guard: this.guard, exec, shellPath: this.shell.path });
      return bashExecutionMessage(command, excludeFromContext, { ...r, exitCode: r.exitCode ?? undefined, truncated: r.truncation.truncated });
    } finally {
      this.running = undefined;
    }
  }

  abort(): void {
    this.running?.abort();
  }
}
