import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";
import { NO_REFERENCE, referenceRpc, type RpcAgent } from "../support/reference-rpc.ts";
import { describeWith } from "../support/requires.ts";

/**
 * mcp.json is read again after `ctx.reload()` and after a session change, as the reference's MCP
 * reads it: added servers connect, removed ones stop, unchanged ones keep their connection.
 */
const SERVER = join(import.meta.dir, "../fixtures/mcp/dynamic-server.ts");
const RELOADER = `export default function (pi) { pi.registerCommand("rl", { handler: async (_a, ctx) => { await ctx.reload(); } }); }\n`;

const mcpJson = (home: string, names: string[]) =>
  writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: Object.fromEntries(names.map((n) => [n, { command: "bun", args: [SERVER] }])) }));

/** The servers `/mcp` lists as connected (pion's lines are `name (stdio): connected …`, the reference's `name: connected …`). */
async function connected(agent: RpcAgent): Promise<string[]> {
  const from = agent.records.length;
  await agent.request({ type: "prompt", message: "/mcp" });
  const note = await agent.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  return String(note.message)
    .split("\n")
    .map((l) => /^([\w-]+)(?: \(\w+\))?: connected/.exec(l)?.[1])
    .filter((n): n is string => n !== undefined);
}

/** Start with server one; add two, reload; replace both with three, new session. */
async function scenario(agent: RpcAgent, home: string): Promise<string[][]> {
  const seen = [await connected(agent)];
  mcpJson(home, ["one", "two"]);
  await agent.request({ type: "prompt", message: "/rl" });
  seen.push(await connected(agent));
  mcpJson(home, ["three"]);
  expect(((await agent.request({ type: "new_session" })) as Rec).success).toBe(true);
  seen.push(await connected(agent));
  return seen;
}

function setup(): { home: string; cwd: string; ext: string } {
  const dirs = tempDirs();
  const ext = join(dirs.cwd, "..", "reloader.ts");
  writeFileSync(ext, RELOADER);
  mcpJson(dirs.home, ["one"]);
  return { ...dirs, ext };
}

describe("mcp.json read again", () => {
  test.concurrent("a reload connects an added server and keeps the one that did not change; a new session stops the removed ones", async () => {
    const { ext, ...dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--no-session", "-e", ext] });
    expect(await scenario(p, dirs.home)).toEqual([["one"], ["one", "two"], ["three"]]);
    // "one" connected once: the reload kept its connection.
    expect(p.records.filter((r) => r.type === "mcp_status" && r.name === "one" && r.state === "connecting")).toHaveLength(1);
    expect(await p.close()).toBe(0);
  }, 60_000);
});

describeWith("mcp.json read again, pion against the reference", NO_REFERENCE, () => {
  test("the same servers after a reload and after a session change", async () => {
    const run = async (which: "pion" | "reference") => {
      const { ext, ...dirs } = setup();
      const args = ["--mode", "rpc", "--no-session", "-e", ext];
      const agent: RpcAgent = which === "pion" ? new Pion({ ...dirs, args }) : referenceRpc(args, dirs, {});
      try {
        return await scenario(agent, dirs.home);
      } finally {
        await agent.close();
      }
    };
    const [mine, theirs] = await Promise.all([run("pion"), run("reference")]);
    expect(theirs).toEqual([["one"], ["one", "two"], ["three"]]);
    expect(mine).toEqual(theirs);
  }, 90_000);
});
