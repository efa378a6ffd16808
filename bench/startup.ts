/**
 * Start-up: spawn -> first `get_state` response (written to stdin at spawn), then stdin closed;
 * peak memory of that process. Goals: under 20 ms, under 45 MB. Measured twice: with nothing
 * configured, and with one MCP stdio server (server-everything) in the user's mcp.json, which
 * must not slow the first answer (servers connect in the background). And with a permission rule
 * (`--deny 'bash(rm *)'`): the bash parser loads when a run starts, never at start-up, so the first
 * answer must not be slower (bench/permissions.ts times the first bash call a rule judges).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { agents, header, iterations, MODEL_ARGS, printTable, ROOT, sandbox, spawnAgent, type Sandbox } from "./lib.ts";

const N = iterations(10);
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

function addMcpServer(box: Sandbox): void {
  const config = JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"] } } });
  writeFileSync(join(box.agent === "pion" ? box.env.PION_HOME! : join(box.home, ".pi/agent"), "mcp.json"), config);
}

async function measure(withMcp: boolean, extra: string[] = []) {
  const res: Record<string, { ms: number[]; peak: number[] }> = {};
  for (let i = 0; i < N + 1; i++) {
    for (const agent of agents()) {
      const box = sandbox(agent);
      if (withMcp) addMcpServer(box);
      const t0 = performance.now();
      const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS, ...extra]);
      child.send(`${JSON.stringify({ id: "s1", type: "get_state" })}\n`);
      const r = await child.out.line(`"id":"s1"`).catch(() => undefined);
      const ms = performance.now() - t0;
      const { peak } = await child.finish();
      if (!r || !r.line.includes('"success":true')) console.error(`${agent}: get_state failed: ${r?.line ?? (await child.stderr)}`);
      box.cleanup();
      if (i === 0) continue; // warm-up (page cache)
      (res[agent] ??= { ms: [], peak: [] }).ms.push(ms);
      res[agent].peak.push(peak);
    }
  }
  return res;
}

header("startup", N);
const plain = await measure(false);
printTable("Start-up (spawn → get_state response)", [
  { metric: "spawn → get_state", unit: "ms", pion: plain.pion!.ms, ref: plain.ref?.ms, goal: "< 20 ms" },
  { metric: "peak RSS", unit: "MB", pion: plain.pion!.peak, ref: plain.ref?.peak, goal: "< 45 MB" },
]);
const mcp = await measure(true);
printTable("Start-up with one MCP stdio server configured", [
  { metric: "spawn → get_state", unit: "ms", pion: mcp.pion!.ms, ref: mcp.ref?.ms, goal: "as without" },
  { metric: "peak RSS", unit: "MB", pion: mcp.pion!.peak, ref: mcp.ref?.peak },
]);
const ruled = await measure(false, ["--deny", "bash(rm *)"]);
printTable("Start-up with a permission rule (--deny 'bash(rm *)')", [
  { metric: "spawn → get_state", unit: "ms", pion: ruled.pion!.ms, ref: ruled.ref?.ms, goal: "as without" },
  { metric: "peak RSS", unit: "MB", pion: ruled.pion!.peak, ref: ruled.ref?.peak },
]);
