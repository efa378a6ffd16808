import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const FILESYSTEM = join(ROOT, "node_modules/@modelcontextprotocol/server-filesystem/dist/index.js");
const DYNAMIC = join(ROOT, "test/fixtures/mcp/dynamic-server.ts");
const BUN = process.execPath;

const everything = (extra: Record<string, unknown> = {}) => ({ command: BUN, args: [EVERYTHING, "stdio"], ...extra });

/** A pion whose PION_HOME has `servers` in mcp.json and the fake provider in models.json. */
function setup(servers: Record<string, unknown>, o: { args?: string[]; env?: Record<string, string>; binary?: boolean } = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  // These tests call server tools as the model: declared (the default, codemode, has its own tests).
  const direct = Object.fromEntries(Object.entries(servers).map(([k, v]) => [k, { exposure: "direct", ...(v as object) }]));
  writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: direct }));
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...(o.args ?? [])], env: o.env, binary: o.binary });
  return { fake, p, dirs };
}

async function waitConnected(p: Pion, name: string): Promise<Rec> {
  return p.waitFor((r) => r.type === "mcp_status" && r.name === name && (r.state === "connected" || r.state === "failed"), 0, 30000);
}

const toolNames = (body: unknown) => ((body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
const endOf = (p: Pion, id: string) => p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === id);

/** Running (a zombie waiting for a reaper that a container's init may never be counts as gone). */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

// Real servers start in a second or two, more on a loaded 2-core machine.
setDefaultTimeout(60_000);

const cleanups: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(cleanups.map((c) => c()))));

describe("MCP servers over stdio", () => {
  test.concurrent("a model call of a server tool returns the server's result; status and tools are reported", async () => {
    const { fake, p } = setup({ everything: everything() });
    expect((await waitConnected(p, "everything")).state).toBe("connected");
    const status = await p.request({ type: "get_mcp_status" });
    const server = (status.data as { servers: Rec[] }).servers[0]!;
    expect(server).toMatchObject({ name: "everything", state: "connected", transport: "stdio" });
    expect(server.toolCount).toBeGreaterThan(5);
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "mcp__everything__echo", arguments: { message: "hi there" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "echo" });
    await p.waitFor("agent_settled");
    expect(endOf(p, "t1")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "Echo: hi there" }] } });
    const names = toolNames(fake.requests[0]!.body);
    expect(names).toContain("mcp__everything__echo");
    expect(names).toContain("mcp__everything__get-sum".replace(/-/g, "_"));
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("Echo: hi there");
    const caps = await p.request({ type: "get_capabilities" });
    expect((caps.data as { features: Rec }).features.mcp).toBe(true);
    expect((caps.data as { commands: string[] }).commands).toContain("get_mcp_status");
    await p.close();
    await fake.stop();
  });

  test.concurrent("progress notifications arrive as tool_execution_update; images map to image content", async () => {
    const { fake, p } = setup({ everything: everything() });
    await waitConnected(p, "everything");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "long", name: "mcp__everything__trigger_long_running_operation", arguments: { duration: 0.6, steps: 3 } },
        { type: "toolCall", id: "img", name: "mcp__everything__get_tiny_image", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const updates = p.records.filter((r) => r.type === "tool_execution_update" && r.toolCallId === "long");
    // every update carries all progress so far; the last notification may coincide with the result
    expect(updates.length).toBeGreaterThan(0);
    expect(JSON.stringify(updates.at(-1)!.partialResult)).toContain("progress 1/3");
    expect(endOf(p, "long")).toMatchObject({ isError: false });
    const img = endOf(p, "img")!;
    const content = (img.result as { content: Rec[] }).content;
    expect(content.some((c) => c.type === "image" && c.mimeType === "image/png" && typeof c.data === "string")).toBe(true);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a server that fails to start is reported; pion keeps serving and other servers work", async () => {
    const { fake, p } = setup({ broken: { command: "/nonexistent/mcp-server" }, everything: everything() });
    const broken = await waitConnected(p, "broken");
    expect(broken.state).toBe("failed");
    expect(String(broken.error)).toContain("/nonexistent/mcp-server");
    await waitConnected(p, "everything");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "e", name: "mcp__everything__echo", arguments: { message: "still here" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(endOf(p, "e")).toMatchObject({ isError: false });
    const servers = ((await p.request({ type: "get_mcp_status" })).data as { servers: Rec[] }).servers;
    expect(servers.find((s) => s.name === "broken")).toMatchObject({ state: "failed", toolCount: 0 });
    expect(p.stderr).toContain("/nonexistent/mcp-server");
    await p.close();
    await fake.stop();
  });

  test.concurrent("a server killed mid-call: the call fails naming the server, the next call reconnects", async () => {
    const dirs0 = tempDirs();
    const pidFile = join(dirs0.cwd, "server.pid");
    const wrapped = { command: "bash", args: ["-c", `echo $$ >> ${pidFile}; exec ${BUN} ${EVERYTHING} stdio`] };
    const { fake, p } = setup({ flaky: wrapped });
    await waitConnected(p, "flaky");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "long", name: "mcp__flaky__trigger_long_running_operation", arguments: { duration: 30, steps: 30 } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "again", name: "mcp__flaky__echo", arguments: { message: "back" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor((r) => r.type === "tool_execution_update" && r.toolCallId === "long", 0, 30000);
    const first = Number(readFileSync(pidFile, "utf8").trim().split("\n")[0]);
    process.kill(first, "SIGKILL");
    await p.waitFor("agent_settled", 0, 30000);
    const failed = endOf(p, "long")!;
    expect(failed.isError).toBe(true);
    expect(JSON.stringify(failed.result)).toContain('MCP server \\"flaky\\"');
    expect(endOf(p, "again")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "Echo: back" }] } });
    const pids = readFileSync(pidFile, "utf8").trim().split("\n").map(Number);
    expect(pids.length).toBe(2);
    expect(await p.close()).toBe(0);
    // no server process is left behind after exit
    for (const pid of pids) expect(alive(pid)).toBe(false);
    await fake.stop();
  });

  test.concurrent("a slow call past the server's timeout is an error result, and the run goes on", async () => {
    const { fake, p } = setup({ slow: everything({ timeout: 0.5 }) });
    await waitConnected(p, "slow");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "s", name: "mcp__slow__trigger_long_running_operation", arguments: { duration: 5, steps: 1 } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled", 0, 30000);
    const end = endOf(p, "s")!;
    expect(end.isError).toBe(true);
    expect(JSON.stringify(end.result).toLowerCase()).toContain("timed out");
    expect(p.records.findLast((r) => r.type === "message_end")).toMatchObject({ message: { role: "assistant", stopReason: "stop" } });
    await p.close();
    await fake.stop();
  });

  test.concurrent("${VAR} in env expands from pion's environment; a missing variable fails that server only; no provider key reaches the server", async () => {
    const { fake, p } = setup(
      {
        withvar: everything({ env: { MCP_PROBE: "value=${PION_MCP_TEST_VALUE}" } }),
        missing: everything({ env: { X: "${PION_MCP_TEST_UNSET}" } }),
      },
      { env: { PION_MCP_TEST_VALUE: "expanded-42", ANTHROPIC_API_KEY: "sk-ant-mcp-test-0123456789" } },
    );
    const missing = await waitConnected(p, "missing");
    expect(missing.state).toBe("failed");
    expect(String(missing.error)).toContain("PION_MCP_TEST_UNSET");
    await waitConnected(p, "withvar");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "env", name: "mcp__withvar__get_env", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const out = JSON.stringify(endOf(p, "env")!.result);
    // The server got the expanded value; printed back, it is masked (a ${VAR} value is a credential).
    expect(out).toContain("value=[redacted: PION_MCP_TEST_VALUE]");
    expect(out).not.toContain("expanded-42");
    // pion's provider key stays with pion: the server's environment does not have it
    expect(out).toContain("PATH");
    expect(out).not.toContain("ANTHROPIC_API_KEY");
    expect(out).not.toContain("sk-ant-mcp-test");
    await p.close();
    await fake.stop();
  });

  test.concurrent("a tool list change is offered on the next model call; isError results are errors", async () => {
    const { fake, p } = setup({ dyn: { command: BUN, args: [DYNAMIC] } });
    await waitConnected(p, "dyn");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "u", name: "mcp__dyn__unlock", arguments: {} },
        { type: "toolCall", id: "f", name: "mcp__dyn__fail", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(endOf(p, "f")).toMatchObject({ isError: true, result: { content: [{ type: "text", text: "it went wrong" }] } });
    await p.waitFor((r) => r.type === "mcp_status" && r.name === "dyn" && r.toolCount === 3);
    expect(toolNames(fake.requests[0]!.body)).not.toContain("mcp__dyn__secret");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "s", name: "mcp__dyn__secret", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "again" });
    await p.waitFor((r) => r.type === "agent_settled", p.records.findIndex((r) => r.type === "agent_settled") + 1);
    expect(toolNames(fake.requests[2]!.body)).toContain("mcp__dyn__secret");
    expect(endOf(p, "s")).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "the secret is 42" }] } });
    await p.close();
    await fake.stop();
  });

  test.concurrent("--tools names MCP tools and patterns; --no-mcp connects nothing", async () => {
    const { fake, p } = setup({ everything: everything() }, { args: ["--tools", "read,mcp__everything__echo,mcp__everything__get_s*"] });
    await waitConnected(p, "everything");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(toolNames(fake.requests[0]!.body).sort()).toEqual([
      "mcp__everything__echo",
      "mcp__everything__get_structured_content",
      "mcp__everything__get_sum",
      "read",
    ]);
    await p.close();
    await fake.stop();

    const off = setup({ everything: everything() }, { args: ["--no-mcp"] });
    const status = await off.p.request({ type: "get_mcp_status" });
    expect(status.data).toEqual({ servers: [] });
    expect(off.p.records.some((r) => r.type === "mcp_status")).toBe(false);
    await off.p.close();
    await off.fake.stop();
  });

  test.concurrent("a project's .pion/mcp.json is read only in a trusted folder", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const marker = join(dirs.cwd, "project-server-ran");
    mkdirSync(join(dirs.cwd, ".pion"), { recursive: true });
    writeFileSync(join(dirs.cwd, ".pion", "mcp.json"), JSON.stringify({ mcpServers: { evil: { command: "bash", args: ["-c", `touch ${marker}`] } } }));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const status = await p.request({ type: "get_mcp_status" });
    expect(status.data).toEqual({ servers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    await p.close();
    expect(existsSync(marker)).toBe(false);
    // trusted for this run: the project's server is configured (and so starts)
    const trusted = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--approve"] });
    const failed = await waitConnected(trusted, "evil");
    expect(failed).toMatchObject({ name: "evil", source: join(dirs.cwd, ".pion", "mcp.json") });
    await trusted.close();
    expect(existsSync(marker)).toBe(true);
    await fake.stop();
  });

  test.concurrent("SIGTERM to pion stops its servers", async () => {
    const dirs0 = tempDirs();
    const pidFile = join(dirs0.cwd, "server.pid");
    const { fake, p } = setup({ s: { command: "bash", args: ["-c", `echo $$ > ${pidFile}; exec ${BUN} ${EVERYTHING} stdio`] } });
    await waitConnected(p, "s");
    const pid = Number(readFileSync(pidFile, "utf8").trim());
    expect(alive(pid)).toBe(true);
    p.kill("SIGTERM");
    expect(await p.exited).toBe(143);
    for (let i = 0; i < 50 && alive(pid); i++) await Bun.sleep(20); // the kernel reaps it after pion's exit
    expect(alive(pid)).toBe(false);
    await fake.stop();
  });
});

describe("MCP servers over streamable HTTP", () => {
  test.concurrent("server-everything over HTTP, and a server that needs authorization", async () => {
    const probe = Bun.serve({ port: 0, fetch: () => new Response("") });
    const port = probe.port;
    probe.stop(true);
    const server = Bun.spawn([BUN, EVERYTHING, "streamableHttp"], { env: { ...process.env, PORT: String(port) }, stdout: "ignore", stderr: "pipe" });
    cleanups.push(async () => server.kill());
    const dec = new TextDecoder();
    let seen = "";
    for await (const chunk of server.stderr) {
      seen += dec.decode(chunk);
      if (seen.includes("listening")) break;
    }
    const auth = Bun.serve({ port: 0, fetch: () => new Response("unauthorized", { status: 401 }) });
    cleanups.push(async () => auth.stop(true));
    const { fake, p } = setup({
      remote: { url: `http://127.0.0.1:${port}/mcp`, headers: { "X-Probe": "1" } },
      locked: { url: `http://127.0.0.1:${auth.port}/mcp` },
    });
    expect((await waitConnected(p, "remote")).state).toBe("connected");
    const locked = await waitConnected(p, "locked");
    expect(locked.state).toBe("failed");
    expect(String(locked.error)).toContain("OAuth");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "sum", name: "mcp__remote__get_sum", arguments: { a: 2, b: 40 } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    expect(JSON.stringify(endOf(p, "sum")!.result)).toContain("42");
    await p.close();
    await fake.stop();
  });
});

describe("MCP through the binary and the filesystem server", () => {
  test.concurrent("dist/pion calls server-filesystem's list_directory", async () => {
    const dirs0 = tempDirs();
    writeFileSync(join(dirs0.cwd, "hello.txt"), "hi");
    const { fake, p } = setup({ fs: { command: BUN, args: [FILESYSTEM, dirs0.cwd] } }, { binary: true });
    expect((await waitConnected(p, "fs")).state).toBe("connected");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "ls", name: "mcp__fs__list_directory", arguments: { path: dirs0.cwd } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "list" });
    await p.waitFor("agent_settled");
    expect(JSON.stringify(endOf(p, "ls")!.result)).toContain("hello.txt");
    await p.close();
    await fake.stop();
  });
});

describe("pion mcp", () => {
  test.concurrent("add, list (text and --json), remove", async () => {
    const dirs = tempDirs();
    const env = {};
    const add = await runPion(["mcp", "add", "everything", "--", BUN, EVERYTHING, "stdio"], { ...dirs, env });
    expect(add.code).toBe(0);
    const addHttp = await runPion(["mcp", "add", "docs", "--url", "http://127.0.0.1:1/mcp", "--header", "Authorization=Bearer x"], { ...dirs, env });
    expect(addHttp.code).toBe(0);
    const file = JSON.parse(readFileSync(join(dirs.home, "mcp.json"), "utf8"));
    expect(file.mcpServers.everything).toEqual({ command: BUN, args: [EVERYTHING, "stdio"] });
    expect(file.mcpServers.docs).toEqual({ url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer x" } });
    const list = await runPion(["mcp", "list", "--json"], { ...dirs, env });
    expect(list.code).toBe(1); // docs cannot connect
    const servers = JSON.parse(list.stdout).servers as Rec[];
    expect(servers.find((s) => s.name === "everything")).toMatchObject({ state: "connected", transport: "stdio" });
    expect((servers.find((s) => s.name === "everything")!.tools as string[]).includes("mcp__everything__echo")).toBe(true);
    expect(servers.find((s) => s.name === "docs")).toMatchObject({ state: "failed", transport: "http" });
    const text = await runPion(["mcp", "list"], { ...dirs, env });
    expect(text.stdout).toContain("everything");
    expect(text.stdout).toContain("connected");
    const rm = await runPion(["mcp", "remove", "docs"], { ...dirs, env });
    expect(rm.code).toBe(0);
    expect(Object.keys(JSON.parse(readFileSync(join(dirs.home, "mcp.json"), "utf8")).mcpServers)).toEqual(["everything"]);
    const again = await runPion(["mcp", "remove", "docs"], { ...dirs, env });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("docs");
  });
});
