/**
 * The reference's built-in extension factories as a user's extension calls them
 * (`export default createMcpExtension({...})` in a file loaded with -e): over pion's own MCP
 * client, codemode and tool_search, with the permission gate and project trust applying; and
 * the whole-program entry points main and runRpcMode, which are errors inside pion (they work in `pion run`, program-run.test.ts; runPrintMode:
 * extension-print-mode.test.ts).
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const BUN = process.execPath;
const server = (extra: Record<string, unknown> = {}) => ({ command: BUN, args: [EVERYTHING, "stdio"], ...extra });

setDefaultTimeout(90_000);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(stops.map((s) => s()))));

/** An extension file outside the cwd whose module body is `body`. */
function extension(dir: string, body: string): string {
  const file = join(dir, "ext", "builtin.ts");
  mkdirSync(join(dir, "ext"), { recursive: true });
  writeFileSync(file, `import { createCodemodeExtension, createMcpExtension, createToolSearchExtension } from "@earendil-works/pi-coding-agent";\n${body}\n`);
  return file;
}

function setup(body: string, args: string[] = [], prepare?: (d: { home: string; cwd: string }) => void) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  prepare?.(dirs);
  const ext = extension(dirs.home, body);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext, ...args] });
  stops.push(() => p.close(), () => fake.stop());
  return { fake, p, dirs };
}

type Call = { id: string; name: string; arguments: Record<string, unknown> };
/** One prompt whose model replies are these tool calls, one per reply, then "done". */
async function turn(fake: ReturnType<typeof startFakeProvider>, p: Pion, calls: Call[]): Promise<void> {
  for (const c of calls) fake.enqueue({ blocks: [{ type: "toolCall", ...c }] });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "go" });
  await p.waitFor("agent_settled", from);
}

const declared = (body: unknown) => ((body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
const endOf = (p: Pion, id: string) => p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === id);
const text = (r: Rec | undefined) => ((r?.result as { content?: { text?: string }[] } | undefined)?.content ?? []).map((c) => c.text ?? "").join("\n");
const connected = (p: Pion, name: string) => p.waitFor((r) => r.type === "mcp_status" && r.name === name && (r.state === "connected" || r.state === "failed"), 0, 60_000);

const withLoadConfig = (servers: Record<string, unknown>) =>
  `export default createMcpExtension({ loadConfig: (ctx) => ({ servers: Object.entries(${JSON.stringify(servers)}).map(([name, config]) => ({ name, config, source: "ext", scope: "extension" })), errors: [] }) });`;

describe("createMcpExtension", () => {
  test.concurrent("loadConfig's servers connect through pion's MCP; the model calls their tools; /mcp reports them", async () => {
    const { fake, p } = setup(withLoadConfig({ ext: server({ exposure: "direct" }), broken: { url: "ftp://nowhere" } }), [], (d) =>
      writeFileSync(join(d.home, "mcp.json"), JSON.stringify({ mcpServers: { configured: server({ exposure: "direct" }) } })),
    );
    expect((await connected(p, "ext")).state).toBe("connected");
    // The extension's servers take the place of mcp.json's, as the reference's built-in MCP gives way to it.
    const status = (await p.request({ type: "get_mcp_status" })).data as { servers: Rec[] };
    expect(status.servers.map((s) => [s.name, s.state])).toEqual([
      ["ext", "connected"],
      ["broken", "failed"],
    ]);
    await turn(fake, p, [{ id: "t1", name: "mcp__ext__echo", arguments: { message: "from an extension" } }]);
    expect(declared(fake.requests[0]!.body)).toContain("mcp__ext__echo");
    expect(declared(fake.requests[0]!.body).some((n) => n.startsWith("mcp__configured__"))).toBe(false);
    expect(endOf(p, "t1")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "Echo: from an extension" }] } });
    // The bad entry is reported, the others are not held up by it.
    expect(p.records.some((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes("url must be http or https"))).toBe(true);
    const from = p.records.length;
    await p.request({ type: "prompt", message: "/mcp" });
    const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).startsWith("MCP servers:"), from);
    expect(String(note.message)).toMatch(/^ext \(stdio\): connected · \d+ tools$/m);
    expect(String(note.message)).toContain("broken (http): failed: ");
  });

  test.concurrent("its servers' tools meet the permission rules as any MCP tool", async () => {
    const { fake, p } = setup(withLoadConfig({ ext: server({ exposure: "direct" }) }), ["--deny", "mcp__ext__echo"]);
    await connected(p, "ext");
    await turn(fake, p, [{ id: "d1", name: "mcp__ext__echo", arguments: { message: "blocked" } }]);
    const end = endOf(p, "d1");
    expect(end?.isError).toBe(true);
    expect(text(end)).toContain("denied");
    expect(text(end)).not.toContain("Echo: blocked");
  });

  test.concurrent("a server with the default exposure is reached from pion's codemode, named in the system prompt", async () => {
    const { fake, p } = setup(withLoadConfig({ ext: server({ description: "the test server" }) }));
    await connected(p, "ext");
    await turn(fake, p, [{ id: "c1", name: "codemode", arguments: { code: `const r = await tools.mcp__ext__echo({ message: "scripted" }); return r.content[0].text;` } }]);
    const first = declared(fake.requests[0]!.body);
    expect(first).toContain("codemode");
    expect(first.filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(JSON.stringify(fake.requests[0]!.body)).toContain("- ext (`mcp__ext__*`; call its tools from `codemode` scripts): the test server");
    expect(text(endOf(p, "c1"))).toContain("Echo: scripted");
    expect(p.records.some((r) => r.type === "tool_execution_end" && r.parentToolCallId === "c1" && r.toolName === "mcp__ext__echo" && r.isError === false)).toBe(true);
  });

  test.concurrent("by default it reads mcp.json as pion does: an untrusted project's servers stay off", async () => {
    const { p } = setup("export default createMcpExtension();", [], (d) => {
      mkdirSync(join(d.cwd, ".pion"), { recursive: true });
      writeFileSync(join(d.cwd, ".pion", "mcp.json"), JSON.stringify({ mcpServers: { project: server({ exposure: "direct" }) } }));
      writeFileSync(join(d.home, "mcp.json"), JSON.stringify({ mcpServers: { mine: server({ exposure: "direct" }) } }));
    });
    expect((await connected(p, "mine")).state).toBe("connected");
    const status = (await p.request({ type: "get_mcp_status" })).data as { servers: Rec[] };
    expect(status.servers.map((s) => s.name)).toEqual(["mine"]);
  });

  test.concurrent("--no-mcp keeps the extension's servers off too", async () => {
    const { p } = setup(withLoadConfig({ ext: server({ exposure: "direct" }) }), ["--no-mcp"]);
    const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify" && String(r.message).includes("--no-mcp"));
    expect(String(note.message)).toContain("ext not started");
    expect(((await p.request({ type: "get_mcp_status" })).data as { servers: Rec[] }).servers).toEqual([]);
  });
});

describe("createCodemodeExtension and createToolSearchExtension", () => {
  test.concurrent("codemode without MCP: scripts call the declared tools through the gate, as nested calls", async () => {
    const { fake, p } = setup("export default createCodemodeExtension();", ["--tools", "+codemode", "--deny", "bash(*)"], (d) => writeFileSync(join(d.cwd, "a.txt"), "alpha\n"));
    await turn(fake, p, [{ id: "c0", name: "codemode", arguments: { code: `const t = await tools.read({ path: "a.txt" }); let e = "none"; try { await tools.bash({ command: "echo hi" }); } catch (err) { e = "refused"; } return t.trim() + " " + e;` } }, { id: "s1", name: "codemode", arguments: { code: `store("n", 41); return "kept";` } }, { id: "s2", name: "codemode", arguments: { code: `return load("n") + 1;` } }]);
    expect(declared(fake.requests[0]!.body)).toContain("codemode");
    const end = endOf(p, "c0");
    expect(end?.isError).toBe(false);
    expect(text(end)).toContain("alpha refused");
    const nested = p.records.filter((r) => r.type === "tool_execution_end" && r.parentToolCallId === "c0");
    expect(nested.map((r) => [r.toolName, r.isError])).toEqual([
      ["read", false],
      ["bash", true],
    ]);
    expect(text(nested[1])).toContain("denied");
    // store() / load() keep values across scripts on the branch.
    expect(text(endOf(p, "s2"))).toMatch(/\b42$/);
  });

  test.concurrent("both register inactive, as the reference's: declared once --tools names them or pi.setActiveTools activates them", async () => {
    const body = `export default (pi) => {
  createCodemodeExtension()(pi);
  createToolSearchExtension()(pi);
  pi.registerCommand("activate", { handler: async (_args, ctx) => { pi.setActiveTools([...pi.getActiveTools(), "tool_search"]); ctx.ui.notify("activated", "info"); } });
};`;
    const { fake, p } = setup(body);
    await turn(fake, p, []);
    const before = declared(fake.requests[0]!.body);
    expect(before).toContain("read");
    expect(before.filter((n) => n === "codemode" || n === "tool_search")).toEqual([]);
    await p.request({ type: "prompt", message: "/activate" });
    await p.waitFor((r) => r.type === "extension_ui_request" && r.message === "activated");
    await turn(fake, p, []);
    const after = declared(fake.requests[1]!.body);
    expect(after).toContain("tool_search");
    expect(after).toContain("read");
    expect(after).not.toContain("codemode");
  });

  test.concurrent("codemode with MCP servers: scripts reach tools the model is not given (deferred ones)", async () => {
    const { fake, p } = setup("export default createCodemodeExtension();", [], (d) => {
      writeFileSync(join(d.home, "mcp.json"), JSON.stringify({ mcpServers: { everything: server({ exposure: "deferred" }) } }));
      writeSettings(d.home, { defaultTools: ["+codemode"] });
    });
    await connected(p, "everything");
    await turn(fake, p, [{ id: "c2", name: "codemode", arguments: { code: `const r = await tools.mcp__everything__echo({ message: "deferred" }); return r.content[0].text;` } }]);
    const first = declared(fake.requests[0]!.body);
    expect(first).toContain("codemode");
    expect(first).not.toContain("mcp__everything__echo");
    expect(text(endOf(p, "c2"))).toContain("Echo: deferred");
  });

  test.concurrent("tool_search loads the undeclared tools of pion's MCP servers for the next call", async () => {
    const { fake, p } = setup("export default createToolSearchExtension();", ["--tools", "+tool_search"], (d) => writeFileSync(join(d.home, "mcp.json"), JSON.stringify({ mcpServers: { everything: server() }, autoEnableCodemode: false })));
    await connected(p, "everything");
    await turn(fake, p, [{ id: "s", name: "tool_search", arguments: { query: "echo back the message", limit: 1 } }, { id: "e", name: "mcp__everything__echo", arguments: { message: "found" } }]);
    const first = declared(fake.requests[0]!.body);
    expect(first).toContain("tool_search");
    expect(first).not.toContain("mcp__everything__echo");
    expect(text(endOf(p, "s"))).toContain("mcp__everything__echo");
    expect(declared(fake.requests[1]!.body)).toContain("mcp__everything__echo");
    expect(endOf(p, "e")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "Echo: found" }] } });
  });
});

describe("the whole-program entry points", () => {
  test.concurrent("an extension that calls main or runRpcMode gets an error saying why; pion keeps serving", async () => {
    const body = `import { main, runRpcMode } from "@earendil-works/pi-coding-agent";
export default (pi) => pi.registerCommand("entry", { handler: async (_args, ctx) => {
  const out = [];
  for (const call of [() => main(["--version"]), () => runRpcMode({})]) {
    try { await call(); out.push("returned"); } catch (err) { out.push(err.message); }
  }
  ctx.ui.notify(out.join("\\n"), "info");
} });`;
    const { p } = setup(body);
    await p.request({ type: "prompt", message: "/entry" });
    const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify");
    const lines = String(note.message).split("\n");
    expect(lines.map((l) => l.split(":")[0])).toEqual(["main cannot run here", "runRpcMode cannot run here"]);
    for (const l of lines) expect(l).toMatch(/stdin and stdout.*pion --mode rpc.*pion run <program>/);
    expect(((await p.request({ type: "get_state" })) as Rec).success).toBe(true);
  });
});
