import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { EVENT_SCHEMAS } from "../../src/protocol/events.ts";
import { REQUEST_TYPES } from "../../src/protocol/results.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";
import { checkRecords, CheckedPion } from "../support/wire-check.ts";

const UI = resolve(import.meta.dir, "../fixtures/extensions/ui.ts");
const BROKEN = resolve(import.meta.dir, "../fixtures/extensions/e2e-broken.ts");

const ECHO = {
  name: "echo_host",
  description: "Echo a value from the embedding host",
  parameters: { type: "object", properties: { message: { type: "string" } }, required: ["message"] },
};

/** Every record must conform; the failure lists each one that does not, with its problems. */
function expectConforming(recs: readonly Rec[]): void {
  const bad = checkRecords(recs);
  expect(bad.map((b) => `#${b.index} ${String(b.type)}: ${b.problems.join("; ")}`)).toEqual([]);
}

describe("every record pion writes matches the published schemas", () => {
  test("a representative RPC session", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    // keepRecentTokens 8: the compaction below keeps the host's bash run (10 tokens) and summarizes the two prompts before it
    writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 }, compaction: { keepRecentTokens: 8, reserveTokens: 1000 } });
    const p = new CheckedPion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", UI, "-e", BROKEN] });
    await p.waitFor((r) => r.type === "extension_error");

    const run = async (cmd: Rec): Promise<Rec> => {
      const id = `w${p.records.length}`;
      const settled = p.waitFor((r) => r.type === "prompt_result" && r.id === id);
      const res = await p.request({ ...cmd, id });
      expect(res.success).toBe(true);
      return settled;
    };

    // a prompt whose reply thinks, talks and calls a tool; a transient failure is retried first
    fake.enqueue({ kind: "http_error", status: 529 });
    fake.enqueue({
      blocks: [
        { type: "thinking", thinking: "Let me check.", signature: "sig" },
        { type: "text", text: ["Looking", " around."] },
        { type: "toolCall", id: "toolu_1", name: "bash", arguments: { command: "echo tool-ran" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "alpha done ".repeat(10) }], usage: { input: 100, output: 10 } });
    expect((await run({ type: "prompt", message: "alpha ".repeat(10) })).stopReason).toBe("stop");
    fake.enqueue({ blocks: [{ type: "text", text: "beta done ".repeat(10) }], usage: { input: 100, output: 10 } });
    await run({ type: "prompt", message: "beta ".repeat(10) });

    // the host's bash command, with streamed output
    expect((await p.request({ type: "bash", command: "echo from-bash; echo more" })).data).toMatchObject({ exitCode: 0, cancelled: false });

    // read-only state commands
    for (const type of [
      "get_state",
      "get_messages",
      "get_entries",
      "get_tree",
      "get_session_stats",
      "get_fork_messages",
      "get_branch_messages",
      "get_last_assistant_text",
      "get_available_models",
      "get_available_thinking_levels",
      "get_commands",
    ]) {
      expect((await p.request({ type })).success).toBe(true);
    }
    const page = await p.request({ type: "get_entries", limit: 2 });
    expect(page.data.hasMore).toBe(true);
    await p.request({ type: "get_entries", since: page.data.entries[1].id, limit: 100 });
    const caps = (await p.request({ type: "get_capabilities" })).data;
    expect([...caps.events].sort()).toEqual(Object.keys(EVENT_SCHEMAS).sort());
    expect([...caps.commands].sort()).toEqual([...REQUEST_TYPES].sort());

    // settings
    await p.request({ type: "set_thinking_level", level: "high" });
    await p.request({ type: "cycle_thinking_level" });
    await p.request({ type: "set_model", provider: "fake", modelId: "fake-plain" });
    await p.request({ type: "set_model", provider: "fake", modelId: "fake-model" });
    await p.request({ type: "cycle_model" });
    await p.request({ type: "set_model", provider: "fake", modelId: "fake-model" });
    for (const cmd of [
      { type: "set_steering_mode", mode: "all" },
      { type: "set_follow_up_mode", mode: "one-at-a-time" },
      { type: "set_interrupt_mode", mode: "wait" },
      { type: "set_auto_compaction", enabled: true },
      { type: "set_auto_retry", enabled: true },
      { type: "abort_retry" },
      { type: "abort_bash" },
      { type: "clear_queue" },
    ]) {
      expect((await p.request(cmd)).success).toBe(true);
    }
    await p.request({ type: "set_session_name", name: "wire check" });
    await p.request({ type: "set_todos", phases: [{ name: "Check", tasks: [{ content: "validate", status: "in_progress" }] }] });

    // manual compaction that cuts (a small keepRecentTokens)
    fake.enqueue({ blocks: [{ type: "text", text: "## Goal\nSUMMARY" }], usage: { input: 300, output: 40 } });
    const compacted = await p.request({ type: "compact" });
    expect(compacted).toMatchObject({ success: true, data: { summary: "## Goal\nSUMMARY" } });

    // export, sessions
    expect((await p.request({ type: "export_html", outputPath: "out.html" })).success).toBe(true);
    expect((await p.request({ type: "list_sessions" })).data.sessions.length).toBeGreaterThan(0);
    expect((await p.request({ type: "list_sessions", limit: 1 })).success).toBe(true);
    expect((await p.request({ type: "search_sessions", query: "beta" })).data.results.length).toBeGreaterThan(0);

    // a host tool round trip, with a partial update
    expect((await p.request({ type: "set_host_tools", tools: [ECHO] })).data).toEqual({ toolNames: ["echo_host"] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_h", name: "echo_host", arguments: { message: "hi" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "echoed" }] });
    const hostRun = run({ type: "prompt", message: "use the host tool" });
    const call = await p.waitFor("host_tool_call");
    p.send({ type: "host_tool_update", id: call.id, partialResult: { content: [{ type: "text", text: "working" }] } });
    p.send({ type: "host_tool_result", id: call.id, result: { content: [{ type: "text", text: "echo: hi" }] } });
    await hostRun;

    // the extension UI: fire-and-forget requests and an answered dialog
    const from = p.records.length;
    await p.request({ type: "prompt", message: "/fire" });
    p.send({ id: "dlg", type: "prompt", message: "/dialog confirm" });
    const confirm = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm", from);
    p.send({ type: "extension_ui_response", id: confirm.id, confirmed: true });
    await p.waitFor((r) => r.type === "response" && r.id === "dlg");
    for (const method of ["notify", "setStatus", "setWidget", "setTitle", "set_editor_text"]) {
      expect(p.records.slice(from).some((r) => r.type === "extension_ui_request" && r.method === method)).toBe(true);
    }

    // a queued follow-up and steer, then abort of a slow reply
    fake.enqueue({ blocks: [{ type: "text", text: ["slow", " slow", " slow", " slow"] }], chunkDelayMs: 150 });
    const slow = p.waitFor((r) => r.type === "prompt_result" && r.id === "slow");
    await p.request({ id: "slow", type: "prompt", message: "take your time" });
    await p.waitFor((r) => r.type === "message_update" && r.assistantMessageEvent.type === "text_delta");
    await p.request({ id: "fu", type: "follow_up", message: "and then?" });
    await p.request({ id: "st", type: "prompt", message: "hurry", streamingBehavior: "steer" });
    expect((await p.request({ type: "abort" })).success).toBe(true);
    expect(await slow).toMatchObject({ aborted: true, stopReason: "aborted" });
    await p.request({ type: "clear_queue" });

    // fork and switch back, clone, a new session
    const forkable = (await p.request({ type: "get_fork_messages" })).data.messages;
    const file = (await p.request({ type: "get_state" })).data.sessionFile;
    expect((await p.request({ type: "fork", entryId: forkable[0].entryId })).data.cancelled).toBe(false);
    expect(await p.request({ type: "switch_session", sessionPath: file })).toMatchObject({ success: true });
    expect((await p.request({ type: "clone" })).success).toBe(true);
    expect((await p.request({ type: "new_session" })).success).toBe(true);

    // error responses: an unknown command, a bad field, a line that is not JSON, a handler failure
    expect((await p.request({ type: "no_such_command" })).success).toBe(false);
    expect((await p.request({ type: "set_thinking_level", level: "enormous" })).success).toBe(false);
    expect((await p.request({ type: "set_model", provider: "nope", modelId: "nope" })).success).toBe(false);
    const before = p.records.length;
    p.write("{not json\n");
    await p.waitFor((r) => r.type === "response" && r.command === "parse", before);

    expect(await p.close()).toBe(0);
    await fake.stop();

    const seen = new Set(p.records.map((r) => (r.type === "response" ? `response:${r.command}` : r.type)));
    for (const t of ["auto_retry_start", "auto_retry_end", "entry_appended", "compaction_start", "compaction_end", "bash_execution_update"]) {
      expect(seen.has(t)).toBe(true);
    }
    for (const t of ["todo_update", "queue_update", "session_info_changed", "thinking_level_changed", "host_tool_call", "tool_execution_update"]) {
      expect(seen.has(t)).toBe(true);
    }
    expectConforming(p.records);
  });

  test.concurrent("a host tool cancelled by abort", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const p = new CheckedPion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "set_host_tools", tools: [ECHO] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "c", name: "echo_host", arguments: { message: "never answered" } }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("host_tool_call");
    await p.request({ type: "abort" });
    await p.waitFor("host_tool_cancel");
    await p.close();
    await fake.stop();
    expectConforming(p.records);
  });

  test.concurrent("JSON mode: the session header line and the events", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [{ type: "text", text: ["Hel", "lo"] }] });
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "hi"], dirs);
    expect(r.code).toBe(0);
    const recs: Rec[] = r.stdout.split("\n").filter(Boolean).map((l) => JSON.parse(l));
    expect(recs[0]!.type).toBe("session");
    expectConforming(recs);
    await fake.stop();
  });
});
