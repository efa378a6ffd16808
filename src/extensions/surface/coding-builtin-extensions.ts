/**
 * pi-coding-agent's built-in extension factories (`createMcpExtension`, `createCodemodeExtension`,
 * `createToolSearchExtension`), each an ExtensionFactory `(pi) => void` over pion's own machinery:
 *
 * - MCP: on `session_start` the servers the factory's `loadConfig(ctx)` returns (by default mcp.json
 *   as pion reads it, a project's only when trusted) take the place of mcp.json's, as the
 *   reference's built-in MCP gives way to an extension's; run-time (ACP) servers stay. Their tools are
 *   pion's MCP tools (`mcp__<server>__<tool>`, exposure, codemode, tool_search, the permission
 *   gate, the credential guard, `mcp_status` frames); `/mcp` is pion's own (mcp/status-command.ts). `--no-mcp` keeps
 *   them off too.
 * - codemode / tool_search: pion's tools of those names, registered through `pi` inactive as the
 *   reference's (`--tools`, `defaultTools` or `pi.setActiveTools` activates them); with MCP servers
 *   they are the MCP tool set's (scripts reach the servers' undeclared tools, searches load them),
 *   which also offers them itself while servers need them (by name, one tool). Without MCP,
 *   codemode scripts call the declared tools and tool_search finds nothing to load.
 *
 * The tools are pion Tools (tool-adapter.ts NATIVE_TOOL), so a script's nested calls go through
 * the loop's pipeline (arguments, permission gate, hooks) like the model's own calls. The tools'
 * code loads when a factory runs, not at start-up.
 */
import type { ExtensionApi, ExtensionContext, ToolDefinition } from "../api.ts";
import { NATIVE_TOOL } from "../tool-adapter.ts";
import { MCP_HOST, type ExtensionMcpHost } from "../types.ts";
import { READ_ONLY, type Tool } from "../../tools/tool.ts";
import type { McpConfig, McpConfigError, McpServerConfig } from "../../mcp/config.ts";

type Pi = ExtensionApi & { [MCP_HOST]?: () => ExtensionMcpHost | undefined };
type Factory = (pi: ExtensionApi) => void;

/** The reference's `McpServerEntry` as a `loadConfig` returns it. */
export interface McpServerEntryLike {
  name: string;
  config: unknown;
  source?: string;
  scope?: string;
}
/** The reference's `LoadedMcpConfig`. */
export interface LoadedMcpConfigLike {
  servers: McpServerEntryLike[];
  errors?: string[];
  autoEnableCodemode?: boolean;
  projectConfig?: string;
}
export interface McpExtensionOptions {
  loadConfig?: (ctx: ExtensionContext) => LoadedMcpConfigLike;
  /** Not offered: pion connects over its own stdio and streamable HTTP transports. */
  createTransport?: unknown;
  /** Accepted and unused: pion keeps sign-ins in `$PION_HOME/mcp-auth.json`, server logs in `mcp.log`, and signs in with `pion mcp login`. */
  credentials?: unknown;
  logPath?: string;
  openUrl?: unknown;
  updateConfig?: unknown;
  /** Accepted and unused: the first model call waits for direct servers as pion's own MCP does. */
  startupWaitMs?: number;
}

const hostOf = (pi: ExtensionApi, factory: string): ExtensionMcpHost => {
  const host = (pi as Pi)[MCP_HOST]?.();
  if (!host) throw new Error(`${factory}: this extension API has no MCP servers (pion offers them to extensions of a pion session)`);
  return host;
};

/** The definition `pi.registerTool` takes for a pion Tool. */
function nativeDefinition(tool: Tool, extra: { promptSnippet?: string; promptGuidelines?: string[]; defaultActive?: boolean } = {}): ToolDefinition {
  return {
    name: tool.name,
    label: tool.label ?? tool.name,
    description: tool.description,
    parameters: tool.parameters,
    ...extra,
    execute: () => {
      throw new Error(`${tool.name} runs through pion's tool pipeline`);
    },
    [NATIVE_TOOL]: tool,
  } as ToolDefinition;
}

/**
 * A `loadConfig` result in pion's form: each entry's `config` is read as an `mcpServers` entry of
 * mcp.json (`${VAR}` expanded from pion's environment); a bad one is an error for that server
 * only, the loader's own errors are errors of no server (`*`); the last entry of a name wins.
 */
export function configOf(
  loaded: LoadedMcpConfigLike,
  toServer: (name: string, raw: unknown, source: string) => McpServerConfig | McpConfigError,
  source: string,
): McpConfig {
  const general = (error: string): McpConfigError => ({ name: "*", source, transport: "unknown", error });
  if (!loaded || typeof loaded !== "object" || !Array.isArray(loaded.servers)) return { servers: [], errors: [general("loadConfig must return { servers: [...], errors: [...] }")] };
  const errors = (Array.isArray(loaded.errors) ? loaded.errors : []).filter((e) => typeof e === "string").map(general);
  const byName = new Map<string, McpServerConfig>();
  for (const entry of loaded.servers) {
    if (!entry || typeof entry !== "object" || typeof entry.name !== "string") {
      errors.push(general("a server entry needs a name and a config"));
      continue;
    }
    const r = toServer(entry.name, entry.config, typeof entry.source === "string" && entry.source ? entry.source : source);
    if ("error" in r) errors.push(r);
    else byName.set(r.name, r);
  }
  return { servers: [...byName.values()], errors, ...(typeof loaded.autoEnableCodemode === "boolean" ? { autoEnableCodemode: loaded.autoEnableCodemode } : {}) };
}

export function createMcpExtension(options: McpExtensionOptions = {}): Factory {
  if (options.createTransport !== undefined) {
    throw new Error("createMcpExtension: createTransport is not available in pion (its MCP servers connect over pion's own stdio and streamable HTTP transports)");
  }
  return (api) => {
    const pi = api as Pi;
    pi.on("session_start", async (_event, ctx) => {
      const host = hostOf(pi, "createMcpExtension");
      const { loadMcpConfig, toServerConfig } = await import("../../mcp/config.ts");
      const config = options.loadConfig
        ? configOf(options.loadConfig(ctx), (name, raw, source) => toServerConfig(name, raw, source, host.env, ctx.cwd), "extension")
        : loadMcpConfig({ home: host.home, cwd: ctx.cwd, env: host.env, projectTrusted: ctx.isProjectTrusted() });
      for (const e of config.errors) ctx.ui.notify(`MCP: ${e.name === "*" ? `${e.source}: ` : `server "${e.name}": `}${e.error}`, "warning");
      if (host.disabled) {
        if (config.servers.length > 0) ctx.ui.notify(`MCP is off for this run (--no-mcp): ${config.servers.map((s) => s.name).join(", ")} not started`, "info");
        return;
      }
      await host.configure(config);
    });
    pi.registerCommand("mcp", {
      description: "Show the MCP servers and their state",
      handler: async (args, ctx) => {
        const { runMcpCommand } = await import("../../mcp/status-command.ts");
        await runMcpCommand(args, hostOf(pi, "createMcpExtension").command(), (message, level) => ctx.ui.notify(message, level));
      },
    });
  };
}

/** The reference's `CodemodeExtensionOptions` (`mode`, `inlineBudget`, `models`): pion's codemode lists servers, not tools, and has no model catalog for scripts, so they change nothing. */
export interface CodemodeExtensionOptions {
  mode?: string;
  inlineBudget?: number;
  models?: boolean;
}

export function createCodemodeExtension(_options: CodemodeExtensionOptions = {}): Factory {
  return (api) => {
    const pi = api as Pi;
    const { CODEMODE_DESCRIPTION, CODEMODE_NAME, CODEMODE_PARAMETERS, parseCodemodeArgs } = require("../../codemode/definition.ts") as typeof import("../../codemode/definition.ts");
    // Declared from the light definition; the script runner loads with the first call.
    const tool: Tool = {
      name: CODEMODE_NAME,
      label: CODEMODE_NAME,
      description: CODEMODE_DESCRIPTION,
      annotations: READ_ONLY,
      parameters: CODEMODE_PARAMETERS,
      parse: parseCodemodeArgs,
      execute: async (args, ctx) => (await hostOf(pi, "createCodemodeExtension").codemode()).execute(args, ctx),
    };
    pi.registerTool(nativeDefinition(tool, { promptSnippet: "Run JavaScript that calls other tools", defaultActive: false }));
  };
}

export function createToolSearchExtension(): Factory {
  return (api) => {
    const pi = api as Pi;
    const { createToolSearchTool } = require("../../mcp/tool-search.ts") as typeof import("../../mcp/tool-search.ts");
    // Without MCP servers there is nothing undeclared to find.
    const none = createToolSearchTool(() => [], async () => undefined);
    const tool: Tool = {
      ...(none as unknown as Tool),
      execute: async (args, ctx) => {
        const search = pi[MCP_HOST]?.()?.toolSearch() ?? (none as unknown as Tool);
        return search.execute(args, ctx);
      },
    };
    pi.registerTool(nativeDefinition(tool, { promptSnippet: "Search for tools that are not loaded yet and load the matches", defaultActive: false }));
  };
}

export const builtinExtensionExports: Record<string, unknown> = { createMcpExtension, createCodemodeExtension, createToolSearchExtension };
