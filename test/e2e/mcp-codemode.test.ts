import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const ROOT = resolve(import.meta.dir, "../..");
const EVERYTHING = join(ROOT, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const everything = (extra: Record<string, unknown> = {}) => ({ command: process.execPath, args: [EVERYTHING, "stdio"], exposure: "codemode", ...extra });

setDefaultTimeout(90_000);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(stops.map((s) => s()))));

function setup(args: string[] = [], dirs = tempDirs(), servers: Record<string, unknown> = { everything: everything() }, binary = false) {
  const fake = startFakeProvider();
  stops.push(() => fake.stop());
  writeFakeModels(dirs.home, fake.url);
  writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
  const p = new Pion({ ...dirs, binary, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args] });
  return { fake, p, dirs };
}

const connected = (p: Pion, name: string) => p.waitFor((r) => r.type === "mcp_status" && r.name === name && r.state === "connected", 0, 30000);
const declared = (body: unknown) => ((body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name);
const endOf = (p: Pion, id: string) => p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === id);
const text = (r: Rec | undefined) => ((r?.result as { content: { text?: string }[] } | undefined)?.content ?? []).map((c) => c.text ?? "").join("\n");

/** Runs scripts as the model's codemode calls, one model turn each, and returns their results. */
async function scripts(p: Pion, fake: ReturnType<typeof startFakeProvider>, codes: string[]) {
  codes.forEach((code, i) => fake.enqueue({ blocks: [{ type: "toolCall", id: `c${i}`, name: "codemode", arguments: { code } }] }));
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  await p.request({ type: "prompt", message: "run" });
  await p.waitFor("agent_settled", 0, 60000);
  return codes.map((_, i) => endOf(p, `c${i}`));
}

describe("codemode", () => {
  test.concurrent("server tools are reached from scripts only: parallel calls, CallToolResult shapes, a failing call, search and namespaces, store surviving a reopen", async () => {
    const { fake, p, dirs } = setup();
    await connected(p, "everything");
    const [par, fail, find, keep] = await scripts(p, fake, [
      `const [a, b] = await Promise.all([tools.mcp__everything__echo({ message: "one" }), tools.mcp__everything__get_sum({ a: 2, b: 3 })]);
       text(a.content[0].text); return b.content[0].text;`,
      `const r = await Promise.allSettled([tools.mcp__everything__get_sum({ a: "x" }), tools.nope({}), tools.mcp__everything__echo({ message: "ok" })]);
       console.log(r.map((x) => x.status).join(","), r[0].reason.message.includes("Invalid arguments"));
       throw new Error("boom " + (r[1].reason.message.includes("not a tool")));`,
      `const found = await searchTools("add two numbers", { limit: 3 });
       const ns = await describeNamespace("mcp__everything");
       const d = await describeTool("mcp__everything__echo");
       if (!d.declaration.includes("declare function mcp__everything__echo(args: {")) throw new Error(d.declaration);
       return { first: found[0].name, all: ALL_TOOLS.some((t) => t.name === "mcp__everything__echo"), tools: ns.tools.length > 5, hasSchema: !!d.inputSchema };`,
      `store("count", (load("count") ?? 0) + 1); store("gone", 1); store("gone", undefined); return load("count");`,
    ]);
    const first = declared(fake.requests[0]!.body);
    expect(first).toContain("codemode");
    expect(first.filter((n) => n.startsWith("mcp__"))).toEqual([]);
    expect(JSON.stringify(fake.requests[0]!.body)).toContain("<mcp_servers>\\nMCP servers whose tools are not declared to you:\\n- everything (`mcp__everything__*`; call its tools from `codemode` scripts)");
    expect(text(par)).toContain("Script completed");
    expect(text(par)).toContain("==> text 1/2 <==\nEcho: one");
    expect(text(par)).toMatch(/==> text 2\/2 <==\n.*5/);
    expect(fail!.isError).toBe(true);
    expect(text(fail)).toContain("Script failed");
    expect(text(fail)).toContain("<console_output>\nrejected,rejected,fulfilled true\n</console_output>");
    expect(text(fail)).toContain("Script error: Error: boom true");
    expect(JSON.parse(text(find).split("\n").slice(1).join("\n"))).toEqual({ first: "mcp__everything__get_sum", all: true, tools: true, hasSchema: true });
    expect(text(keep)).toMatch(/\n1$/);
    // nested calls are reported with the codemode call as their parent
    const nested = p.records.filter((r) => r.type === "tool_execution_start" && r.parentToolCallId === "c0");
    expect(nested.map((r) => r.toolName).sort()).toEqual(["mcp__everything__echo", "mcp__everything__get_sum"]);
    expect(await p.close()).toBe(0);

    const again = setup(["--continue"], dirs);
    await connected(again.p, "everything");
    const [reopened] = await scripts(again.p, again.fake, [`return [load("count"), load("gone")];`]);
    expect(text(reopened).replace(/\s+/g, "")).toContain("[1,null]");
    await again.p.close();
  });

  test.concurrent("limits: a script past its memory limit, a deadline, a promise that never settles, an options line in the wrong place", async () => {
    const { fake, p } = setup();
    await connected(p, "everything");
    const [oom, late, stuck, misplaced] = await scripts(p, fake, [
      `const a = []; for (;;) a.push(new Uint8Array(1 << 24));`,
      `// @options: {"timeout_ms": 300}\nfor (;;) {}`,
      `await new Promise(() => {});`,
      `text("x");\n// @options: {"timeout_ms": 5}`,
    ]);
    expect(text(oom)).toContain("out of memory");
    expect(text(late)).toContain("deadline of 300 ms");
    expect(text(stuck)).toContain("never settle");
    expect(text(misplaced)).toContain("first line");
    for (const r of [oom, late, stuck, misplaced]) expect(r!.isError).toBe(true);
    await p.close();
  });

  test.concurrent("every call from a script passes the permission gate: read-only mode refuses a write, allows a read", async () => {
    const dirs = tempDirs();
    writeFileSync(join(dirs.cwd, "a.txt"), "hello file");
    const { fake, p } = setup(["--permission-mode", "read-only"], dirs);
    await connected(p, "everything");
    const [r] = await scripts(p, fake, [
      `const [w, rd] = await Promise.allSettled([tools.write({ path: "b.txt", content: "x" }), tools.read({ path: "a.txt" })]);
       return { write: w.status, why: String(w.reason?.message).slice(0, 80), read: rd.value };`,
    ]);
    const out = text(r);
    expect(out).toContain('"write": "rejected"');
    expect(out).toContain("hello file");
    expect(p.records.some((x) => x.type === "tool_execution_end" && x.parentToolCallId === "c0" && x.toolName === "write" && x.isError === true)).toBe(true);
    await p.close();
  });

  test.concurrent("abort mid-script ends it at once", async () => {
    const { fake, p } = setup();
    await connected(p, "everything");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "c0", name: "codemode", arguments: { code: "for (;;) {}" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "never" }] });
    await p.request({ type: "prompt", message: "spin" });
    await p.waitFor((r) => r.type === "tool_execution_start" && r.toolCallId === "c0");
    await Bun.sleep(300);
    const t0 = performance.now();
    await p.request({ type: "abort" });
    await p.waitFor("agent_settled", 0, 10000);
    expect(performance.now() - t0).toBeLessThan(3000);
    expect(text(endOf(p, "c0"))).toContain("aborted");
    await p.close();
  });

  test.concurrent.skipIf(!existsSync(join(ROOT, "dist/pion")))("dist/pion runs scripts (QuickJS and its WASM are in the binary)", async () => {
    const { fake, p } = setup([], tempDirs(), { everything: everything() }, true);
    await connected(p, "everything");
    const [r] = await scripts(p, fake, [`return (await tools.mcp__everything__echo({ message: "from the binary" })).content[0].text;`]);
    expect(text(r)).toContain("Echo: from the binary");
    await p.close();
  });

  test.concurrent("autoEnableCodemode: false keeps the codemode tool off, with one warning", async () => {
    const fake = startFakeProvider();
    stops.push(() => fake.stop());
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ autoEnableCodemode: false, mcpServers: { everything: everything() } }));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await connected(p, "everything");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    expect(declared(fake.requests[0]!.body)).not.toContain("codemode");
    await p.close();
    expect(p.stderr).toContain("autoEnableCodemode is false");
  });
});
