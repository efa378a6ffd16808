/**
 * `/mcp` as a client types it: pion's built-in command and the one an extension's
 * `createMcpExtension` registers both run this, over the same servers.
 *
 * - `/mcp`: each server's state, once the servers still starting had their chance to connect;
 * - `/mcp reconnect [server]`: tries a server that is not connected again;
 * - `/mcp login|logout [server]`: OAuth applies to HTTP servers; pion signs in from a shell
 *   (`pion mcp login`), where a browser or a pasted redirect can answer, and a signed-in server
 *   connects again at the next prompt;
 * - anything else: the usage line (a warning).
 *
 * Without a server name the command picks the only candidate (or the only one that needs it);
 * with several it asks for a name. Pure text over a small host: no MCP client code loads here.
 */
import type { McpServerStatus } from "./connection.ts";

export type NotifyLevel = "info" | "warning" | "error";
export type Notify = (message: string, level: NotifyLevel) => void;

export interface McpCommandHost {
  /** The user's mcp.json, named when there is no server. */
  configFile: string;
  /** Each server's state (configuration errors included), once the starting ones settled. */
  status(): Promise<readonly McpServerStatus[]> | readonly McpServerStatus[];
  /** Connects a server that is not connected again; resolves once the attempt ended. */
  reconnect?(name: string): Promise<void>;
}

export const MCP_COMMAND_USAGE = "Usage: /mcp, or /mcp login|logout|reconnect [server]";

/** `/mcp` without arguments: a line per server, or where to add them when there is none. */
export function formatMcpStatus(status: readonly McpServerStatus[], configFile: string): string {
  if (status.length === 0) return `No MCP servers are configured yet: add them to ${configFile} (or, in a trusted project, to .pion/mcp.json).`;
  return ["MCP servers:", ...status.map((s) => `${s.name} (${s.transport}): ${describeState(s)}`)].join("\n");
}

function describeState(s: McpServerStatus): string {
  if (s.state === "connected") return `connected · ${s.toolCount} tool${s.toolCount === 1 ? "" : "s"}`;
  if (s.needsSignIn) return `needs sign-in (run \`pion mcp login ${s.name}\` in a shell)`;
  if (s.state === "failed") return `failed${s.error ? `: ${s.error.split("\n", 1)[0]}` : ""}`;
  return s.state;
}

export async function runMcpCommand(args: string, host: McpCommandHost, notify: Notify): Promise<void> {
  const [action, name, ...extra] = args.trim().split(/\s+/).filter(Boolean);
  if (action === undefined) return notify(formatMcpStatus(await host.status(), host.configFile), "info");
  if (extra.length > 0 || (action !== "login" && action !== "logout" && action !== "reconnect")) return notify(MCP_COMMAND_USAGE, "warning");
  const servers = await host.status();
  if (action === "reconnect") {
    const server = pick(servers, name, notify, {
      eligible: (s) => s.state !== "disabled" && s.transport !== "unknown",
      wanted: (s) => s.state !== "connected",
      none: "No enabled MCP server to reconnect.",
      verb: "reconnect",
    });
    if (!server || !host.reconnect) return;
    await host.reconnect(server.name);
    const now = (await host.status()).find((s) => s.name === server.name);
    if (now?.state === "connected") notify(`MCP server "${server.name}" is connected again (${describeState(now)}).`, "info");
    else notify(`MCP server "${server.name}" did not connect: ${now ? describeState(now) : "it is no longer configured"}`, "error");
    return;
  }
  const server = pick(servers, name, notify, {
    eligible: (s) => s.transport === "http" && s.state !== "disabled",
    wanted: (s) => (action === "login" ? s.needsSignIn === true : true),
    none: "No enabled MCP server signs in with OAuth: only HTTP servers do.",
    verb: action,
  });
  if (!server) return;
  if (action === "login") notify(`Sign in to MCP server "${server.name}" from a shell with \`pion mcp login ${server.name}\`; this session connects to it again at its next prompt.`, "info");
  else notify(`Sign out of MCP server "${server.name}" from a shell with \`pion mcp logout ${server.name}\`.`, "info");
}

interface PickRule {
  eligible: (s: McpServerStatus) => boolean;
  /** Among several candidates, the one this applies to alone is taken. */
  wanted: (s: McpServerStatus) => boolean;
  none: string;
  verb: string;
}

function pick(servers: readonly McpServerStatus[], name: string | undefined, notify: Notify, rule: PickRule): McpServerStatus | undefined {
  if (name !== undefined) {
    const server = servers.find((s) => s.name === name);
    if (!server) notify(`There is no MCP server called "${name}".`, "error");
    else if (!rule.eligible(server)) notify(rule.none, "error");
    return server && rule.eligible(server) ? server : undefined;
  }
  const candidates = servers.filter(rule.eligible);
  if (candidates.length === 0) {
    notify(rule.none, "info");
    return undefined;
  }
  const wanted = candidates.filter(rule.wanted);
  if (candidates.length === 1) return candidates[0];
  if (wanted.length === 1) return wanted[0];
  notify(`Say which server: /mcp ${rule.verb} <server> (one of ${candidates.map((s) => s.name).join(", ")}).`, "warning");
  return undefined;
}
