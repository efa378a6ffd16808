import { describe, expect, test } from "bun:test";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  return { fake, p };
}

const ECHO = {
  name: "echo_host",
  label: "Echo Host",
  description: "Echo a value from the embedding host",
  parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"], additionalProperties: false },
};

describe("host tools (spec 002)", () => {
  test.concurrent("register, call, stream an update, answer; the model sees the result", async () => {
    const { fake, p } = setup();
    const reg = await p.request({ type: "set_host_tools", tools: [ECHO] });
    expect(reg.data).toEqual({ toolNames: ["echo_host"] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_h", name: "echo_host", arguments: { message: "hello" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "got it" }] });
    await p.request({ type: "prompt", message: "use the host" });
    const call = await p.waitFor("host_tool_call");
    expect(call).toEqual({ type: "host_tool_call", id: expect.any(String), toolCallId: "toolu_h", toolName: "echo_host", arguments: { message: "hello" } });
    p.send({ type: "host_tool_update", id: call.id, partialResult: { content: [{ type: "text", text: "working" }] } });
    const upd = await p.waitFor("tool_execution_update");
    expect(upd).toMatchObject({ toolCallId: "toolu_h", toolName: "echo_host", partialResult: { content: [{ type: "text", text: "working" }] } });
    p.send({ type: "host_tool_result", id: "unknown-id", result: { content: [{ type: "text", text: "ignored" }] } });
    p.send({ type: "host_tool_result", id: call.id, result: { content: [{ type: "text", text: "echo: hello" }] } });
    await p.waitFor("agent_settled");
    const end = p.records.find((r) => r.type === "tool_execution_end");
    expect(end).toMatchObject({ isError: false, result: { content: [{ type: "text", text: "echo: hello" }] } });
    // no response records for the sub-protocol frames
    expect(p.records.filter((r) => r.type === "response").length).toBe(2);
    const tools = (fake.requests[0]!.body as { tools: Rec[] }).tools.map((t) => t.name);
    expect(tools).toContain("echo_host");
    const last = (fake.requests[1]!.body as { messages: { content: Rec[] }[] }).messages.at(-1)!;
    expect(JSON.stringify(last)).toContain("echo: hello");
    await p.close();
    await fake.stop();
  });

  test.concurrent("isError results, schema-invalid calls, and cancel on abort", async () => {
    const { fake, p } = setup();
    await p.request({ type: "set_host_tools", tools: [ECHO] });
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "a", name: "echo_host", arguments: { message: 5 } },
        { type: "toolCall", id: "b", name: "echo_host", arguments: { message: "x" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "c", name: "echo_host", arguments: { message: "never answered" } }] });
    await p.request({ type: "prompt", message: "go" });
    const call = await p.waitFor("host_tool_call");
    expect(call.toolCallId).toBe("b");
    p.send({ type: "host_tool_result", id: call.id, isError: true, result: { content: [{ type: "text", text: "host says no" }] } });
    const second = await p.waitFor((r) => r.type === "host_tool_call" && r.toolCallId === "c");
    const ab = await p.request({ type: "abort" });
    expect(ab.success).toBe(true);
    const cancel = p.records.find((r) => r.type === "host_tool_cancel");
    expect(cancel).toEqual({ type: "host_tool_cancel", id: expect.any(String), targetId: second.id });
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    expect(results.map((m: Rec) => [m.toolCallId, m.isError])).toEqual([
      ["a", true],
      ["b", true],
      ["c", true],
    ]);
    expect(results[0].content[0].text).toContain("message");
    expect(results[1].content[0].text).toBe("host says no");
    await p.close();
    await fake.stop();
  });

  test.concurrent("every keyword of a declared schema is checked; a schema pion cannot check is refused at registration", async () => {
    const { fake, p } = setup();
    const DEPLOY = {
      name: "deploy",
      description: "Deploy a version",
      parameters: {
        type: "object",
        $defs: { target: { enum: ["staging", "production"] } },
        properties: {
          version: { type: "string", pattern: "^v\\d+\\.\\d+$" },
          target: { $ref: "#/$defs/target" },
          notify: { anyOf: [{ type: "string", format: "email" }, { const: false }] },
          steps: { type: "array", items: { type: "string", minLength: 1 }, minItems: 1 },
        },
        required: ["version", "target", "steps"],
        additionalProperties: false,
      },
    };
    const refused = await p.request({ type: "set_host_tools", tools: [ECHO, { ...ECHO, name: "odd", parameters: { type: "object", properties: { a: { type: "string", format: "phone" } } } }] });
    expect(refused).toMatchObject({ success: false, command: "set_host_tools", error: expect.stringContaining('Host tool "odd": its parameters schema cannot be checked: #/properties/a/format') });
    expect((await p.request({ type: "set_host_tools", tools: [DEPLOY] })).data).toEqual({ toolNames: ["deploy"] });
    const bad = [
      { version: "1.2", target: "staging", steps: ["build"] },
      { version: "v1.2", target: "moon", steps: ["build"] },
      { version: "v1.2", target: "staging", notify: "not-an-address", steps: ["build"] },
      { version: "v1.2", target: "staging", steps: [] },
      { version: "v1.2", target: "staging", steps: [""] },
      { version: "v1.2", target: "staging", steps: ["build"], force: true },
    ];
    fake.enqueue({ blocks: [...bad.map((args, i) => ({ type: "toolCall" as const, id: `bad${i}`, name: "deploy", arguments: args })), { type: "toolCall", id: "good", name: "deploy", arguments: { version: "v1.2", target: "production", notify: false, steps: ["build"] } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "deploy" });
    const call = await p.waitFor("host_tool_call");
    expect(call.toolCallId).toBe("good");
    p.send({ type: "host_tool_result", id: call.id, result: { content: [{ type: "text", text: "deployed" }] } });
    await p.waitFor("agent_settled");
    expect(p.records.filter((r) => r.type === "host_tool_call").length).toBe(1);
    const results = p.records.filter((r) => r.type === "message_end" && r.message.role === "toolResult").map((r) => r.message);
    const texts = results.slice(0, bad.length).map((m: Rec) => [m.isError, m.content[0].text.split(": ").slice(1, 2)[0]]);
    expect(texts).toEqual([
      [true, "version"],
      [true, "target"],
      [true, "notify"],
      [true, "steps"],
      [true, "steps.0"],
      [true, "force"],
    ]);
    expect(results.at(-1)).toMatchObject({ toolCallId: "good", isError: false });
    await p.close();
    await fake.stop();
  });

  test.concurrent("set_todos normalizes, get_state shows them, the model updates them with the todo tool", async () => {
    const { fake, p } = setup();
    const r = await p.request({
      type: "set_todos",
      phases: [{ name: "Evaluation", tasks: [{ content: "Map the read tool", status: "in_progress" }, { content: "Exercise edit" }] }],
    });
    const phases = [
      {
        id: "phase-1",
        name: "Evaluation",
        tasks: [
          { id: "task-1", content: "Map the read tool", status: "in_progress" },
          { id: "task-2", content: "Exercise edit", status: "pending" },
        ],
      },
    ];
    expect(r.data).toEqual({ phases });
    expect(p.records.find((x) => x.type === "todo_update")).toEqual({ type: "todo_update", phases });
    expect((await p.request({ type: "get_state" })).data.todoPhases).toEqual(phases);
    expect((await p.request({ type: "set_todos", phases: [{ name: "x", tasks: [{ content: "y", status: "done" }] }] })).success).toBe(false);
    fake.enqueue({
      blocks: [{ type: "toolCall", id: "t", name: "todo", arguments: { phases: [{ name: "Evaluation", tasks: [{ content: "Map the read tool", status: "completed" }] }] } }],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "updated" }] });
    await p.request({ type: "prompt", message: "mark it done" });
    await p.waitFor("agent_settled");
    expect((fake.requests[0]!.body as { tools: Rec[] }).tools.map((t) => t.name)).toContain("todo");
    const st = (await p.request({ type: "get_state" })).data;
    expect(st.todoPhases[0].tasks).toEqual([{ id: "task-1", content: "Map the read tool", status: "completed" }]);
    expect(p.records.filter((x) => x.type === "todo_update").length).toBe(2);
    await p.close();
    await fake.stop();
  });
});
