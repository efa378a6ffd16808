import { describe, expect, setDefaultTimeout, test } from "bun:test";
import type * as acp from "@agentclientprotocol/sdk";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { setupAcp, startAcp, rpcErrorOf } from "../support/acp-client.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";

setDefaultTimeout(60_000);

const EVERYTHING = resolve(import.meta.dir, "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");
const DYNAMIC = resolve(import.meta.dir, "../fixtures/mcp/dynamic-server.ts");

const setup = setupAcp;

const INIT: acp.InitializeRequest = { protocolVersion: 1, clientCapabilities: {} };

const kinds = (updates: acp.SessionUpdate[] | undefined) => conversation(updates).map((u) => u.sessionUpdate);

/** The updates that mirror the conversation, without the usage and title ones (acp-sessions.test.ts checks those). */
const conversation = (updates: acp.SessionUpdate[] | undefined) =>
  (updates ?? []).filter((u) => u.sessionUpdate !== "usage_update" && u.sessionUpdate !== "session_info_update");

const errorOf = rpcErrorOf;

describe("ACP mode", () => {
  test.concurrent("initialize, a new session, and a prompt with thinking, text and read/edit/bash tool calls", async () => {
    const { fake, dirs, c } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "one\ntwo\n");
    writeFileSync(join(dirs.cwd, "b.txt"), "bee\n");
    const init = await c.agent.request("initialize", INIT);
    expect(init).toMatchObject({
      protocolVersion: 1,
      agentInfo: { name: "pion" },
      agentCapabilities: { loadSession: true, promptCapabilities: { image: true, embeddedContext: true }, mcpCapabilities: { http: true } },
    });
    expect(init.authMethods!.length).toBeGreaterThan(0);
    expect(await c.agent.request("authenticate", { methodId: "environment" })).toEqual({});
    expect((await errorOf(c.agent.request("authenticate", { methodId: "oauth" }))).code).toBe(-32602);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    expect(s.configOptions!.find((o) => o.id === "model")).toMatchObject({ type: "select", currentValue: "fake/fake-model" });
    fake.enqueue({
      blocks: [
        { type: "thinking", thinking: "let me look" },
        { type: "text", text: "Reading." },
        { type: "toolCall", id: "r1", name: "read", arguments: { path: "b.txt" } },
        { type: "toolCall", id: "e1", name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "two", newText: "2" }] } },
        { type: "toolCall", id: "b1", name: "bash", arguments: { command: "echo hi-from-bash" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "Done." }] });
    const r = await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "edit it" }] });
    expect(r.stopReason).toBe("end_turn");
    const ups = conversation(c.updates.get(s.sessionId));
    expect(ups[0]).toEqual({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: "let me look" } });
    expect(ups[1]).toEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Reading." } });
    const calls = ups.filter((u) => u.sessionUpdate === "tool_call") as (acp.ToolCall & { sessionUpdate: "tool_call" })[];
    expect(calls.map((u) => [u.toolCallId, u.kind])).toEqual([["r1", "read"], ["e1", "edit"], ["b1", "execute"]]);
    expect(calls[0]).toMatchObject({ title: "Read b.txt", locations: [{ path: join(dirs.cwd, "b.txt") }], rawInput: { path: "b.txt" } });
    expect(calls[2]!.title).toBe("Run `echo hi-from-bash`");
    const ends = ups.filter((u) => u.sessionUpdate === "tool_call_update" && (u.status === "completed" || u.status === "failed")) as acp.ToolCallUpdate[];
    // the three calls run at once: they end in any order
    expect(ends.map((u) => [u.toolCallId, u.status]).sort()).toEqual([["b1", "completed"], ["e1", "completed"], ["r1", "completed"]]);
    const byId = (id: string) => ends.find((u) => u.toolCallId === id)!;
    expect(JSON.stringify(byId("r1").content)).toContain("bee");
    expect(byId("e1").content![0]).toEqual({ type: "diff", path: join(dirs.cwd, "a.txt"), oldText: "one\ntwo\n", newText: "one\n2\n" });
    expect(JSON.stringify(byId("b1").content)).toContain("hi-from-bash");
    // rawOutput carries the tool's structuredContent (bash, read); edit has none
    const raw = (id: string) => byId(id).rawOutput as { structuredContent?: unknown };
    expect(raw("b1").structuredContent).toEqual({ output: "hi-from-bash\n", truncated: false, exit_code: 0, wall_time_seconds: expect.any(Number) });
    expect(raw("r1").structuredContent).toStartWith("bee");
    expect("structuredContent" in raw("e1")).toBe(false);
    expect(ups.at(-1)).toEqual({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "Done." } });
    expect(readFileSync(join(dirs.cwd, "a.txt"), "utf8")).toBe("one\n2\n");
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("a failed tool call is reported as failed; a write of a new file has no old text", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "miss", name: "read", arguments: { path: "nope.txt" } },
        { type: "toolCall", id: "w", name: "write", arguments: { path: "sub/new.txt", content: "fresh" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "go" }] });
    const ends = c.updates.get(s.sessionId)!.filter((u) => u.sessionUpdate === "tool_call_update") as acp.ToolCallUpdate[];
    expect(ends.find((u) => u.toolCallId === "miss")!.status).toBe("failed");
    expect(ends.find((u) => u.toolCallId === "w")!.content![0]).toEqual({ type: "diff", path: join(dirs.cwd, "sub/new.txt"), oldText: null, newText: "fresh" });
    await c.close();
    await fake.stop();
  });

  test.concurrent("cancel during a stream and during a tool ends the prompt with cancelled; the session goes on", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b", "c", "d", "e", "f", "g", "h"] }], chunkDelayMs: 300 });
    const p1 = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "stream" }] });
    await fake.waitForRequests(1, 30_000);
    await c.agent.notify("session/cancel", { sessionId: s.sessionId });
    expect((await p1).stopReason).toBe("cancelled");

    fake.enqueue({ blocks: [{ type: "toolCall", id: "slow", name: "bash", arguments: { command: "sleep 30" } }] });
    const p2 = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "tool" }] });
    for (let i = 0; i < 500 && !kinds(c.updates.get(s.sessionId)).includes("tool_call"); i++) await Bun.sleep(10);
    await c.agent.notify("session/cancel", { sessionId: s.sessionId });
    expect((await p2).stopReason).toBe("cancelled");
    const end = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).findLast((u) => u.toolCallId === "slow")!;
    expect(end.status).toBe("failed");

    fake.enqueue({ blocks: [{ type: "text", text: "still alive" }] });
    expect((await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "again" }] })).stopReason).toBe("end_turn");
    await c.close();
    await fake.stop();
  });

  test.concurrent("session/load replays the conversation of a stored session before answering; session/list lists it", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "first answer" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "first question" }] });
    await c.close();

    const c2 = startAcp({ ...dirs });
    await c2.agent.request("initialize", INIT);
    const list = await c2.agent.request("session/list", { cwd: dirs.cwd });
    expect(list.sessions.map((x) => x.sessionId)).toContain(s.sessionId);
    expect(list.sessions.find((x) => x.sessionId === s.sessionId)!.title).toBe("first question");
    await c2.agent.request("session/load", { sessionId: s.sessionId, cwd: dirs.cwd, mcpServers: [] });
    expect(conversation(c2.updates.get(s.sessionId))).toEqual([
      { sessionUpdate: "user_message_chunk", content: { type: "text", text: "first question" } },
      { sessionUpdate: "agent_message_chunk", content: { type: "text", text: "first answer" } },
    ]);
    fake.enqueue({ blocks: [{ type: "text", text: "second answer" }] });
    await c2.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "second" }] });
    const body = JSON.stringify(fake.requests.at(-1)!.body);
    expect(body).toContain("first question");
    expect(body).toContain("first answer");
    const missing = await errorOf(c2.agent.request("session/load", { sessionId: "no-such-session", cwd: dirs.cwd, mcpServers: [] }));
    expect(missing.code).toBe(-32002);
    await c2.close();
    await fake.stop();
  });

  test.concurrent("two sessions prompt at once; neither waits for the other", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const a = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    const otherCwd = join(dirs.cwd, "other");
    mkdirSync(otherCwd);
    const b = await c.agent.request("session/new", { cwd: otherCwd, mcpServers: [] });
    expect(a.sessionId).not.toBe(b.sessionId);
    // the first request stalls until the second one has been answered
    fake.enqueue({ blocks: [{ type: "text", text: ["slow ", "reply"] }], chunkDelayMs: 400 });
    fake.enqueue({ blocks: [{ type: "text", text: "fast reply" }] });
    const pa = c.agent.request("session/prompt", { sessionId: a.sessionId, prompt: [{ type: "text", text: "a" }] });
    await fake.waitForRequests(1, 30_000);
    const rb = await c.agent.request("session/prompt", { sessionId: b.sessionId, prompt: [{ type: "text", text: "b" }] });
    expect(rb.stopReason).toBe("end_turn");
    expect(conversation(c.updates.get(b.sessionId))).toEqual([{ sessionUpdate: "agent_message_chunk", content: { type: "text", text: "fast reply" } }]);
    expect((await pa).stopReason).toBe("end_turn");
    expect(kinds(c.updates.get(a.sessionId))).toEqual(["agent_message_chunk", "agent_message_chunk"]);
    await c.close();
    await fake.stop();
  });

  test.concurrent("MCP servers given in session/new reach the model as tools", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", {
      cwd: dirs.cwd,
      mcpServers: [{ name: "everything", command: process.execPath, args: [EVERYTHING, "stdio"], env: [] }],
    });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "m", name: "mcp__everything__echo", arguments: { message: "via acp" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "go" }] });
    const end = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).findLast((u) => u.toolCallId === "m")!;
    expect(end.status).toBe("completed");
    expect(JSON.stringify(end.content)).toContain("Echo: via acp");
    const bad = await errorOf(c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [{ name: "bad name!", command: "x", args: [], env: [] }] }));
    expect(bad.code).toBe(-32602);
    await c.close();
    await fake.stop();
  });

  test.concurrent("MCP servers given in session/new join the user's mcp.json servers: the model sees the tools of both", async () => {
    const { fake, dirs, c } = setup();
    writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: { everything: { command: process.execPath, args: [EVERYTHING, "stdio"], exposure: "direct" } } }));
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", {
      cwd: dirs.cwd,
      mcpServers: [{ name: "dynamic", command: process.execPath, args: [DYNAMIC], env: [] }],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "which tools?" }] });
    const tools = (fake.requests[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toContain("mcp__everything__echo");
    expect(tools).toContain("mcp__dynamic__unlock");
    expect(tools).toContain("read");
    await c.close();
    await fake.stop();
  });

  test.concurrent("the client's file system: read sees the editor's buffer, edit writes through it", async () => {
    const files = new Map<string, string>();
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
    const path = join(dirs.cwd, "buf.ts");
    writeFileSync(path, "on disk\n");
    files.set(path, "unsaved buffer\n");
    const c = startAcp({ ...dirs, files });
    await c.agent.request("initialize", { protocolVersion: 1, clientCapabilities: { fs: { readTextFile: true, writeTextFile: true } } });
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    // one call per model turn: calls of one message run at once, and the read must come first
    fake.enqueue({ blocks: [{ type: "toolCall", id: "r", name: "read", arguments: { path: "buf.ts" } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "e", name: "edit", arguments: { path: "buf.ts", edits: [{ oldText: "unsaved", newText: "edited" }] } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "go" }] });
    const ups = c.updates.get(s.sessionId) as acp.ToolCallUpdate[];
    expect(JSON.stringify(ups.findLast((u) => u.toolCallId === "r")!.content)).toContain("unsaved buffer");
    expect(ups.findLast((u) => u.toolCallId === "e")!.content![0]).toEqual({ type: "diff", path, oldText: "unsaved buffer\n", newText: "edited buffer\n" });
    expect(files.get(path)).toBe("edited buffer\n");
    expect(readFileSync(path, "utf8")).toBe("on disk\n");
    expect(c.fsCalls.map((f) => f.method)).toEqual(["fs/read_text_file", "fs/read_text_file", "fs/write_text_file"]);
    await c.close();
    await fake.stop();
  });

  test.concurrent("bad requests get JSON-RPC errors and the process keeps serving; a missing key names what to set", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    expect((await errorOf(c.agent.request("no/such_method", {}))).code).toBe(-32601);
    const invalid = await errorOf(c.agent.request("session/new", { mcpServers: [] } as never));
    expect(invalid.code).toBe(-32602);
    expect((await errorOf(c.agent.request("session/prompt", { sessionId: "nope", prompt: [] }))).code).toBe(-32002);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: "fine" }] });
    expect((await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "x" }] })).stopReason).toBe("end_turn");
    const set = await c.agent.request("session/set_config_option", { sessionId: s.sessionId, configId: "model", value: "fake/fake-plain" });
    expect(set.configOptions.find((o) => o.id === "model")!.currentValue).toBe("fake/fake-plain");
    await c.close();

    const bare = tempDirs();
    const c2 = startAcp({ ...bare });
    await c2.agent.request("initialize", INIT);
    expect((await errorOf(c2.agent.request("authenticate", { methodId: "environment" }))).code).toBe(-32000);
    const noKey = await errorOf(c2.agent.request("session/new", { cwd: bare.cwd, mcpServers: [] }));
    expect(noKey.code).toBe(-32000);
    expect(noKey.message + JSON.stringify(noKey)).toContain("ANTHROPIC_API_KEY");
    await c2.close();
    await fake.stop();
  });

  test.concurrent("dist/pion serves ACP: available commands from prompt templates, and a prompt", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeSettings(dirs.home, { defaultProvider: "fake", defaultModel: "fake-model" });
    mkdirSync(join(dirs.home, "prompts"), { recursive: true });
    writeFileSync(join(dirs.home, "prompts", "review.md"), "---\ndescription: Review the change\n---\nReview $@");
    const c = startAcp({ ...dirs, binary: true });
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    for (let i = 0; i < 500 && !kinds(c.updates.get(s.sessionId)).includes("available_commands_update"); i++) await Bun.sleep(10);
    const cmds = c.updates.get(s.sessionId)!.find((u) => u.sessionUpdate === "available_commands_update") as acp.AvailableCommandsUpdate;
    expect(cmds.availableCommands).toContainEqual(expect.objectContaining({ name: "review", description: "Review the change" }));
    fake.enqueue({ blocks: [{ type: "text", text: "reviewed" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "/review the diff" }] });
    expect(JSON.stringify(fake.requests.at(-1)!.body)).toContain("Review the diff");
    expect(await c.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("approvals go to the editor as session/request_permission; modes are the permission modes", async () => {
    const { fake, dirs, c } = setup({
      args: ["--permission-mode", "ask"],
      permission: (req) => {
        const input = JSON.stringify(req.toolCall.rawInput);
        return { outcome: { outcome: "selected", optionId: input.includes("allowed") ? "allow" : input.includes("never") ? "deny_always" : "deny" } };
      },
    });
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    expect(s.modes).toMatchObject({ currentModeId: "ask" });
    expect(s.modes!.availableModes.map((m) => m.id)).toEqual(["auto", "ask", "read-only"]);
    fake.enqueue({ blocks: [{ type: "toolCall", id: "ok", name: "bash", arguments: { command: "echo allowed" } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "no", name: "bash", arguments: { command: "echo refused" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "go" }] });
    expect(c.permissionRequests.map((r) => [r.toolCall.toolCallId, r.toolCall.kind])).toEqual([["ok", "execute"], ["no", "execute"]]);
    expect(c.permissionRequests[0]!.options.map((o) => o.kind)).toEqual(["allow_once", "allow_always", "reject_once", "reject_always"]);
    const ends = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).filter((u) => u.status === "completed" || u.status === "failed");
    expect(ends.find((u) => u.toolCallId === "ok")).toMatchObject({ status: "completed" });
    expect(JSON.stringify(ends.find((u) => u.toolCallId === "ok")!.content)).toContain("allowed");
    expect(ends.find((u) => u.toolCallId === "no")).toMatchObject({ status: "failed" });
    // reject always: the same command is refused again without a request
    fake.enqueue({ blocks: [{ type: "toolCall", id: "n1", name: "bash", arguments: { command: "echo never" } }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "n2", name: "bash", arguments: { command: "echo never" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "never" }] });
    expect(c.permissionRequests.map((r) => r.toolCall.toolCallId)).toEqual(["ok", "no", "n1"]);
    const again = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).findLast((u) => u.toolCallId === "n2")!;
    expect(again.status).toBe("failed");
    expect(JSON.stringify(again.content)).toContain("always reject");
    // auto mode: nothing is asked
    await c.agent.request("session/set_mode", { sessionId: s.sessionId, modeId: "auto" });
    expect(c.updates.get(s.sessionId)!.some((u) => u.sessionUpdate === "current_mode_update" && u.currentModeId === "auto")).toBe(true);
    fake.enqueue({ blocks: [{ type: "toolCall", id: "free", name: "bash", arguments: { command: "echo free" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "again" }] });
    expect(c.permissionRequests.length).toBe(3);
    expect((await errorOf(c.agent.request("session/set_mode", { sessionId: s.sessionId, modeId: "yolo" }))).code).toBe(-32602);
    await c.close();
    await fake.stop();
  });

  test.concurrent("a prompt sent while one runs is queued and answered in turn; a run limit answers max_turn_requests", async () => {
    const { fake, dirs, c } = setup({ args: ["--max-turns", "3"] });
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "text", text: ["first ", "reply"] }], chunkDelayMs: 200 });
    fake.enqueue({ blocks: [{ type: "text", text: "second reply" }] });
    const p1 = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "one" }] });
    await fake.waitForRequests(1, 30_000);
    const p2 = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "two" }] });
    expect([(await p1).stopReason, (await p2).stopReason]).toEqual(["end_turn", "end_turn"]);
    expect(JSON.stringify(fake.requests[1]!.body)).toContain("two");
    // three model calls at most: a tool loop that would go on is stopped
    for (let i = 0; i < 3; i++) fake.enqueue({ blocks: [{ type: "toolCall", id: `l${i}`, name: "ls", arguments: {} }] });
    const r = await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "loop" }] });
    expect(r.stopReason).toBe("max_turn_requests");
    await c.close();
    await fake.stop();
  });

  test.concurrent("the model's plan (the todo tool) reaches the editor as plan updates", async () => {
    const { fake, dirs, c } = setup();
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    const phases = [{ name: "Fix", tasks: [{ content: "find the bug", status: "completed" }, { content: "write the test", status: "in_progress" }, { content: "ship", status: "pending" }] }];
    fake.enqueue({ blocks: [{ type: "toolCall", id: "plan", name: "todo", arguments: { phases } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "planned" }] });
    await c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "plan it" }] });
    expect((fake.requests[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name)).toContain("todo");
    const plan = c.updates.get(s.sessionId)!.find((u) => u.sessionUpdate === "plan") as acp.Plan;
    expect(plan.entries).toEqual([
      { content: "find the bug", priority: "medium", status: "completed" },
      { content: "write the test", priority: "medium", status: "in_progress" },
      { content: "ship", priority: "medium", status: "pending" },
    ]);
    await c.close();
    await fake.stop();
  });

  test.concurrent("cancel withdraws a pending permission request", async () => {
    let asked!: () => void;
    const seen = new Promise<void>((r) => (asked = r));
    const { fake, dirs, c } = setup({
      args: ["--permission-mode", "ask"],
      permission: () => {
        asked();
        return new Promise(() => {}); // the user never answers
      },
    });
    await c.agent.request("initialize", INIT);
    const s = await c.agent.request("session/new", { cwd: dirs.cwd, mcpServers: [] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "w", name: "bash", arguments: { command: "echo waiting" } }] });
    const p = c.agent.request("session/prompt", { sessionId: s.sessionId, prompt: [{ type: "text", text: "go" }] });
    await seen;
    await c.agent.notify("session/cancel", { sessionId: s.sessionId });
    expect((await p).stopReason).toBe("cancelled");
    const end = (c.updates.get(s.sessionId) as acp.ToolCallUpdate[]).findLast((u) => u.toolCallId === "w")!;
    expect(end.status).toBe("failed");
    expect(JSON.stringify(end.content)).toContain("aborted while the call waited for approval");
    await c.close();
    await fake.stop();
  });
});
