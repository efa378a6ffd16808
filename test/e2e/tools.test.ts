import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { GATED_COMMAND as GATED, Pion, releaseGate as release, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

function setup(args: string[] = []) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--tools", "read,bash,edit,write,grep,find,ls", ...args] });
  return { fake, p, ...dirs };
}

const toolResults = (body: unknown) =>
  ((body as { messages: { role: string; content: Rec[] | string }[] }).messages.at(-1)!.content as Rec[]).filter((b) => b.type === "tool_result");

describe("tool calls through the loop", () => {
  test.concurrent("bash tool: events in order and the result goes back to the model", async () => {
    const { fake, p } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "Running it." }, { type: "toolCall", id: "toolu_1", name: "bash", arguments: { command: "echo hi" }, fragments: 3 }] });
    fake.enqueue({ blocks: [{ type: "text", text: "Done." }] });
    const res = await p.request({ type: "prompt", message: "say hi" });
    await p.waitFor("agent_settled");
    const types = p.types(p.records.indexOf(res) + 1).filter((t) => !t.startsWith("message_update") && t !== "tool_execution_update");
    expect(types).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "tool_execution_start",
      "tool_execution_end",
      "message_start",
      "message_end",
      "turn_end",
      "turn_start",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    const deltas = p.records.filter((r) => r.type === "message_update" && r.assistantMessageEvent.type === "toolcall_delta");
    expect(deltas.length).toBe(3);
    const tcEnd = p.records.find((r) => r.assistantMessageEvent?.type === "toolcall_end");
    expect(tcEnd!.assistantMessageEvent.toolCall).toEqual({ type: "toolCall", id: "toolu_1", name: "bash", arguments: { command: "echo hi" } });
    const start = p.records.find((r) => r.type === "tool_execution_start");
    expect(start).toEqual({ type: "tool_execution_start", toolCallId: "toolu_1", toolName: "bash", args: { command: "echo hi" } });
    const end = p.records.find((r) => r.type === "tool_execution_end");
    expect(end).toMatchObject({ toolCallId: "toolu_1", toolName: "bash", isError: false, result: { content: [{ type: "text", text: "hi\n" }] } });
    expect(typeof end!.durationMs).toBe("number");
    const resultMsg = p.records.find((r) => r.type === "message_end" && r.message.role === "toolResult");
    expect(resultMsg!.message).toMatchObject({ role: "toolResult", toolCallId: "toolu_1", toolName: "bash", isError: false });
    const turnEnd = p.records.find((r) => r.type === "turn_end");
    expect(turnEnd!.toolResults).toEqual([resultMsg!.message]);
    const tr = toolResults(fake.requests[1]!.body);
    expect(tr).toMatchObject([{ type: "tool_result", tool_use_id: "toolu_1", is_error: false }]);
    const tools = (fake.requests[0]!.body as { tools: { name: string }[] }).tools.map((t) => t.name);
    expect(tools).toEqual(["read", "bash", "edit", "write", "grep", "find", "ls"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("write, edit and read in one message run and keep the call order", async () => {
    const { fake, p, cwd } = setup();
    writeFileSync(join(cwd, "a.txt"), "alpha\nbeta\n");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "t1", name: "write", arguments: { path: "sub/new.txt", content: "hello" } },
        { type: "toolCall", id: "t2", name: "edit", arguments: { path: "a.txt", edits: [{ oldText: "beta", newText: "gamma" }] } },
        { type: "toolCall", id: "t3", name: "read", arguments: { path: "missing.txt" } },
        { type: "toolCall", id: "t4", name: "bash", arguments: { cmd: "wrong field" } },
        { type: "toolCall", id: "t5", name: "nope", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "do files" });
    await p.waitFor("agent_settled");
    expect(readFileSync(join(cwd, "sub/new.txt"), "utf8")).toBe("hello");
    expect(readFileSync(join(cwd, "a.txt"), "utf8")).toBe("alpha\ngamma\n");
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    expect(results.map((m: Rec) => [m.toolCallId, m.isError])).toEqual([
      ["t1", false],
      ["t2", false],
      ["t3", true],
      ["t4", true],
      ["t5", true],
    ]);
    expect(results[3].content[0].text).toContain("command");
    expect(results[4].content[0].text).toContain("not found");
    expect(toolResults(fake.requests[1]!.body).map((b) => b.tool_use_id)).toEqual(["t1", "t2", "t3", "t4", "t5"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort during a running bash tool kills it and records an error result", async () => {
    const { fake, p, cwd } = setup();
    const marker = join(cwd, "marker");
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: `sleep 0.3; echo started; sleep 30; touch ${marker}` } }] });
    await p.request({ type: "prompt", message: "slow" });
    await p.waitFor((r) => r.type === "tool_execution_update" && JSON.stringify(r.partialResult).includes("started"));
    // The command sleeps 30 s: the response only comes back within the test's timeout if the kill worked.
    const ab = await p.request({ type: "abort" });
    expect(ab.success).toBe(true);
    const end = p.records.find((r) => r.type === "tool_execution_end");
    expect(end!.isError).toBe(true);
    expect(p.records.find((r) => r.type === "agent_settled")).toMatchObject({ type: "agent_settled", aborted: true });
    expect(fake.requests.length).toBe(1);
    expect(existsSync(marker)).toBe(false);
    await p.close();
    await fake.stop();
  });

  test.concurrent("steer during a slow tool is delivered before the next model call", async () => {
    const { fake, p, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: `${GATED}; echo done` } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "steered" }] });
    await p.request({ type: "prompt", message: "start" });
    await p.waitFor("tool_execution_start");
    const r = await p.request({ type: "steer", message: "change course" });
    expect(r.data).toEqual({ disposition: "queued" });
    release(cwd);
    await p.waitFor("agent_settled");
    const body = fake.requests[1]!.body as { messages: { role: string; content: Rec[] }[] };
    const last = body.messages.at(-1)!;
    expect(last.role).toBe("user");
    // tool result then the steering text, in one user turn or as the next user message
    expect(JSON.stringify(body.messages.slice(-2))).toContain("change course");
    const idx = p.records.findIndex((r) => r.type === "message_end" && r.message.role === "user" && r.message.content[0].text === "change course");
    const toolEnd = p.records.findIndex((r) => r.type === "tool_execution_end");
    expect(idx).toBeGreaterThan(toolEnd);
    await p.close();
    await fake.stop();
  });

  test.concurrent("interrupt mode immediate: a pending steer skips the remaining tool calls", async () => {
    const { fake, p, cwd } = setup();
    const second = join(cwd, "second");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "t1", name: "bash", arguments: { command: GATED } },
        { type: "toolCall", id: "t2", name: "bash", arguments: { command: `touch ${second}` } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "set_interrupt_mode", mode: "immediate" });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("tool_execution_start");
    await p.request({ type: "steer", message: "stop that" });
    release(cwd);
    await p.waitFor("agent_settled");
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    expect(results.map((m: Rec) => [m.toolCallId, m.isError])).toEqual([
      ["t1", false],
      ["t2", true],
    ]);
    expect(results[1].content[0].text).toContain("skipped");
    expect(existsSync(second)).toBe(false);
    await p.close();
    await fake.stop();
  });

  test.concurrent("follow-up waits for the run to end; clear_queue returns and removes queued texts", async () => {
    const { fake, p, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: GATED } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "first done" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "follow done" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("tool_execution_start");
    await p.request({ type: "follow_up", message: "then this" });
    await p.request({ type: "steer", message: "drop me" });
    const cleared = await p.request({ type: "clear_queue" });
    expect(cleared.data).toEqual({ steering: ["drop me"], followUp: ["then this"] });
    await p.request({ type: "follow_up", message: "then this" });
    const st = await p.request({ type: "get_state" });
    expect(st.data.pendingMessageCount).toBe(1);
    release(cwd);
    await p.waitFor("agent_settled");
    expect(fake.requests.length).toBe(3);
    const users = p.records.filter((r) => r.type === "message_end" && r.message.role === "user").map((r) => r.message.content[0].text);
    expect(users).toEqual(["go", "then this"]);
    expect(p.records.filter((r) => r.type === "agent_end").length).toBe(1);
    await p.close();
    await fake.stop();
  });
});
