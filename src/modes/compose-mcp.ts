import { existsSync } from "node:fs";
import { join } from "node:path";
import type { CredentialGuard } from "../credentials/guard.ts";
import type { McpConfig, McpServerConfig } from "../mcp/config.ts";
import { mcpConfigFiles } from "../mcp/config-files.ts";
import type { McpConnection } from "../mcp/connection.ts";
import type { McpManager } from "../mcp/manager.ts";
import type { McpCommandHost } from "../mcp/status-command.ts";
import type { createMcpToolSet, SessionPort } from "../mcp/tool-set.ts";
import type { Tool } from "../tools/tool.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";

/** How long the first model call of a run waits for MCP servers still connecting. */
export const MCP_STARTUP_WAIT_MS = 5000;
/** Servers start this long after start-up (or with the first run, if sooner). */
const MCP_START_DELAY_MS = 100;

/**
 * MCP servers from mcp.json (the project's only when the folder is trusted). The client code
 * loads only when a server is configured; servers start once the session can report on them.
 */
export async function startMcp(o: CliOptions, projectTrusted: boolean, guard: CredentialGuard, publish: (e: Record<string, unknown>) => void) {
  /** mcp.json's servers (user's, then the trusted project's); undefined when there are none. */
  const readConfig = async (): Promise<McpConfig | undefined> => {
    // Most folders have no MCP configuration: the config module loads only when a file exists.
    if (o.noMcp || !mcpConfigFiles({ ...o, projectTrusted }).some((f) => existsSync(f))) return undefined;
    const { loadMcpConfig, serverCredentials } = await import("../mcp/config.ts");
    const read = loadMcpConfig({ home: o.home, cwd: o.cwd, env: o.env, projectTrusted });
    // Known from now on, not only once the servers start: the host's next bash command must not get them either.
    guard.addCredentials(serverCredentials(read.servers));
    return read.servers.length === 0 && read.errors.length === 0 ? undefined : read;
  };
  const config = await readConfig();
  /** Whether an extension's createMcpExtension configured the servers since the last reload or session change began. */
  let configuredByExtension = false;
  let hasDirect: ((c: McpServerConfig) => boolean) | undefined;
  let standalone: Promise<Tool> | undefined;
  /** Servers given at run time, on top of the configured ones. */
  let runtime: McpServerConfig[] = [];
  const state = {
    manager: undefined as McpManager | undefined,
    toolSet: undefined as ReturnType<typeof createMcpToolSet> | undefined,
    /** The first model call waits only for servers that may declare tools directly. */
    waitsFor: (c: McpConnection) => hasDirect?.(c.config) ?? true,
    config,
    async ensure() {
      if (state.manager) return;
      const { McpManager } = await import("../mcp/manager.ts");
      state.manager = new McpManager({ guard, logFile: join(o.home, "mcp.log"), authFile: join(o.home, "mcp-auth.json"), onStatus: (s) => publish({ type: "mcp_status", ...s }) });
    },
    /**
     * `append` with the `mcp_servers` section: the configured servers whose tools are not declared
     * (codemode, deferred) and how to reach them. From the configuration only, so it does not
     * change as servers connect.
     */
    withPromptSection(append: string | undefined): string | undefined {
      const servers = withRuntimeList(state.config?.servers ?? [], runtime).filter((c) => c.enabled && c.exposure !== "direct" && c.exposure !== "hidden");
      if (servers.length === 0) return append;
      const how = (c: McpServerConfig) => (c.exposure === "deferred" ? "load its tools with `tool_search`" : "call its tools from `codemode` scripts");
      const lines = servers.map((c) => `- ${c.name} (\`mcp__${c.name.replace(/[^A-Za-z0-9_]/g, "_")}__*\`; ${how(c)})${c.description ? `: ${c.description}` : ""}`);
      const section = `<mcp_servers>\nMCP servers whose tools are not declared to you:\n${lines.join("\n")}\n</mcp_servers>`;
      // Before the user's APPEND_SYSTEM.md text, which stays last.
      return append ? `${section}\n\n${append}` : section;
    },
    /** The MCP tools of the next model call on the session's branch. */
    tools: (session: SessionPort): Tool[] => state.toolSet?.tools(session) ?? [],
    /**
     * Before a run's first model call: starts the servers, waits (up to MCP_STARTUP_WAIT_MS) for
     * those that may declare tools directly, reports the ones still connecting, loads codemode.
     */
    async prepareRun(): Promise<void> {
      const manager = state.manager;
      if (!manager) return;
      // The tool set (tool_search, resources, codemode's entry) loads with the first run, not at start-up.
      if (!state.toolSet) {
        const toolSet = await import("../mcp/tool-set.ts");
        hasDirect = toolSet.hasDirect;
        const autoEnableCodemode = state.config?.autoEnableCodemode;
        state.toolSet = toolSet.createMcpToolSet(manager, { maskDeep: guard.maskDeep, warn: (m) => log("mcp", m), ...(autoEnableCodemode !== undefined ? { autoEnableCodemode } : {}) });
      }
      state.start();
      await manager.reconnectSignedIn();
      for (const name of await manager.waitForStartup(MCP_STARTUP_WAIT_MS, state.waitsFor)) {
        const s = manager.status().find((x) => x.name === name);
        if (s) publish({ type: "mcp_status", ...s, message: `not connected after ${MCP_STARTUP_WAIT_MS / 1000} s: this model call goes on without its tools` });
      }
      await state.toolSet?.prepare();
    },
    started: false,
    /**
     * Starts the configured servers, once. Loading the SDK takes the main thread for 100+ ms,
     * so it waits until the host's first commands (a get_state at spawn) had their answers, or
     * until a run needs the tools.
     */
    start() {
      const c = state.config;
      if (state.started || !c || !state.manager) return;
      state.started = true;
      logConfigErrors(c);
      void state.manager.setServers(c.servers, c.errors);
    },
    /** Adds run-time servers and starts everything now (configured servers included, once). */
    async add(servers: McpServerConfig[]) {
      const { withRuntimeServers } = await import("../mcp/config.ts");
      runtime = withRuntimeServers({ servers: runtime, errors: [] }, servers).servers;
      await state.ensure();
      if (!state.started && state.config) logConfigErrors(state.config);
      state.started = true;
      const all = withRuntimeServers(state.config, runtime);
      await state.manager!.setServers(all.servers, all.errors);
    },
    /**
     * An extension's MCP configuration (the reference's `createMcpExtension`) in place of
     * mcp.json's, as the reference's built-in MCP gives way to it; run-time servers stay. Starts them now.
     */
    async configure(next: McpConfig) {
      const { withRuntimeServers } = await import("../mcp/config.ts");
      configuredByExtension = true;
      state.config = next;
      await state.ensure();
      state.started = true;
      const all = withRuntimeServers(next, runtime);
      await state.manager!.setServers(all.servers, all.errors);
    },
    /**
     * pion's codemode for an extension's `createCodemodeExtension`: the MCP tool set's once a run
     * prepared it (scripts reach the servers' undeclared tools), else one over the declared tools.
     */
    codemode(session: SessionPort): Promise<Tool> {
      if (state.toolSet) return state.toolSet.codemode();
      return (standalone ??= import("../codemode/tool.ts").then(({ createCodemodeTool }) =>
        createCodemodeTool({
          servers: [],
          callable: () => [],
          search: () => [],
          namespace: () => undefined,
          ready: async () => undefined,
          branch: () => session.branchPath(),
          saveWrites: (e) => session.appendCustom(e.customType, e.data),
          mask: (s) => guard.mask(s),
        }) as unknown as Tool,
      ));
    },
    /** What `/mcp` works on: the servers start now if they have not, and the status waits for them. */
    command: (): McpCommandHost => ({
      configFile: join(o.home, "mcp.json"),
      async status() {
        state.start();
        await state.manager?.waitForStartup(MCP_STARTUP_WAIT_MS);
        return state.manager?.status() ?? [];
      },
      reconnect: async (name) => state.manager?.connections().find((c) => c.config.name === name)?.connect(),
    }),
    /** A reload or session change begins: an extension that configures the servers from here on wins over mcp.json. */
    markReread() {
      configuredByExtension = false;
    },
    /**
     * After a reload or session change (the extensions' session_start handlers ran): mcp.json is
     * read again, as the reference's MCP does, unless an extension configured the servers. Changed,
     * added and removed servers are connected and stopped now if the servers had started; those
     * unchanged keep their connections (McpManager.setServers).
     */
    async reread() {
      if (configuredByExtension) return;
      const next = await readConfig();
      if (JSON.stringify(next) === JSON.stringify(state.config)) return;
      state.config = next;
      if (!next && !state.manager) return;
      await state.ensure();
      if (!state.started) return state.ready();
      const { withRuntimeServers } = await import("../mcp/config.ts");
      if (next) logConfigErrors(next);
      const all = withRuntimeServers(next, runtime);
      await state.manager!.setServers(all.servers, all.errors);
    },
    /** Called once the session exists to report on the servers. */
    ready() {
      if (state.config) setTimeout(() => state.start(), MCP_START_DELAY_MS).unref();
    },
  };
  if (config) await state.ensure();
  return state;
}

/** The configured servers with the run-time ones in place of those of the same name. */
const withRuntimeList = (configured: readonly McpServerConfig[], runtime: readonly McpServerConfig[]) => [
  ...configured.filter((c) => !runtime.some((r) => r.name === c.name)),
  ...runtime,
];

const logConfigErrors = (c: McpConfig) => {
  for (const e of c.errors) log("mcp", `${e.name === "*" ? e.source : `server "${e.name}"`}: ${e.error}`);
};
