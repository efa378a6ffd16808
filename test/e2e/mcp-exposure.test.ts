import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const everything = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [EVERYTHING, "stdio"], ...extra });

setDefaultTimeout(60_000);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(stops.map((s) => s()))));

function setup(servers: Record<string, unknown>, args: string[] = [], dirs = tempDirs()) {
  const fake = startFakeProvider();
  stops.push(() => fake.stop());
  writeFakeModels(dirs.home, fake.url);
  writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args] });
  return { fake, p, dirs };
}

const connected = (p: Pion, name: string) => p.waitFor((r) => r.type === "mcp_status" && r.name === name && r.state === "connected", 0, 30000);
const declared = (body: unknown) => ((body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
const endOf = (p: Pion, id: string) => p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === id);
const text = (r: Rec | undefined) => ((r?.result as { content: { text?: string }[] }).content ?? []).map((c) => c.text ?? "").join("\n");

describe("MCP exposure", () => {
  test.concurrent("deferred: only tool_search is declared; it loads matches for the next call; they stay declared on the branch after a reopen", async () => {
    const { fake, p, dirs } = setup({ everything: everything({ exposure: "deferred", toolExposure: { "get-sum": "direct", "get-env": "hidden" } }) });
    await connected(p, "everything");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "s", name: "tool_search", arguments: { query: "echo back the message", limit: 1 } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "e", name: "mcp__everything__echo", arguments: { message: "found" } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "env", name: "tool_search", arguments: { query: "get-env environment" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const first = declared(fake.requests[0]!.body);
    expect(first).toContain("tool_search");
    expect(first).toContain("mcp__everything__get_sum");
    expect(first).not.toContain("mcp__everything__echo");
    expect(first.filter((n) => n.startsWith("mcp__"))).toEqual(["mcp__everything__get_sum"]);
    expect(text(endOf(p, "s"))).toContain("mcp__everything__echo");
    expect(declared(fake.requests[1]!.body)).toContain("mcp__everything__echo");
    expect(endOf(p, "e")).toMatchObject({ isError: false });
    // a hidden tool is never found
    expect(text(endOf(p, "env"))).not.toContain("get_env");
    expect(await p.close()).toBe(0);

    const again = setup({ everything: everything({ exposure: "deferred" }) }, ["--continue"], dirs);
    await connected(again.p, "everything");
    again.fake.enqueue({ blocks: [{ type: "text", text: "still" }] });
    await again.p.request({ type: "prompt", message: "more" });
    await again.p.waitFor("agent_settled");
    expect(declared(again.fake.requests[0]!.body)).toContain("mcp__everything__echo");
    // Another branch (before the search) does not have it.
    const forkable = (await again.p.request({ type: "get_fork_messages" })).data as { messages: { entryId: string }[] };
    await again.p.request({ type: "branch", entryId: forkable.messages[0]!.entryId });
    again.fake.enqueue({ blocks: [{ type: "text", text: "other branch" }] });
    const from = again.p.records.length;
    await again.p.request({ type: "prompt", message: "elsewhere" });
    await again.p.waitFor((r) => r.type === "agent_settled", from);
    const other = declared(again.fake.requests[1]!.body);
    expect(other).toContain("tool_search");
    expect(other).not.toContain("mcp__everything__echo");
    await again.p.close();
  });

  test.concurrent("hidden: no tool of the server is declared or searchable, nor its resources", async () => {
    const { fake, p } = setup({ everything: everything({ exposure: "hidden" }) });
    await connected(p, "everything");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const names = declared(fake.requests[0]!.body);
    expect(names.filter((n) => n.startsWith("mcp__") || n.includes("mcp_resource") || n === "tool_search" || n === "codemode")).toEqual([]);
    await p.close();
  });

  test.concurrent("resource tools list, page and read text and binaries; a server without resources is named", async () => {
    const { fake, p, dirs } = setup({ everything: everything({ exposure: "direct" }) });
    await connected(p, "everything");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "l", name: "list_mcp_resources", arguments: {} },
        { type: "toolCall", id: "l1", name: "list_mcp_resources", arguments: { server: "everything" } },
        { type: "toolCall", id: "t", name: "list_mcp_resource_templates", arguments: {} },
        { type: "toolCall", id: "r", name: "read_mcp_resource", arguments: { server: "everything", uri: "demo://resource/dynamic/text/7" } },
        { type: "toolCall", id: "b", name: "read_mcp_resource", arguments: { server: "everything", uri: "demo://resource/dynamic/blob/7" } },
        { type: "toolCall", id: "x", name: "read_mcp_resource", arguments: { server: "nope", uri: "demo://x" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const names = declared(fake.requests[0]!.body);
    expect(names).toEqual(expect.arrayContaining(["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]));
    const all = JSON.parse(text(endOf(p, "l")));
    expect(all.resources.length).toBeGreaterThan(0);
    expect(all.resources[0]).toMatchObject({ server: "everything", uri: expect.any(String), name: expect.any(String) });
    expect(JSON.parse(text(endOf(p, "l1"))).server).toBe("everything");
    expect(JSON.parse(text(endOf(p, "t"))).resourceTemplates.map((t: Rec) => t.uriTemplate)).toContain("demo://resource/dynamic/text/{resourceId}");
    expect(text(endOf(p, "r"))).toContain("7");
    const saved = /saved to (\S+)\]/.exec(text(endOf(p, "b")))?.[1];
    expect(saved && existsSync(saved)).toBe(true);
    expect(endOf(p, "x")).toMatchObject({ isError: true });
    expect(text(endOf(p, "x"))).toContain("servers with resources: everything");
    await p.close();
    void dirs;
  });

  test.concurrent("resource tools are read-only for the permission gate, a server tool without readOnlyHint is not", async () => {
    const { fake, p } = setup({ everything: everything({ exposure: "direct" }) }, ["--permission-mode", "read-only"]);
    await connected(p, "everything");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "l", name: "list_mcp_resources", arguments: { server: "everything" } },
        { type: "toolCall", id: "w", name: "mcp__everything__toggle_simulated_logging", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(endOf(p, "l")).toMatchObject({ isError: false });
    expect(endOf(p, "w")).toMatchObject({ isError: true });
    expect(text(endOf(p, "w"))).not.toContain("not found");
    await p.close();
  });

  test.concurrent("the servers' logging notifications go to mcp.log", async () => {
    const { fake, p, dirs } = setup({ everything: everything({ exposure: "direct" }) });
    await connected(p, "everything");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "w", name: "mcp__everything__toggle_simulated_logging", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const log = join(dirs.home, "mcp.log");
    for (let i = 0; i < 100 && !existsSync(log); i++) await Bun.sleep(100);
    expect(readFileSync(log, "utf8")).toMatch(/^\S+Z \[everything\] \w+ /);
    await p.close();
  });
});
