/**
 * The MCP servers of one session: started in the background, their tools offered to the model
 * from the moment they connect, status changes reported through `onStatus`. Nothing here
 * throws into pion: a broken server is a status with an error, and its tools answer errors.
 */
import { serverCredentials, type McpConfigError, type McpServerConfig } from "./config.ts";
import { McpConnection, type McpGuard, type McpServerStatus } from "./connection.ts";
import { authKey, McpAuthStore } from "./auth-store.ts";
import { createServerLog } from "./server-log.ts";
import { killAll } from "./stdio-transport.ts";
import { adaptServerTools, type McpTool } from "./tools.ts";

export interface McpManagerOptions {
  /**
   * The one guard of the process: stdio servers start with its `childEnv` plus their own
   * `env`; the servers' `${VAR}` credentials join it before any server starts; what servers
   * report (errors, stderr) is masked with it.
   */
  guard: McpGuard;
  onStatus?: (status: McpServerStatus) => void;
  /** Where the servers' logging notifications go (`$PION_HOME/mcp.log`). */
  logFile?: string;
  /** OAuth sign-ins (`$PION_HOME/mcp-auth.json`); without it HTTP servers get no OAuth. */
  authFile?: string;
}

let exitHookInstalled = false;

export class McpManager {
  private conns: McpConnection[] = [];
  private errors: McpConfigError[] = [];
  private cache?: McpTool[];
  private readonly reported = new WeakMap<McpConnection, string>();
  private readonly onLog?: ReturnType<typeof createServerLog>;
  private readonly authStore?: McpAuthStore;

  constructor(private readonly o: McpManagerOptions) {
    if (o.authFile) this.authStore = new McpAuthStore(o.authFile);
    if (o.logFile) this.onLog = createServerLog(o.logFile, o.guard.mask);
    if (!exitHookInstalled) {
      exitHookInstalled = true;
      // Whatever way pion ends (process.exit after a signal, EOF, an error), no server is left behind.
      process.on("exit", () => killAll("SIGKILL"));
    }
  }

  /** Replaces the servers: stops the ones that went away or changed, starts the new ones. */
  async setServers(servers: readonly McpServerConfig[], errors: readonly McpConfigError[] = []): Promise<void> {
    const keep: McpConnection[] = [];
    const stop: McpConnection[] = [];
    for (const c of this.conns) {
      const next = servers.find((s) => s.name === c.config.name);
      if (next && JSON.stringify(next) === JSON.stringify(c.config)) keep.push(c);
      else stop.push(c);
    }
    this.o.guard.addCredentials(serverCredentials(servers));
    const fresh = servers
      .filter((s) => !keep.some((c) => c.config.name === s.name))
      .map((cfg) => {
        const conn: McpConnection = new McpConnection(cfg, { guard: this.o.guard, onChange: () => this.changed(conn), ...(this.onLog ? { onLog: this.onLog } : {}), ...(this.authStore ? { authStore: this.authStore } : {}) });
        return conn;
      });
    this.conns = [...keep, ...fresh];
    this.errors = [...errors];
    this.cache = undefined;
    for (const e of errors) this.o.onStatus?.(errorStatus(e));
    for (const c of fresh) if (c.state === "disabled") this.o.onStatus?.(c.status());
    for (const c of fresh) void c.connect();
    await Promise.all(stop.map((c) => c.stop()));
  }

  private changed(conn: McpConnection): void {
    this.cache = undefined;
    if (!this.conns.includes(conn)) return;
    // Reported only when something a host can see changed (a tool list refresh may not).
    const status = conn.status();
    const key = JSON.stringify(status);
    if (this.reported.get(conn) === key) return;
    this.reported.set(conn, key);
    this.o.onStatus?.(status);
  }

  get size(): number {
    return this.conns.length + this.errors.length;
  }

  status(): McpServerStatus[] {
    return [
      ...this.conns.map((c) => c.status()),
      ...this.errors.map(errorStatus),
    ];
  }

  /** The enabled connections (for resources and server summaries). */
  connections(): readonly McpConnection[] {
    return this.conns.filter((c) => c.config.enabled);
  }

  /** Every reachable tool (hidden ones left out), whatever its exposure. */
  tools(): McpTool[] {
    return (this.cache ??= this.conns.flatMap((c) => adaptServerTools(c)));
  }

  /**
   * Waits up to `ms` for servers still connecting; returns the names of those that are not
   * connected yet (the model call goes on without them).
   */
  async waitForStartup(ms: number, which: (c: McpConnection) => boolean = () => true): Promise<string[]> {
    const pending = this.conns.filter((c) => c.state === "connecting" && which(c));
    if (pending.length === 0) return [];
    let timer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([Promise.all(pending.map((c) => c.connect())), new Promise((r) => (timer = setTimeout(r, ms)))]);
    clearTimeout(timer);
    return pending.filter((c) => c.state === "connecting").map((c) => c.config.name);
  }

  /**
   * Servers that needed a sign-in and have tokens now (`pion mcp login` in another shell):
   * connected again, so a running session uses the new credentials on its next run.
   */
  async reconnectSignedIn(): Promise<void> {
    const store = this.authStore;
    if (!store) return;
    const ready = this.conns.filter((c) => c.needsSignIn && c.state === "failed" && c.config.transport === "http" && store.get(authKey(c.config.name, c.config.url)).tokens);
    await Promise.all(ready.map((c) => c.connect()));
  }

  async stop(): Promise<void> {
    const all = this.conns;
    this.conns = [];
    this.cache = undefined;
    await Promise.all(all.map((c) => c.stop()));
  }
}

/** A server that cannot be configured as written: failed from the start, with the reason. */
const errorStatus = (e: McpConfigError): McpServerStatus => ({ name: e.name, state: "failed", transport: e.transport, toolCount: 0, source: e.source, error: e.error });
