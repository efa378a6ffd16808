/**
 * The reference's built-in commands as every RPC client sees them: `/llama` and `/mcp` in
 * get_commands (its records, after the extensions' own), handled by pion instead of going to
 * the model; `/mcp` with pion's MCP servers; `--no-mcp`, `--no-extensions`, `-e builtin:mcp`,
 * settings `-builtin:mcp`; an extension's own `/mcp` in the built-in's place.
 */
import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const BUN = process.execPath;

setDefaultTimeout(90_000);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(stops.map((s) => s()))));

const LLAMA = { name: "llama", description: "Manage llama.cpp router models", source: "extension", path: "builtin:llama.cpp", sourceInfo: { path: "builtin:llama.cpp", source: "builtin", scope: "temporary", origin: "top-level" } };
const MCP = { name: "mcp", description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure", source: "extension", path: "builtin:mcp", sourceInfo: { path: "builtin:mcp", source: "builtin", scope: "temporary", origin: "top-level" } };

function setup(args: string[] = [], prepare?: (d: { home: string; cwd: string }) => void) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  prepare?.(dirs);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args] });
  stops.push(() => p.close(), () => fake.stop());
  return { fake, p, dirs };
}

const commands = async (p: Pion): Promise<Rec[]> => (await p.request({ type: "get_commands" })).data.commands;

/** Sends `message` as a prompt; returns its response and the notify frames written before it. */
async function prompt(p: Pion, message: string): Promise<{ response: Rec; notes: Rec[] }> {
  const from = p.records.length;
  const response = await p.request({ type: "prompt", message });
  const notes = p.records.slice(from).filter((r) => r.type === "extension_ui_request" && r.method === "notify");
  return { response, notes: notes.map(({ message, notifyType }) => ({ message, notifyType })) };
}

function extension(dir: string, name: string, body: string): string {
  mkdirSync(join(dir, "ext"), { recursive: true });
  const file = join(dir, "ext", name);
  writeFileSync(file, body);
  return file;
}

describe("built-in commands", () => {
  test.concurrent("get_commands lists /llama and /mcp with the reference's records, after an extension's own commands and before prompt templates", async () => {
    const { p, fake, dirs } = setup([], (d) => {
      mkdirSync(join(d.home, "prompts"), { recursive: true });
      writeFileSync(join(d.home, "prompts", "review.md"), "---\ndescription: Review\n---\nReview it");
    });
    const ext = extension(dirs.home, "hello.ts", `export default function (pi) { pi.registerCommand("hello", { description: "Say hello", handler: async (_a, ctx) => ctx.ui.notify("hello", "info") }); }`);
    const q = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext] });
    stops.push(() => q.close());
    expect(await commands(p)).toEqual([LLAMA, MCP, expect.objectContaining({ name: "review", source: "prompt" })]);
    expect((await commands(q)).map((c) => c.name)).toEqual(["hello", "llama", "mcp", "review"]);
    expect(p.wireIssues).toEqual([]);
    expect(fake.requests).toHaveLength(0);
  });

  test.concurrent("/mcp without servers says where to add them; /llama says it needs an interactive terminal; neither reaches the model", async () => {
    const { p, fake, dirs } = setup();
    const mcp = await prompt(p, "/mcp");
    expect(mcp.response).toMatchObject({ success: true, data: { disposition: "handled" } });
    expect(mcp.notes).toEqual([{ message: `No MCP servers are configured yet: add them to ${join(dirs.home, "mcp.json")} (or, in a trusted project, to .pion/mcp.json).`, notifyType: "info" }]);
    const llama = await prompt(p, "/llama");
    expect(llama.response).toMatchObject({ success: true, data: { disposition: "handled" } });
    expect(llama.notes).toEqual([{ message: expect.stringContaining("/llama works only in an interactive terminal"), notifyType: "warning" }]);
    const usage = await prompt(p, "/mcp enable x");
    expect(usage.notes).toEqual([{ message: "Usage: /mcp, or /mcp login|logout|reconnect [server]", notifyType: "warning" }]);
    expect(fake.requests).toHaveLength(0);
    expect(p.records.some((r) => r.type === "agent_start")).toBe(false);
  });

  test.concurrent("/mcp with a real server: its state and tools once it connected; login is for HTTP servers; reconnect takes the one server", async () => {
    const { p, fake } = setup([], (d) => writeFileSync(join(d.home, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: BUN, args: [EVERYTHING, "stdio"] } } })));
    // Asked at once: the command starts the servers and waits for them.
    const { response, notes } = await prompt(p, "/mcp");
    expect(response).toMatchObject({ success: true, data: { disposition: "handled" } });
    const status = (await p.request({ type: "get_mcp_status" })).data.servers as Rec[];
    expect(status[0]).toMatchObject({ name: "everything", state: "connected" });
    expect(notes).toEqual([{ message: `MCP servers:\neverything (stdio): connected · ${status[0]!.toolCount} tools`, notifyType: "info" }]);
    const login = await prompt(p, "/mcp login everything");
    expect(login.notes).toEqual([{ message: "No enabled MCP server signs in with OAuth: only HTTP servers do.", notifyType: "error" }]);
    const reconnect = await prompt(p, "/mcp reconnect");
    expect(reconnect.notes).toEqual([{ message: expect.stringMatching(/^MCP server "everything" is connected again \(connected · \d+ tools\)\.$/), notifyType: "info" }]);
    expect(fake.requests).toHaveLength(0);
  });

  test.concurrent("--no-mcp drops /mcp, which then goes to the model as text; --no-extensions drops both unless -e builtin: names one", async () => {
    const { p, fake } = setup(["--no-mcp"]);
    expect(await commands(p)).toEqual([LLAMA]);
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const { response } = await prompt(p, "/mcp");
    expect(response.data).toEqual({ disposition: "started" });
    await p.waitFor("agent_settled");
    expect(JSON.stringify(fake.requests[0]!.body)).toContain("/mcp");
    const none = setup(["--no-extensions"]);
    expect(await commands(none.p)).toEqual([]);
    const one = setup(["--no-extensions", "-e", "builtin:mcp"]);
    expect(await commands(one.p)).toEqual([MCP]);
    const off = setup(["--no-mcp", "-e", "builtin:mcp"]);
    expect(await commands(off.p)).toEqual([LLAMA]);
  });

  test.concurrent("settings extensions: a user's -builtin:mcp switches /mcp off, a trusted project's builtin:mcp back on", async () => {
    const user = setup([], (d) => writeSettings(d.home, { extensions: ["-builtin:mcp"] }));
    expect(await commands(user.p)).toEqual([LLAMA]);
    const project = setup(["--approve"], (d) => {
      writeSettings(d.home, { extensions: ["!builtin:*"] });
      mkdirSync(join(d.cwd, ".pion"), { recursive: true });
      writeFileSync(join(d.cwd, ".pion", "settings.json"), JSON.stringify({ extensions: ["+builtin:mcp"] }));
    });
    expect(await commands(project.p)).toEqual([MCP]);
  });

  test.concurrent("an extension's own /mcp takes the built-in's place: listed once, and its handler answers", async () => {
    const dirs = tempDirs();
    const fake = startFakeProvider();
    writeFakeModels(dirs.home, fake.url);
    const own = extension(dirs.home, "own-mcp.ts", `export default function (pi) { pi.registerCommand("mcp", { description: "My MCP", handler: async (args, ctx) => ctx.ui.notify("mine: " + args, "info") }); }`);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", own] });
    stops.push(() => p.close(), () => fake.stop());
    expect((await commands(p)).map((c) => [c.name, c.sourceInfo.path])).toEqual([["mcp", own], ["llama", "builtin:llama.cpp"]]);
    const { response, notes } = await prompt(p, "/mcp status");
    expect(response.data).toEqual({ disposition: "handled" });
    expect(notes).toEqual([{ message: "mine: status", notifyType: "info" }]);
    // createMcpExtension's /mcp is the same text as the built-in's, over its own servers.
    const factory = extension(dirs.home, "factory.ts", `import { createMcpExtension } from "@earendil-works/pi-coding-agent";\nexport default createMcpExtension({ loadConfig: () => ({ servers: [], errors: [] }) });`);
    const q = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", factory] });
    stops.push(() => q.close());
    expect((await commands(q)).map((c) => [c.name, c.sourceInfo.path])).toEqual([["mcp", factory], ["llama", "builtin:llama.cpp"]]);
    expect((await prompt(q, "/mcp")).notes).toEqual([{ message: `No MCP servers are configured yet: add them to ${join(dirs.home, "mcp.json")} (or, in a trusted project, to .pion/mcp.json).`, notifyType: "info" }]);
    expect(fake.requests).toHaveLength(0);
  });

  test.concurrent("json and print mode: a built-in command is handled without a model call, says nothing on stdout, and exits 0", async () => {
    const dirs = tempDirs();
    const json = await runPion(["--mode", "json", "/mcp"], { ...dirs, stdin: "" });
    expect(json.code).toBe(0);
    const lines = json.stdout.trim().split("\n").map((l) => JSON.parse(l) as Rec);
    expect(lines.map((l) => l.type)).toEqual(["session"]);
    const print = await runPion(["-p", "/llama"], { ...dirs, stdin: "" });
    expect(print).toMatchObject({ code: 0, stdout: "" });
  });
});
