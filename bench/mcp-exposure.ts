/**
 * What each MCP exposure costs in context: the tool declarations one model request carries with
 * server-everything configured (`direct`, `deferred`, `codemode`, `hidden`), against the same
 * request without MCP. Tokens are estimated as characters / 4 of the declarations' JSON (name,
 * description, parameters), as sent to the fake provider.
 */
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { BINARY, Pion, tempDirs, writeFakeModels } from "../test/support/pion.ts";

const ROOT = resolve(import.meta.dir, "..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

async function declared(exposure: string | undefined) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  if (exposure) writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"], exposure } } }));
  const p = new Pion({ ...dirs, binary: existsSync(BINARY), args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  if (exposure) await p.waitFor((r) => r.type === "mcp_status" && r.name === "everything" && r.state === "connected", 0, 30000);
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  await p.request({ type: "prompt", message: "hi" });
  await p.waitFor("agent_settled");
  await p.close();
  await fake.stop();
  const tools = ((fake.requests[0]!.body as { tools?: { name: string }[] }).tools ?? []);
  return { chars: JSON.stringify(tools).length, names: tools.map((t) => t.name) };
}

const base = await declared(undefined);
console.log("| exposure | tools added to each request | ≈ tokens added |\n|---|---|---|");
for (const exposure of ["direct", "deferred", "codemode", "hidden"]) {
  const r = await declared(exposure);
  const added = r.names.filter((n) => !base.names.includes(n));
  console.log(`| \`${exposure}\` | ${added.length} (${added.filter((n) => !n.startsWith("mcp__")).join(", ") || "-"}${added.some((n) => n.startsWith("mcp__")) ? `${added.some((n) => !n.startsWith("mcp__")) ? ", " : ""}${added.filter((n) => n.startsWith("mcp__")).length} server tools` : ""}) | ${Math.round((r.chars - base.chars) / 4)} |`);
}
