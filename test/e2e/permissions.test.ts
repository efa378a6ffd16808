import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeBlock } from "../support/fake-provider.ts";
import { BINARY, Pion, runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

/** Each test spawns pion and waits on its events; on a loaded machine that takes a while. */
const SLOW = { timeout: 60000 };

function setup(args: string[] = [], settings?: Record<string, unknown>) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  if (settings) writeSettings(dirs.home, settings);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...args] });
  return { fake, p, dirs };
}

const bash = (id: string, command: string): FakeBlock => ({ type: "toolCall", id, name: "bash", arguments: { command } });
const toolResults = (p: Pion): Rec[] => p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
const text = (m: Rec): string => m.content.map((c: Rec) => c.text ?? "").join("");
const decisions = (p: Pion): Rec[] => p.records.filter((r) => r.type === "entry_appended" && r.entry.type === "permission").map((r) => r.entry);

describe("tool permissions through the binary", () => {
  test.concurrent("ask mode: a bash call waits for tool_approval_request's answer; read runs unasked; the decision is an entry", async () => {
    const { fake, p, dirs } = setup(["--permission-mode", "ask"]);
    writeFileSync(join(dirs.cwd, "notes.txt"), "hello notes\n");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "r1", name: "read", arguments: { path: "notes.txt" } }, bash("b1", "echo ran > ran.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    expect((await p.request({ type: "get_state" })).data.permissionMode).toBe("ask");
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    expect(req).toEqual({
      type: "tool_approval_request",
      id: expect.any(String),
      toolCallId: "b1",
      toolName: "bash",
      args: { command: "echo ran > ran.txt" },
      reason: expect.stringContaining("ask mode"),
      options: ["allow", "allow_always", "deny"],
    });
    expect(existsSync(join(dirs.cwd, "ran.txt"))).toBe(false);
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    await p.waitFor("agent_settled");
    expect(existsSync(join(dirs.cwd, "ran.txt"))).toBe(true);
    const results = toolResults(p);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["r1", false],
      ["b1", false],
    ]);
    expect(text(results[0]!)).toContain("hello notes");
    // exactly one request (read did not ask), after bash's tool_execution_start; the answer got no response record
    expect(p.records.filter((r) => r.type === "tool_approval_request").length).toBe(1);
    const start = p.records.findIndex((r) => r.type === "tool_execution_start" && r.toolCallId === "b1");
    expect(start).toBeLessThan(p.records.indexOf(req));
    expect(p.records.filter((r) => r.type === "response").map((r) => r.command)).toEqual(["get_state", "prompt"]);
    expect(decisions(p)).toEqual([
      expect.objectContaining({ type: "permission", toolCallId: "b1", toolName: "bash", subject: "echo ran > ran.txt", decision: "allow", by: "host", mode: "ask" }),
    ]);
    const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
    expect(entries.filter((e) => e.type === "permission").map((e) => e.decision)).toEqual(["allow"]);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("a host's deny (with a message), an unknown and a repeated id: nothing runs, the model reads who refused", async () => {
    const { fake, p, dirs } = setup(["--permission-mode", "ask"]);
    fake.enqueue({ blocks: [bash("b1", "touch nope.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "understood" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    p.send({ type: "tool_approval_response", id: "approval_999", decision: "allow" });
    p.send({ type: "tool_approval_response", id: req.id, decision: "deny", message: "not on my machine" });
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    await p.waitFor("agent_settled");
    const [result] = toolResults(p);
    expect(result!.isError).toBe(true);
    expect(text(result!)).toBe("Tool call denied by the user: not on my machine Nothing ran.");
    expect(existsSync(join(dirs.cwd, "nope.txt"))).toBe(false);
    // the model got the refusal as the call's result
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("not on my machine");
    expect(decisions(p)).toEqual([expect.objectContaining({ decision: "deny", by: "host", message: "not on my machine" })]);
    // a bad answer is an error, and the process keeps serving
    const bad = await p.request({ type: "tool_approval_response", id: "x", decision: "maybe" });
    expect(bad).toMatchObject({ success: false, error: expect.stringContaining("decision") });
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("read-only mode refuses bash and write with a message for the model; read and ls run; nothing is asked", async () => {
    const { fake, p, dirs } = setup(["--permission-mode", "read-only", "--tools", "read,bash,edit,write,grep,find,ls"]);
    writeFileSync(join(dirs.cwd, "a.txt"), "A\n");
    fake.enqueue({
      blocks: [
        bash("b", "touch made.txt"),
        { type: "toolCall", id: "w", name: "write", arguments: { path: "w.txt", content: "x" } },
        { type: "toolCall", id: "r", name: "read", arguments: { path: "a.txt" } },
        { type: "toolCall", id: "l", name: "ls", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const results = toolResults(p);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["b", true],
      ["w", true],
      ["r", false],
      ["l", false],
    ]);
    expect(text(results[0]!)).toContain("read-only permission mode");
    expect(existsSync(join(dirs.cwd, "made.txt"))).toBe(false);
    expect(existsSync(join(dirs.cwd, "w.txt"))).toBe(false);
    expect(p.records.some((r) => r.type === "tool_approval_request")).toBe(false);
    expect(decisions(p).map((e) => [e.toolCallId, e.decision, e.by])).toEqual([
      ["b", "deny", "mode"],
      ["w", "deny", "mode"],
    ]);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("auto mode with deny rules: a compound command is denied when any part matches; paths match relative to the cwd and ~", async () => {
    const { fake, p, dirs } = setup(["--deny", "bash(rm *)", "--deny", "write(src/**)", "--deny", "read(~/.ssh/**)"]);
    mkdirSync(join(dirs.home, ".ssh"), { recursive: true });
    writeFileSync(join(dirs.home, ".ssh", "id_test"), "SECRET-KEY\n");
    fake.enqueue({
      blocks: [
        bash("b1", "echo fine"),
        bash("b2", "echo hi && rm -rf victim"),
        { type: "toolCall", id: "w1", name: "write", arguments: { path: "src/deep/a.txt", content: "x" } },
        { type: "toolCall", id: "w2", name: "write", arguments: { path: "top.txt", content: "y" } },
        { type: "toolCall", id: "r1", name: "read", arguments: { path: "~/.ssh/id_test" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    mkdirSync(join(dirs.cwd, "victim"));
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const results = toolResults(p);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["b1", false],
      ["b2", true],
      ["w1", true],
      ["w2", false],
      ["r1", true],
    ]);
    expect(text(results[1]!)).toBe('Tool call denied by the permission rule "deny bash(rm *)" (command line). Nothing ran.');
    expect(existsSync(join(dirs.cwd, "victim"))).toBe(true);
    expect(existsSync(join(dirs.cwd, "src/deep/a.txt"))).toBe(false);
    expect(existsSync(join(dirs.cwd, "top.txt"))).toBe(true);
    expect(text(results[4]!)).not.toContain("SECRET-KEY");
    expect(decisions(p).map((e) => [e.toolCallId, e.rule])).toEqual([
      ["b2", "deny bash(rm *)"],
      ["w1", "deny write(src/**)"],
      ["r1", "deny read(~/.ssh/**)"],
    ]);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("allow rules spare a request only when every part of a command matches; an ask rule wins over allow", async () => {
    const { fake, p, dirs } = setup(["--permission-mode", "ask", "--allow", "bash(echo *)"], { permissions: { ask: ["bash(echo secret*)"] } });
    fake.enqueue({
      blocks: [bash("ok", "echo hi"), bash("and", "echo hi && touch and.txt"), bash("sub", "echo $(touch sub.txt)"), bash("asked", "echo secret")],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    const asked: string[] = [];
    for (let i = 0; i < 3; i++) {
      const req = await p.waitFor((r) => r.type === "tool_approval_request" && !asked.includes(r.toolCallId));
      asked.push(req.toolCallId);
      p.send({ type: "tool_approval_response", id: req.id, decision: "deny" });
    }
    await p.waitFor("agent_settled");
    expect(asked).toEqual(["and", "sub", "asked"]);
    const req = p.records.find((r) => r.type === "tool_approval_request" && r.toolCallId === "asked")!;
    expect(req.reason).toContain('"ask bash(echo secret*)"');
    // allow_always could not outrank the ask rule, so it is not offered
    expect(req.options).toEqual(["allow", "deny"]);
    expect(p.records.find((r) => r.type === "tool_approval_request" && r.toolCallId === "and")!.options).toEqual(["allow", "allow_always", "deny"]);
    expect(toolResults(p).map((m) => [m.toolCallId, m.isError])).toEqual([
      ["ok", false],
      ["and", true],
      ["sub", true],
      ["asked", true],
    ]);
    expect(existsSync(join(dirs.cwd, "and.txt"))).toBe(false);
    expect(existsSync(join(dirs.cwd, "sub.txt"))).toBe(false);
    expect(decisions(p)[0]).toMatchObject({ toolCallId: "ok", decision: "allow", by: "rule", rule: "allow bash(echo *)" });
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("parallel calls ask one at a time in call order; abort denies the pending request and the process goes on", async () => {
    const { fake, p } = setup(["--permission-mode", "ask"]);
    fake.enqueue({ blocks: [bash("p1", "echo one"), bash("p2", "echo two"), bash("p3", "echo three")] });
    fake.enqueue({ blocks: [{ type: "text", text: "after abort" }] });
    await p.request({ type: "prompt", message: "go" });
    const first = await p.waitFor("tool_approval_request");
    expect(first.toolCallId).toBe("p1");
    // every call has started, yet only the first is asked about while it waits
    await p.waitFor((r) => r.type === "tool_execution_start" && r.toolCallId === "p3");
    await p.request({ type: "get_state" });
    expect(p.records.filter((r) => r.type === "tool_approval_request").map((r) => r.toolCallId)).toEqual(["p1"]);
    p.send({ type: "tool_approval_response", id: first.id, decision: "allow" });
    const second = await p.waitFor((r) => r.type === "tool_approval_request" && r.toolCallId === "p2");
    // p1 runs meanwhile; let it finish so the abort meets only the waiting calls
    await p.waitFor((r) => r.type === "tool_execution_end" && r.toolCallId === "p1");
    expect((await p.request({ type: "abort" })).success).toBe(true);
    await p.waitFor("agent_settled");
    // a late answer to the withdrawn request is ignored
    p.send({ type: "tool_approval_response", id: second.id, decision: "allow" });
    const results = toolResults(p);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["p1", false],
      ["p2", true],
      ["p3", true],
    ]);
    expect(text(results[1]!)).toContain("aborted while the call waited for approval");
    expect(p.records.filter((r) => r.type === "tool_approval_request").map((r) => r.toolCallId)).toEqual(["p1", "p2"]);
    expect(decisions(p).map((e) => [e.toolCallId, e.by])).toEqual([
      ["p1", "host"],
      ["p2", "abort"],
      ["p3", "abort"],
    ]);
    // still serving: a new prompt runs
    await p.request({ type: "prompt", message: "again" });
    await p.waitFor((r) => r.type === "agent_settled", p.records.length);
    expect(p.records.some((r) => r.type === "message_end" && r.message.role === "assistant" && text(r.message) === "after abort")).toBe(true);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("permissions.timeoutMs denies a request nobody answers", async () => {
    const { fake, p } = setup(["--permission-mode", "ask"], { permissions: { timeoutMs: 50 } });
    fake.enqueue({ blocks: [bash("t1", "echo late")] });
    fake.enqueue({ blocks: [{ type: "text", text: "moving on" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    await p.waitFor("agent_settled");
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    const [result] = toolResults(p);
    expect(result).toMatchObject({ toolCallId: "t1", isError: true });
    expect(text(result!)).toBe("Tool call denied: no approval arrived within 50 ms. Nothing ran.");
    expect(decisions(p)).toEqual([expect.objectContaining({ toolCallId: "t1", decision: "deny", by: "timeout" })]);
    expect((await p.request({ type: "get_state" })).data.isStreaming).toBe(false);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("allow_always adds a session rule: the same command runs unasked later, and after reopening the session", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const args = ["--mode", "rpc", "--model", "fake/fake-model", "--permission-mode", "ask"];
    const p = new Pion({ ...dirs, args });
    fake.enqueue({ blocks: [bash("a1", "echo always | cat")] });
    fake.enqueue({ blocks: [bash("a2", "echo always | cat")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow_always" });
    await p.waitFor("agent_settled");
    expect(p.records.filter((r) => r.type === "tool_approval_request").length).toBe(1);
    expect(toolResults(p).map((m) => [m.toolCallId, m.isError])).toEqual([
      ["a1", false],
      ["a2", false],
    ]);
    expect(decisions(p)[0]).toMatchObject({ toolCallId: "a1", by: "host", addedRules: ["bash(echo always)", "bash(cat)"] });
    const sessionId = (await p.request({ type: "get_state" })).data.sessionId;
    await p.close();

    const q = new Pion({ ...dirs, args: [...args, "--session", sessionId] });
    fake.enqueue({ blocks: [bash("c1", "cat"), bash("c2", "echo other")] });
    fake.enqueue({ blocks: [{ type: "text", text: "done again" }] });
    await q.request({ type: "prompt", message: "again" });
    const asked = await q.waitFor("tool_approval_request");
    expect(asked.toolCallId).toBe("c2");
    q.send({ type: "tool_approval_response", id: asked.id, decision: "deny" });
    await q.waitFor("agent_settled");
    expect(toolResults(q).map((m) => [m.toolCallId, m.isError])).toEqual([
      ["c1", false],
      ["c2", true],
    ]);
    expect(q.records.filter((r) => r.type === "tool_approval_request").length).toBe(1);
    await q.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("host tools: one marked readOnlyHint runs in ask mode without a request, one not marked asks", async () => {
    const { fake, p } = setup(["--permission-mode", "ask"]);
    const params = { type: "object", properties: {}, additionalProperties: false };
    await p.request({
      type: "set_host_tools",
      tools: [
        { name: "peek", description: "Look", parameters: params, annotations: { readOnlyHint: true } },
        { name: "poke", description: "Change", parameters: params },
      ],
    });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "h1", name: "peek", arguments: {} }, { type: "toolCall", id: "h2", name: "poke", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    const call = await p.waitFor("host_tool_call");
    expect(call.toolName).toBe("peek");
    p.send({ type: "host_tool_result", id: call.id, result: { content: [{ type: "text", text: "peeked" }] } });
    const req = await p.waitFor("tool_approval_request");
    expect(req.toolName).toBe("poke");
    p.send({ type: "tool_approval_response", id: req.id, decision: "deny" });
    await p.waitFor("agent_settled");
    expect(p.records.filter((r) => r.type === "host_tool_call").map((r) => r.toolName)).toEqual(["peek"]);
    expect(toolResults(p).map((m) => [m.toolCallId, m.isError])).toEqual([
      ["h1", false],
      ["h2", true],
    ]);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("MCP tools: one the server annotates readOnlyHint runs in ask mode without a request, one not annotated asks", async () => {
    const server = new URL("../fixtures/mcp/dynamic-server.ts", import.meta.url).pathname;
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: { dynamic: { command: process.execPath, args: [server], exposure: "direct" } } }));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--permission-mode", "ask"] });
    expect((await p.waitFor((r) => r.type === "mcp_status" && r.name === "dynamic" && r.state !== "connecting", 0, 30000)).state).toBe("connected");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "m1", name: "mcp__dynamic__fail", arguments: {} },
        { type: "toolCall", id: "m2", name: "mcp__dynamic__unlock", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    expect(req).toMatchObject({ toolCallId: "m2", toolName: "mcp__dynamic__unlock" });
    p.send({ type: "tool_approval_response", id: req.id, decision: "deny" });
    await p.waitFor("agent_settled");
    const results = toolResults(p);
    // the read-only tool ran: its text is the server's own (it always answers an error result)
    expect(results.map((m) => [m.toolCallId, text(m)])).toEqual([
      ["m1", "it went wrong"],
      ["m2", "Tool call denied by the user. Nothing ran."],
    ]);
    expect(p.records.filter((r) => r.type === "tool_approval_request").length).toBe(1);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("extension tools: readOnlyHint runs unasked in ask mode; tool_call hooks run after approval and can still block; a denied call never reaches them", async () => {
    const ext = new URL("../fixtures/extensions/permissions.ts", import.meta.url).pathname;
    const { fake, p } = setup(["--permission-mode", "ask", "--deny", "bash(rm *)", "-e", ext]);
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "e1", name: "look", arguments: {} },
        bash("e2", "echo hook-blocks-me"),
        bash("e3", "rm -rf nothing"),
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    expect(req.toolCallId).toBe("e2");
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    await p.waitFor("agent_settled");
    const results = toolResults(p);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["e1", false],
      ["e2", true],
      ["e3", true],
    ]);
    expect(text(results[0]!)).toBe("looked");
    expect(text(results[1]!)).toBe("blocked by the extension's hook");
    expect(text(results[2]!)).toContain("deny bash(rm *)");
    const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
    const seen = entries.filter((e) => e.type === "custom" && e.customType === "hook-saw").map((e) => e.data.toolCallId);
    expect(seen).toEqual(["e1", "e2"]);
    await p.close();
    await fake.stop();
  }, SLOW);

  test.concurrent("get_capabilities lists the approval frames; bad --permission-mode and rules fail at start-up", async () => {
    const { fake, p, dirs } = setup();
    const caps = (await p.request({ type: "get_capabilities" })).data;
    expect(caps.inboundFrames).toContain("tool_approval_response");
    expect(caps.events).toContain("tool_approval_request");
    expect(caps.features.toolApprovals).toBe(true);
    expect((await p.request({ type: "get_state" })).data.permissionMode).toBe("auto");
    await p.close();
    const badMode = await runPion(["--mode", "rpc", "--permission-mode", "sometimes"], dirs);
    expect(badMode.code).toBe(2);
    expect(badMode.stderr).toContain('unknown permission mode "sometimes"');
    const badRule = await runPion(["--mode", "rpc", "--model", "fake/fake-model", "--allow", "bash("], { ...dirs, stdin: "" });
    expect(badRule.code).toBe(1);
    expect(badRule.stderr).toContain('Invalid permission rule "bash("');
    await fake.stop();
  }, SLOW);
});

describe("permissions without anyone to ask", () => {
  test.concurrent("json mode denies what needs approval, the run goes on; an allow rule lets a call run; a project may only add deny rules", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { permissions: { mode: "ask", allow: ["bash(echo allowed*)"] } });
    mkdirSync(join(dirs.cwd, ".pion"));
    // the project tries to loosen (ignored) and tightens (kept)
    writeFileSync(join(dirs.cwd, ".pion", "settings.json"), JSON.stringify({ permissions: { mode: "auto", allow: ["bash"], deny: ["bash(echo allowed but*)"] } }));
    fake.enqueue({ blocks: [bash("j1", "touch j.txt"), bash("j2", "echo allowed"), bash("j3", "echo allowed but denied")] });
    fake.enqueue({ blocks: [{ type: "text", text: "carried on" }] });
    // --approve: a project's settings load only in a trusted folder
    const run = await runPion(["--mode", "json", "--model", "fake/fake-model", "--approve", "do it"], dirs);
    expect(run.code).toBe(0);
    expect(run.stderr).toContain("ignored: permissions.mode, permissions.allow");
    const recs = run.stdout.trim().split("\n").map((l) => JSON.parse(l) as Rec);
    const results = recs.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["j1", true],
      ["j2", false],
      ["j3", true],
    ]);
    expect(text(results[0]!)).toContain("approval is unavailable: pion runs in json mode");
    expect(text(results[2]!)).toContain("(project settings)");
    expect(existsSync(join(dirs.cwd, "j.txt"))).toBe(false);
    expect(recs.some((r) => r.type === "tool_approval_request")).toBe(false);
    expect(recs.filter((r) => r.type === "entry_appended").map((r) => [r.entry.toolCallId, r.entry.by])).toEqual([
      ["j1", "unavailable"],
      ["j2", "rule"],
      ["j3", "rule"],
    ]);
    expect(recs.some((r) => r.type === "message_end" && r.message.role === "assistant" && text(r.message) === "carried on")).toBe(true);
    // the session browser shows each decision: who, what, when
    const shown = await runPion(["sessions", "show", recs[0]!.id], dirs);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/permission: deny bash "touch j.txt" by unavailable at \d{4}-/);
    expect(shown.stdout).toContain('permission: deny bash "echo allowed but denied" by rule (deny bash(echo allowed but*))');
    await fake.stop();
  }, SLOW);

  test.concurrent("print mode in read-only: the refused call goes back to the model, its final answer is printed, exit 0", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [bash("p1", "touch p.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "I could not run it." }] });
    const run = await runPion(["-p", "--model", "fake/fake-model", "--permission-mode", "read-only", "make a file"], dirs);
    expect(run.code).toBe(0);
    expect(run.stdout).toBe("I could not run it.\n");
    expect(existsSync(join(dirs.cwd, "p.txt"))).toBe(false);
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("read-only permission mode");
    await fake.stop();
  }, SLOW);
});

describe("permissions in the compiled binary", () => {
  const built = existsSync(BINARY);
  // CI builds the binary before the tests; locally it may be missing.
  test.skipIf(!built && !process.env.CI)("dist/pion loads the permission modules on first use: asks, takes the answer, records it", async () => {
    expect(built).toBe(true);
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new Pion({ ...dirs, binary: true, args: ["--mode", "rpc", "--model", "fake/fake-model", "--permission-mode", "ask"] });
    fake.enqueue({ blocks: [bash("d1", "touch bin.txt")] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "go" });
    const req = await p.waitFor("tool_approval_request");
    p.send({ type: "tool_approval_response", id: req.id, decision: "allow" });
    await p.waitFor("agent_settled");
    expect(existsSync(join(dirs.cwd, "bin.txt"))).toBe(true);
    expect(decisions(p)).toEqual([expect.objectContaining({ toolCallId: "d1", decision: "allow", by: "host" })]);
    await p.close();
    await fake.stop();
  }, SLOW);
});
