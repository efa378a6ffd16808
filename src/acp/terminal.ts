/**
 * The bash tool's commands in the editor's terminal (a client with `clientCapabilities.terminal`):
 * `terminal/create` runs `bash -c <command>` with pion's environment (the credential guard's,
 * keys removed), the user watches it in the editor, and pion reads its output and exit status
 * once it ended. A kill (abort, the tool's timeout) is `terminal/kill`; every terminal is
 * released after its command. What the model sees still passes pion's shell runner: its
 * masking, truncation and full-output file apply to the output read back.
 */
import type * as acp from "@agentclientprotocol/sdk";
import type { ShellExec } from "../tools/shell.ts";

/** What the editor keeps of a command's output (it drops the beginning beyond it); pion's full-output file holds at most this. */
export const TERMINAL_OUTPUT_LIMIT = 1024 * 1024;
/** How long an editor has to report the exit of a command pion killed before pion releases its terminal anyway. */
const KILL_GRACE_MS = 5000;

export class EditorTerminals {
  private readonly byCall = new Map<string, string>();
  /** Called when the terminal of tool call `callId` has been created, before its command's result. */
  onCreated: ((callId: string, terminalId: string) => void) | undefined;

  constructor(
    private readonly client: acp.AgentContext,
    private readonly sessionId: () => string,
  ) {}

  /** The terminal call `callId` ran in, if any, until `forget`. */
  terminalOf(callId: string): string | undefined {
    return this.byCall.get(callId);
  }

  forget(callId: string): void {
    this.byCall.delete(callId);
  }

  /** Resolves with the exit code (null: ended by a signal, or killed); rejects when the editor refuses the terminal. */
  readonly exec: ShellExec = async (command, cwd, { onData, signal, env, callId }) => {
    const sessionId = this.sessionId();
    const create: acp.CreateTerminalRequest = {
      sessionId,
      command: "bash",
      args: ["-c", command],
      cwd,
      env: Object.entries(env).map(([name, value]) => ({ name, value })),
      outputByteLimit: TERMINAL_OUTPUT_LIMIT,
    };
    const { terminalId } = await this.client.request("terminal/create", create);
    const ids: acp.TerminalOutputRequest = { sessionId, terminalId };
    if (callId !== undefined) {
      this.byCall.set(callId, terminalId);
      this.onCreated?.(callId, terminalId);
    }
    let killed = false;
    let grace: ReturnType<typeof setTimeout> | undefined;
    let giveUp = () => {};
    const gaveUp = new Promise<undefined>((resolve) => (giveUp = () => resolve(undefined)));
    const kill = () => {
      if (killed) return;
      killed = true;
      // An editor that never reports the exit of a killed command does not hold the call forever.
      void this.client.request("terminal/kill", ids).then(
        () => (grace = setTimeout(giveUp, KILL_GRACE_MS)),
        giveUp,
      );
    };
    signal.addEventListener("abort", kill, { once: true });
    if (signal.aborted) kill();
    try {
      const exited = this.client.request("terminal/wait_for_exit", ids);
      exited.catch(() => undefined); // once pion gave up on it, its answer has no one to go to
      const exit = await Promise.race([exited, gaveUp]);
      const out = await this.client.request("terminal/output", ids);
      const enc = new TextEncoder();
      if (out.truncated) onData(enc.encode(`[earlier output dropped: the editor's terminal keeps its last ${TERMINAL_OUTPUT_LIMIT} bytes]\n`));
      onData(enc.encode(out.output));
      const code = (exit ?? out.exitStatus)?.exitCode;
      return killed || typeof code !== "number" ? null : code;
    } finally {
      clearTimeout(grace);
      signal.removeEventListener("abort", kill);
      await this.client.request("terminal/release", ids).catch(() => undefined);
    }
  };
}
