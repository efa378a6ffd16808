/**
 * One MCP server: connects through the official SDK's Client (loaded on first use), keeps the
 * server's tool list, and calls tools with the configured timeout (reset by progress). A
 * failure never throws past this class's promises to pion: connect() records it in `status`,
 * callTool() rejects with a message naming the server. A dropped server reconnects on the
 * next call.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult, ReadResourceResult, Resource, ResourceTemplate, Tool as SdkTool } from "@modelcontextprotocol/sdk/types.js";
import { resolveCommandValues } from "./command-values.ts";
import { retryingFetch } from "./retry-fetch.ts";
import type { McpAuthStore } from "./auth-store.ts";
import type { LogNotice } from "./server-log.ts";
import { VERSION } from "../config.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";
import type { CredentialGuard } from "../credentials/guard.ts";
import type { McpServerConfig } from "./config.ts";
import { BunStdioTransport } from "./stdio-transport.ts";

export type McpState = "connecting" | "connected" | "failed" | "disabled";

export interface McpServerStatus {
  name: string;
  state: McpState;
  transport: "stdio" | "http" | "unknown";
  toolCount: number;
  source: string;
  error?: string;
  /** An HTTP server that wants an OAuth sign-in (`pion mcp login NAME`). */
  needsSignIn?: boolean;
}

/** What MCP servers need of pion's credential guard (credentials/guard.ts). */
export type McpGuard = Pick<CredentialGuard, "childEnv" | "mask" | "addCredentials">;

export type McpToolInfo = Pick<SdkTool, "name" | "description" | "inputSchema" | "annotations">;

export interface McpCallOptions {
  signal: AbortSignal;
  onProgress?: (p: { progress: number; total?: number; message?: string }) => void;
}

type Sdk = {
  Client: typeof import("@modelcontextprotocol/sdk/client/index.js").Client;
  StreamableHTTPClientTransport: typeof import("@modelcontextprotocol/sdk/client/streamableHttp.js").StreamableHTTPClientTransport;
  ToolListChangedNotificationSchema: typeof import("@modelcontextprotocol/sdk/types.js").ToolListChangedNotificationSchema;
  LoggingMessageNotificationSchema: typeof import("@modelcontextprotocol/sdk/types.js").LoggingMessageNotificationSchema;
};
let sdk: Promise<Sdk> | undefined;
const loadSdk = () =>
  (sdk ??= Promise.all([
    import("@modelcontextprotocol/sdk/client/index.js"),
    import("@modelcontextprotocol/sdk/client/streamableHttp.js"),
    import("@modelcontextprotocol/sdk/types.js"),
  ]).then(([c, h, t]) => ({
    Client: c.Client,
    StreamableHTTPClientTransport: h.StreamableHTTPClientTransport,
    ToolListChangedNotificationSchema: t.ToolListChangedNotificationSchema,
    LoggingMessageNotificationSchema: t.LoggingMessageNotificationSchema,
  })));

export interface McpPage<T> {
  items: T[];
  nextCursor?: string;
}

export class McpConnection {
  state: McpState;
  error?: string;
  tools: McpToolInfo[] = [];
  /** The server offers resources (its capabilities say so). */
  hasResources = false;
  /** The server's instructions and their first line, once connected. */
  instructions?: string;
  summary?: string;
  needsSignIn = false;
  private client?: Client;
  private connecting?: Promise<void>;
  private stopped = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly o: { guard: McpGuard; onChange: () => void; onLog?: (server: string, n: LogNotice) => void; authStore?: McpAuthStore },
  ) {
    this.state = config.enabled ? "connecting" : "disabled";
  }

  /** Starting a server (npx may download it first) gets at least 30 s, whatever the per-request timeout. */
  private get startupTimeoutMs(): number {
    return Math.max(this.config.timeoutMs, 30_000);
  }

  status(): McpServerStatus {
    return {
      name: this.config.name,
      state: this.state,
      transport: this.config.transport,
      toolCount: this.tools.length,
      source: this.config.source,
      ...(this.error !== undefined ? { error: this.o.guard.mask(this.error) } : {}),
      ...(this.needsSignIn ? { needsSignIn: true } : {}),
    };
  }

  /** Connects (once at a time); resolves when connected or failed, never rejects. */
  connect(): Promise<void> {
    if (!this.config.enabled || this.stopped) return Promise.resolve();
    if (this.state === "connected") return Promise.resolve();
    return (this.connecting ??= this.doConnect().finally(() => (this.connecting = undefined)));
  }

  private async doConnect(): Promise<void> {
    this.set("connecting");
    const cfg = this.config;
    let stdio: BunStdioTransport | undefined;
    let signIn: Awaited<ReturnType<McpConnection["authProvider"]>>;
    try {
      const { Client, StreamableHTTPClientTransport, ToolListChangedNotificationSchema, LoggingMessageNotificationSchema } = await loadSdk();
      // `!command` values run now, in the background, and their output is masked like any credential.
      const env = resolveCommandValues(cfg.transport === "stdio" ? cfg.env : {}, `env of "${cfg.name}"`, this.o.guard);
      const headers = resolveCommandValues(cfg.transport === "http" ? cfg.headers : {}, `headers of "${cfg.name}"`, this.o.guard);
      const transport =
        cfg.transport === "stdio"
          ? (stdio = new BunStdioTransport({
              name: cfg.name,
              command: cfg.command,
              args: cfg.args,
              env: this.o.guard.childEnv(env),
              cwd: cfg.cwd,
              mask: this.o.guard.mask,
            }))
          : new StreamableHTTPClientTransport(new URL(cfg.url), {
              requestInit: { headers },
              fetch: retryingFetch(),
              ...((signIn = await this.authProvider(headers)) ? { authProvider: signIn } : {}),
            });
      const client = new Client({ name: "pion", version: VERSION }, { capabilities: {} });
      client.onclose = () => {
        if (this.client !== client) return;
        this.client = undefined;
        if (!this.stopped) this.set("failed", this.error ?? "the connection closed");
      };
      client.onerror = (err) => {
        if (this.client === client) this.error = describe(err, stdio, cfg.name);
      };
      await client.connect(transport, { timeout: this.startupTimeoutMs });
      if (this.stopped) {
        await client.close();
        return;
      }
      this.client = client;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void this.refreshTools());
      const onLog = this.o.onLog;
      if (onLog) client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => onLog(cfg.name, n.params));
      this.hasResources = client.getServerCapabilities()?.resources !== undefined;
      this.instructions = client.getInstructions()?.trim() || undefined;
      this.summary = this.instructions?.split("\n")[0]?.replace(/^#+\s*/, "") || undefined;
      this.tools = await this.listAll(client);
      this.error = undefined;
      this.needsSignIn = false;
      this.set("connected");
    } catch (err) {
      this.needsSignIn = signIn?.needsSignIn === true || (err as Error)?.name === "UnauthorizedError";
      const msg = this.needsSignIn ? `needs sign-in: run \`pion mcp login ${cfg.name}\`` : describe(err, stdio, cfg.name);
      try {
        await stdio?.close();
      } catch {
        // the process is gone already
      }
      if (!this.stopped) {
        log(`mcp ${cfg.name}`, `failed to connect: ${this.o.guard.mask(msg)}`);
        this.set("failed", msg);
      }
    }
  }

  /** OAuth for an HTTP server that sends no Authorization header of its own (loaded only then). */
  private async authProvider(headers: Record<string, string>) {
    const cfg = this.config;
    const store = this.o.authStore;
    if (cfg.transport !== "http" || !store || Object.keys(headers).some((h) => h.toLowerCase() === "authorization")) return undefined;
    const { PionOAuthProvider } = await import("./oauth-provider.ts");
    return new PionOAuthProvider(cfg, { store, guard: this.o.guard });
  }

  private async listAll(client: Client): Promise<McpToolInfo[]> {
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout: this.startupTimeoutMs });
      for (const t of page.tools) out.push({ name: t.name, description: t.description, inputSchema: t.inputSchema, annotations: t.annotations });
      cursor = page.nextCursor;
    } while (cursor);
    return out;
  }

  private async refreshTools(): Promise<void> {
    const client = this.client;
    if (!client) return;
    try {
      this.tools = await this.listAll(client);
      this.o.onChange();
    } catch (err) {
      this.error = `tool list refresh failed: ${errorMessage(err)}`;
      this.o.onChange();
    }
  }

  /** Calls a tool; reconnects first when the server dropped. Rejects with a message for the model. */
  async callTool(tool: string, args: Record<string, unknown>, o: McpCallOptions): Promise<CallToolResult> {
    if (!this.config.enabled) throw new Error(`MCP server "${this.config.name}" is disabled`);
    if (!this.client) await this.connect();
    const client = this.client;
    if (!client) throw new Error(`MCP server "${this.config.name}" is not connected: ${this.error ?? "unknown error"}`);
    try {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, {
        signal: o.signal,
        timeout: this.config.timeoutMs,
        resetTimeoutOnProgress: true,
        ...(o.onProgress ? { onprogress: o.onProgress } : {}),
      });
      return result as CallToolResult;
    } catch (err) {
      if (o.signal.aborted) throw new Error("aborted");
      throw new Error(`MCP server "${this.config.name}": ${errorMessage(err)}`);
    }
  }

  /** One page of the server's resources. */
  async resourcesPage(cursor: string | undefined, signal: AbortSignal): Promise<McpPage<Resource>> {
    const r = await this.request(signal, (c, opts) => c.listResources(cursor ? { cursor } : undefined, opts));
    return { items: r.resources, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
  }

  async templatesPage(cursor: string | undefined, signal: AbortSignal): Promise<McpPage<ResourceTemplate>> {
    const r = await this.request(signal, (c, opts) => c.listResourceTemplates(cursor ? { cursor } : undefined, opts));
    return { items: r.resourceTemplates, ...(r.nextCursor ? { nextCursor: r.nextCursor } : {}) };
  }

  readResource(uri: string, signal: AbortSignal): Promise<ReadResourceResult> {
    return this.request(signal, (c, opts) => c.readResource({ uri }, opts));
  }

  /** A request to the server (connecting first when it dropped), with the configured timeout; rejects naming the server. */
  private async request<T>(signal: AbortSignal, send: (c: Client, opts: { signal: AbortSignal; timeout: number }) => Promise<T>): Promise<T> {
    if (!this.config.enabled) throw new Error(`MCP server "${this.config.name}" is disabled`);
    if (!this.client) await this.connect();
    const client = this.client;
    if (!client) throw new Error(`MCP server "${this.config.name}" is not connected: ${this.error ?? "unknown error"}`);
    try {
      return await send(client, { signal, timeout: this.config.timeoutMs });
    } catch (err) {
      if (signal.aborted) throw new Error("aborted");
      throw new Error(`MCP server "${this.config.name}": ${errorMessage(err)}`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const client = this.client;
    this.client = undefined;
    try {
      await client?.close();
    } catch {
      // closing a dead connection
    }
  }

  private set(state: McpState, error?: string): void {
    this.state = state;
    if (error !== undefined) this.error = error;
    this.o.onChange();
  }
}

function describe(err: unknown, stdio: BunStdioTransport | undefined, name: string): string {
  const e = err as { code?: unknown; message?: string };
  if (e?.code === 401 || /\b401\b/.test(String(e?.message))) {
    return `the server requires authorization (HTTP 401): sign in with \`pion mcp login ${name}\` (OAuth) or configure an Authorization header (${errorMessage(err)})`;
  }
  let msg = errorMessage(err);
  if (e?.code === "ENOENT" || /ENOENT|not found|No such file/i.test(msg)) msg = `command not found: ${msg}`;
  const tail = stdio?.stderrTail.trim().split("\n").at(-1);
  return tail && !msg.includes(tail) ? `${msg} (stderr: ${tail})` : msg;
}
