/**
 * The MCP stdio transport on Bun.spawn: newline-delimited JSON-RPC on the child's stdin/stdout,
 * its stderr forwarded line by line to pion's stderr under the server's name. The child runs in
 * a process group of its own so that stopping it also stops what a wrapper (npx, uvx, a shell)
 * started; `killAll` ends every live group synchronously, for process exit.
 */
import type { Transport } from "@modelcontextprotocol/sdk/shared/transport.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";
import { log } from "../util/log.ts";

const LIVE = new Set<number>();

/** Sends `signal` to every MCP child group still running (used from a process `exit` handler). */
export function killAll(signal: NodeJS.Signals = "SIGTERM"): void {
  for (const pid of LIVE) {
    try {
      process.kill(-pid, signal);
    } catch {
      // the group is already gone
    }
  }
}

const MAX_LINE = 64 * 1024 * 1024;

export class BunStdioTransport implements Transport {
  onclose?: () => void;
  onerror?: (error: Error) => void;
  onmessage?: <T extends JSONRPCMessage>(message: T) => void;
  private proc?: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
  private closed = false;
  /** The tail of what the server wrote on stderr, for error messages. */
  stderrTail = "";

  constructor(
    private readonly o: {
      name: string;
      command: string;
      args: string[];
      env: Record<string, string>;
      cwd: string;
      /** Applied to what the server writes on stderr before pion shows or keeps it. */
      mask: (text: string) => string;
    },
  ) {}

  get pid(): number | undefined {
    return this.proc?.pid;
  }

  async start(): Promise<void> {
    let proc: ReturnType<typeof Bun.spawn<"pipe", "pipe", "pipe">>;
    try {
      proc = Bun.spawn([this.o.command, ...this.o.args], {
        cwd: this.o.cwd,
        env: this.o.env,
        stdin: "pipe",
        stdout: "pipe",
        stderr: "pipe",
        detached: true,
      });
    } catch (err) {
      throw new Error(`cannot start ${this.o.command}: ${err instanceof Error ? err.message : String(err)}`);
    }
    this.proc = proc;
    LIVE.add(proc.pid);
    void this.readStdout(proc.stdout);
    void this.readStderr(proc.stderr);
    void proc.exited.then((code) => {
      LIVE.delete(proc.pid);
      if (!this.closed) {
        this.closed = true;
        const tail = this.stderrTail.trim().split("\n").at(-1);
        this.onerror?.(new Error(`server process exited with code ${code}${tail ? `: ${tail}` : ""}`));
      }
      this.onclose?.();
    });
  }

  private async readStdout(stream: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for await (const chunk of stream) {
        buf += dec.decode(chunk, { stream: true });
        for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
          const line = buf.slice(0, nl).replace(/\r$/, "");
          buf = buf.slice(nl + 1);
          if (line.trim() === "") continue;
          let msg: JSONRPCMessage;
          try {
            msg = JSON.parse(line) as JSONRPCMessage;
          } catch {
            // Servers that print banners on stdout: not protocol, shown as diagnostics.
            log(`mcp ${this.o.name}`, `ignored non-JSON output: ${this.o.mask(line).slice(0, 200)}`);
            continue;
          }
          this.onmessage?.(msg);
        }
        if (buf.length > MAX_LINE) {
          this.onerror?.(new Error(`a message from the server exceeds ${MAX_LINE} bytes`));
          buf = "";
        }
      }
    } catch (err) {
      if (!this.closed) this.onerror?.(err instanceof Error ? err : new Error(String(err)));
    }
  }

  private async readStderr(stream: ReadableStream<Uint8Array>): Promise<void> {
    const dec = new TextDecoder();
    let buf = "";
    for await (const chunk of stream) {
      buf += dec.decode(chunk, { stream: true });
      for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
        const line = this.o.mask(buf.slice(0, nl));
        buf = buf.slice(nl + 1);
        this.stderrTail = (this.stderrTail + line + "\n").slice(-2000);
        process.stderr.write(`[mcp ${this.o.name}] ${line}\n`);
      }
    }
    if (buf) process.stderr.write(`[mcp ${this.o.name}] ${this.o.mask(buf)}\n`);
  }

  async send(message: JSONRPCMessage): Promise<void> {
    const proc = this.proc;
    if (!proc || this.closed) throw new Error("the server process is not running");
    proc.stdin.write(`${JSON.stringify(message)}\n`);
    await proc.stdin.flush();
  }

  /** Closes stdin, then SIGTERM to the group, then SIGKILL after a grace period. */
  async close(): Promise<void> {
    const proc = this.proc;
    if (!proc) return;
    this.closed = true;
    try {
      await proc.stdin.end();
    } catch {
      // already closed
    }
    const signal = (sig: NodeJS.Signals) => {
      try {
        process.kill(-proc.pid, sig);
      } catch {
        // gone
      }
    };
    const exited = proc.exited.then(() => true);
    if (!(await Promise.race([exited, Bun.sleep(200).then(() => false)]))) {
      signal("SIGTERM");
      if (!(await Promise.race([exited, Bun.sleep(2000).then(() => false)]))) signal("SIGKILL");
    } else signal("SIGTERM"); // children of a wrapper may outlive it
    await exited;
    LIVE.delete(proc.pid);
  }
}
