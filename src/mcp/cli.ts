/**
 * `pion mcp list [--json]`, `pion mcp add NAME [options] -- COMMAND ARGS...`,
 * `pion mcp add NAME [options] --url URL`, `pion mcp remove NAME [--local]`,
 * `pion mcp login|logout NAME [--local]`. add/remove edit `$PION_HOME/mcp.json` (or the folder's
 * `.pion/mcp.json` with --local) and keep every other key of the file; list connects to every
 * enabled server and exits 1 when an entry is invalid or an enabled server does not connect.
 */
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { authFilePath } from "./auth-store.ts";
import { loadMcpConfig, NAME_PATTERN, projectConfigPath, readServers, userConfigPath } from "./config.ts";
import type { McpGuard, McpServerStatus } from "./connection.ts";
import { McpManager } from "./manager.ts";
import { readJsonFile } from "../util/json-file.ts";
import { addEntry } from "./cli-add.ts";

export interface McpCliContext {
  home: string;
  cwd: string;
  /** What `${VAR}` in mcp.json reads. */
  env: Record<string, string | undefined>;
  /**
   * pion's credential guard, made when `list` starts servers: they get its environment, as in
   * a session (so a models.json that cannot be read is an error here too).
   */
  guard: () => McpGuard;
  projectTrusted: boolean;
  out: (s: string) => void;
  err: (s: string) => void;
}

export class CliError extends Error {}

export async function runMcpCli(argv: string[], ctx: McpCliContext): Promise<number> {
  const [sub, ...rest] = argv;
  try {
    if (sub === "list") return await list(rest, ctx);
    if (sub === "add") return add(rest, ctx);
    if (sub === "remove") return remove(rest, ctx);
    if (sub === "login" || sub === "logout") return await (await import("./cli-login.ts")).runLogin(sub, rest, ctx);
    ctx.err(`pion mcp: expected list, add, remove, login or logout${sub ? `, got "${sub}"` : ""}\n`);
    return 2;
  } catch (err) {
    ctx.err(`pion mcp: ${err instanceof Error ? err.message : String(err)}\n`);
    return err instanceof CliError ? 2 : 1;
  }
}

async function list(args: string[], ctx: McpCliContext): Promise<number> {
  const json = args.includes("--json");
  const unknown = args.find((a) => a !== "--json");
  if (unknown) throw new CliError(`Unknown option: ${unknown}`);
  const config = loadMcpConfig({ home: ctx.home, cwd: ctx.cwd, env: ctx.env, projectTrusted: ctx.projectTrusted });
  const manager = new McpManager({ guard: ctx.guard(), logFile: join(ctx.home, "mcp.log"), authFile: authFilePath(ctx.home) });
  await manager.setServers(config.servers, config.errors);
  const longest = Math.max(0, ...config.servers.map((s) => s.timeoutMs));
  await manager.waitForStartup(Math.min(longest, 30_000));
  const tools = manager.tools();
  const exposure = new Map(config.servers.map((c) => [c.name, c.exposure]));
  // A tool whose exposure differs from its server's is marked with its own.
  const rows = manager.status().map((s) => ({
    ...s,
    ...(exposure.has(s.name) ? { exposure: exposure.get(s.name) } : {}),
    tools: tools.filter((t) => t.server === s.name).map((t) => (t.exposure === exposure.get(s.name) ? t.name : `${t.name} (${t.exposure})`)),
  }));
  await manager.stop();
  if (json) ctx.out(`${JSON.stringify({ servers: rows }, null, 2)}\n`);
  else ctx.out(rows.length === 0 ? `No MCP servers configured (${userConfigPath(ctx.home)})\n` : rows.map(describe).join(""));
  return rows.some((r) => r.state === "failed" || r.state === "connecting") ? 1 : 0;
}

function describe(s: McpServerStatus & { tools: string[]; exposure?: string }): string {
  const head = `${s.name}  ${s.state}${s.needsSignIn ? " (needs sign-in)" : ""}  ${s.transport}  ${s.exposure ?? "-"}  ${s.toolCount} tool${s.toolCount === 1 ? "" : "s"}  (${s.source})\n`;
  const err = s.error ? `  error: ${s.error}\n` : "";
  return head + err + s.tools.map((t) => `  ${t}\n`).join("");
}

function add(args: string[], ctx: McpCliContext): number {
  let added: ReturnType<typeof addEntry>;
  try {
    added = addEntry(args);
  } catch (err) {
    throw new CliError(err instanceof Error ? err.message : String(err));
  }
  const name = added.name;
  if (!NAME_PATTERN.test(name)) throw new CliError(`Invalid server name "${name}": use letters, digits, "_" and "-"`);
  const file = added.local ? projectConfigPath(ctx.cwd) : userConfigPath(ctx.home);
  edit(file, (servers) => void (servers[name] = added.entry));
  ctx.err(`Added MCP server "${name}" to ${file}\n`);
  return 0;
}

function remove(args: string[], ctx: McpCliContext): number {
  const name = args.find((a) => !a.startsWith("-"));
  const local = args.includes("--local") || args.includes("-l");
  if (!name) throw new CliError("usage: pion mcp remove NAME [--local]");
  const file = local ? projectConfigPath(ctx.cwd) : userConfigPath(ctx.home);
  if (!(name in readServers(file))) {
    ctx.err(`pion mcp: no server "${name}" in ${file}\n`);
    return 1;
  }
  edit(file, (servers) => void delete servers[name]);
  ctx.err(`Removed MCP server "${name}" from ${file}\n`);
  return 0;
}

/** Rewrites `mcpServers` of one file atomically, keeping every other key. */
export function edit(file: string, change: (servers: Record<string, unknown>) => void): void {
  readServers(file); // validates the file before changing it
  const raw = (readJsonFile(file) as Record<string, unknown> | undefined) ?? {};
  const servers = { ...((raw.mcpServers as Record<string, unknown> | undefined) ?? {}) };
  change(servers);
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify({ ...raw, mcpServers: servers }, null, 2)}\n`, { mode: 0o600 });
  renameSync(tmp, file);
}
