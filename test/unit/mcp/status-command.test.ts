import { describe, expect, test } from "bun:test";
import { formatMcpStatus, MCP_COMMAND_USAGE, runMcpCommand, type McpCommandHost, type NotifyLevel } from "../../../src/mcp/status-command.ts";
import type { McpServerStatus } from "../../../src/mcp/connection.ts";

const stdio = (name: string, state: McpServerStatus["state"], extra: Partial<McpServerStatus> = {}): McpServerStatus => ({ name, state, transport: "stdio", toolCount: 0, source: "/h/mcp.json", ...extra });
const http = (name: string, state: McpServerStatus["state"], extra: Partial<McpServerStatus> = {}): McpServerStatus => ({ ...stdio(name, state, extra), transport: "http" });

/** Runs `/mcp <args>` over these servers; returns what it said and which servers it reconnected. */
async function run(args: string, servers: McpServerStatus[], after?: McpServerStatus[]) {
  const said: [string, NotifyLevel][] = [];
  const reconnected: string[] = [];
  let now = servers;
  const host: McpCommandHost = {
    configFile: "/h/mcp.json",
    status: () => now,
    reconnect: async (name) => {
      reconnected.push(name);
      now = after ?? now;
    },
  };
  await runMcpCommand(args, host, (m, l) => said.push([m, l]));
  return { said, reconnected };
}

test("formatMcpStatus: one line per server; none: where to add them", () => {
  expect(formatMcpStatus([], "/h/mcp.json")).toBe("No MCP servers are configured yet: add them to /h/mcp.json (or, in a trusted project, to .pion/mcp.json).");
  expect(
    formatMcpStatus([stdio("a", "connected", { toolCount: 1 }), http("b", "failed", { needsSignIn: true, error: "needs sign-in" }), stdio("c", "failed", { error: "exit 1\nmore" }), stdio("d", "disabled")], "/h/mcp.json"),
  ).toBe("MCP servers:\na (stdio): connected · 1 tool\nb (http): needs sign-in (run `pion mcp login b` in a shell)\nc (stdio): failed: exit 1\nd (stdio): disabled");
});

describe("runMcpCommand", () => {
  test("no arguments: the status, as info", async () => {
    expect((await run("", [stdio("a", "connected", { toolCount: 2 })])).said).toEqual([["MCP servers:\na (stdio): connected · 2 tools", "info"]]);
  });

  test("unknown subcommands and extra words: the usage line, as a warning", async () => {
    expect((await run("frobnicate", [])).said).toEqual([[MCP_COMMAND_USAGE, "warning"]]);
    expect((await run("login a b", [])).said).toEqual([[MCP_COMMAND_USAGE, "warning"]]);
  });

  test("login: only HTTP servers sign in; a named one that is missing or stdio is an error", async () => {
    expect((await run("login", [stdio("a", "connected")])).said).toEqual([["No enabled MCP server signs in with OAuth: only HTTP servers do.", "info"]]);
    expect((await run("login a", [stdio("a", "connected")])).said).toEqual([["No enabled MCP server signs in with OAuth: only HTTP servers do.", "error"]]);
    expect((await run("login zz", [stdio("a", "connected")])).said).toEqual([['There is no MCP server called "zz".', "error"]]);
    const [[message, level]] = (await run("login", [http("docs", "failed", { needsSignIn: true }), http("other", "connected")])).said as [[string, NotifyLevel]];
    expect(level).toBe("info");
    expect(message).toContain("`pion mcp login docs`");
    expect((await run("logout", [http("x", "connected"), http("y", "connected")])).said).toEqual([["Say which server: /mcp logout <server> (one of x, y).", "warning"]]);
  });

  test("reconnect: the one server that is not connected; its state afterwards", async () => {
    const r = await run("reconnect", [stdio("a", "connected"), stdio("b", "failed", { error: "gone" })], [stdio("a", "connected"), stdio("b", "connected", { toolCount: 3 })]);
    expect(r.reconnected).toEqual(["b"]);
    expect(r.said).toEqual([['MCP server "b" is connected again (connected · 3 tools).', "info"]]);
    const failed = await run("reconnect b", [stdio("b", "failed", { error: "gone" })]);
    expect(failed.said).toEqual([['MCP server "b" did not connect: failed: gone', "error"]]);
    expect((await run("reconnect", [])).said).toEqual([["No enabled MCP server to reconnect.", "info"]]);
  });
});
