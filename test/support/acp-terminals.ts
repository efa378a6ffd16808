/**
 * An editor's terminals for the ACP test client: terminal/* requests really run the command
 * (Bun.spawn, its own process group, exactly the environment asked for), keep its output
 * within `outputByteLimit` as the schema says (dropping the beginning), and record every call.
 */
import type * as acp from "@agentclientprotocol/sdk";

interface Running {
  proc: ReturnType<typeof Bun.spawn>;
  output: string;
  truncated: boolean;
  /** Resolves once the process exited and its pipes were read to the end. */
  done: Promise<acp.TerminalExitStatus>;
}

export class FakeTerminals {
  /** terminal/* requests in arrival order. */
  readonly calls: { method: string; params: { terminalId?: string } & Record<string, unknown> }[] = [];
  private readonly running = new Map<string, Running>();
  private next = 0;

  create(params: acp.CreateTerminalRequest): acp.CreateTerminalResponse {
    this.calls.push({ method: "terminal/create", params });
    const terminalId = `term-${++this.next}`;
    const env = Object.fromEntries((params.env ?? []).map((v) => [v.name, v.value]));
    const proc = Bun.spawn([params.command, ...(params.args ?? [])], {
      cwd: params.cwd ?? undefined,
      env,
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      detached: true,
    });
    const t: Running = { proc, output: "", truncated: false, done: Promise.resolve({}) };
    const limit = params.outputByteLimit ?? Number.POSITIVE_INFINITY;
    const read = async (stream: ReadableStream<Uint8Array>) => {
      const dec = new TextDecoder();
      for await (const chunk of stream) {
        t.output += dec.decode(chunk, { stream: true });
        if (Buffer.byteLength(t.output) > limit) {
          t.output = Buffer.from(t.output).subarray(-limit).toString("utf8").replace(/^\uFFFD+/, "");
          t.truncated = true;
        }
      }
    };
    t.done = Promise.all([read(proc.stdout as ReadableStream<Uint8Array>), read(proc.stderr as ReadableStream<Uint8Array>), proc.exited]).then(() => ({
      exitCode: proc.signalCode ? null : proc.exitCode,
      signal: proc.signalCode ? String(proc.signalCode) : null,
    }));
    this.running.set(terminalId, t);
    return { terminalId };
  }

  async output(params: acp.TerminalOutputRequest): Promise<acp.TerminalOutputResponse> {
    this.calls.push({ method: "terminal/output", params });
    const t = this.get(params.terminalId);
    const exitStatus = t.proc.exitCode !== null || t.proc.signalCode ? await t.done : null;
    return { output: t.output, truncated: t.truncated, exitStatus };
  }

  async waitForExit(params: acp.WaitForTerminalExitRequest): Promise<acp.WaitForTerminalExitResponse> {
    this.calls.push({ method: "terminal/wait_for_exit", params });
    return await this.get(params.terminalId).done;
  }

  kill(params: acp.KillTerminalRequest): acp.KillTerminalResponse {
    this.calls.push({ method: "terminal/kill", params });
    this.killGroup(params.terminalId);
    return {};
  }

  release(params: acp.ReleaseTerminalRequest): acp.ReleaseTerminalResponse {
    this.calls.push({ method: "terminal/release", params });
    this.killGroup(params.terminalId);
    this.running.delete(params.terminalId);
    return {};
  }

  /** What the user does with the editor's stop button: ends the command, not through pion. */
  killByUser(terminalId: string): void {
    this.killGroup(terminalId);
  }

  private killGroup(terminalId: string): void {
    const t = this.get(terminalId);
    try {
      process.kill(-t.proc.pid, "SIGKILL");
    } catch {
      // already exited
    }
  }

  private get(terminalId: string): Running {
    const t = this.running.get(terminalId);
    if (!t) throw new Error(`unknown terminal ${terminalId}`);
    return t;
  }
}
