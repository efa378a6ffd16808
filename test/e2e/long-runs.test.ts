import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, tinyProvider, tempDirs, writeFakeModels, writeSettings, type Rec, promptToResult } from "../support/pion.ts";

/** Long single-turn runs: compaction inside the turn, overflow recovery, abort during a tool. */

const MARKER = "**Turn Context (split turn):**";
/** These runs make up to seven model calls and spawn tools: on a loaded machine wait past the default 15 s (a ceiling, not a timed assertion). */
const LONG_WAIT = 60_000;

function setup(settings: Record<string, unknown>) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, { small: tinyProvider(fake.url), "small-openai": tinyProvider(`${fake.url}/v1`, "openai-completions") });
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 }, ...settings });
  return { fake, dirs };
}

type WireMessage = { role: string; content: Rec[] | string };

/** The conversation of a request in either API's shape, system messages left out. */
const conversation = (body: unknown): WireMessage[] => (body as { messages: WireMessage[] }).messages.filter((m) => m.role !== "system");
const textOf = (m: WireMessage) => (typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""));

const toolCall = (id: string, command: string, usage?: { input: number; output: number }): FakeReply => ({
  blocks: [{ type: "toolCall", id, name: "bash", arguments: { command } }],
  ...(usage ? { usage } : {}),
});
const say = (text: string, usage?: { input: number; output: number }): FakeReply => ({ blocks: [{ type: "text", text }], ...(usage ? { usage } : {}) });

const prompt = (p: Pion, message: string): Promise<Rec[]> => promptToResult(p, message, LONG_WAIT);

describe("compaction inside one long turn", () => {
  test.concurrent("manual: a one-prompt session with four long tool results is cut inside the turn", async () => {
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 2000, reserveTokens: 1000 } });
    for (let i = 1; i <= 4; i++) writeFileSync(join(dirs.cwd, `f${i}.txt`), `${String(i).repeat(99)}\n`.repeat(60));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    for (let i = 1; i <= 4; i++) fake.enqueue({ blocks: [{ type: "toolCall", id: `r${i}`, name: "read", arguments: { path: `f${i}.txt` } }] });
    fake.enqueue(say("all four read", { input: 7000, output: 20 }));
    await prompt(p, "fix the build");
    const before = (await p.request({ type: "get_session_stats" })).data.contextUsage;
    expect(before).toEqual({ tokens: 7020, contextWindow: 200000, percent: 3.5 });

    fake.enqueue(say("PREFIX-SUMMARY"));
    const r = await p.request({ type: "compact" });
    expect(r.success).toBe(true);
    const summary: string = r.data.summary;
    expect(summary.startsWith("Nothing happened before the current turn")).toBe(true);
    expect(summary).toContain(`\n\n---\n\n${MARKER}\n\nPREFIX-SUMMARY`);
    expect(summary).toContain("<read-files>\nf1.txt\nf2.txt\nf3.txt\n</read-files>");
    expect(fake.requests.length).toBe(6);
    const asked = textOf(conversation(fake.requests[5]!.body)[0]!);
    expect(asked).toContain("[User]: fix the build");
    expect(asked).toContain("333");
    expect(asked).not.toContain("444");
    const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
    const kept = entries.find((e) => e.id === r.data.firstKeptEntryId)!;
    expect(kept.message).toMatchObject({ role: "assistant", content: [{ type: "toolCall", id: "r4" }] });
    // right after compaction the spec has no figure until a response reports usage
    expect((await p.request({ type: "get_session_stats" })).data.contextUsage).toEqual({ tokens: null, contextWindow: 200000, percent: null });

    fake.enqueue(say("next done", { input: 1900, output: 100 }));
    await prompt(p, "go on");
    const next = conversation(fake.requests[6]!.body);
    expect(next.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(textOf(next[0]!)).toContain(MARKER);
    expect(next[1]!.content).toMatchObject([{ type: "tool_use", id: "r4" }]);
    expect(JSON.stringify(next)).not.toContain("fix the build");
    expect(textOf(next[4]!)).toBe("go on");
    expect((await p.request({ type: "get_session_stats" })).data.contextUsage).toEqual({ tokens: 2000, contextWindow: 200000, percent: 1 });
    await p.close();
    await fake.stop();
  });

  test.concurrent("threshold mid-run: the one turn is compacted after a tool result and the run goes on from the summary", async () => {
    // keepRecentTokens 5: the tool result (2 tokens) is under it, with the call (7) it is reached, so the cut lands on the call
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 5, reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(
      toolCall("t1", "echo first", { input: 3500, output: 10 }),
      say("MID-RUN-PREFIX"),
      say("finished"),
    );
    const recs = await prompt(p, "use a tool");
    const types = recs.map((x) => x.type).filter((t) => !t.startsWith("message_update") && !t.startsWith("tool_execution"));
    const c = types.indexOf("compaction_start");
    expect(types.slice(c - 1, c + 3)).toEqual(["turn_end", "compaction_start", "compaction_end", "turn_start"]);
    expect(recs.find((x) => x.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "threshold" });
    const end = recs.find((x) => x.type === "compaction_end")!;
    expect(end).toMatchObject({ reason: "threshold", aborted: false, willRetry: false });
    expect(end.result.summary).toContain(`${MARKER}\n\nMID-RUN-PREFIX`);
    const next = conversation(fake.requests[2]!.body);
    expect(next.map((m) => m.role)).toEqual(["user", "assistant", "user"]);
    expect(textOf(next[0]!)).toContain("MID-RUN-PREFIX");
    expect(next[1]!.content).toMatchObject([{ type: "tool_use", id: "t1" }]);
    expect(JSON.stringify(next)).not.toContain("use a tool");
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop" });
    expect(types.filter((t) => t === "agent_start").length).toBe(1);
    await p.close();
    await fake.stop();
  });
});

describe("threshold compaction that fails", () => {
  test.concurrent("a provider error on the summary is reported in compaction_end and on stderr, and the run goes on", async () => {
    const { fake, dirs } = setup({ retry: { enabled: false }, compaction: { keepRecentTokens: 5, reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(
      toolCall("t1", "echo first", { input: 3500, output: 10 }),
      { kind: "http_error", status: 400, message: "summary refused", errorType: "invalid_request_error" },
      say("finished anyway"),
    );
    const recs = await prompt(p, "use a tool");
    const end = recs.find((x) => x.type === "compaction_end")!;
    expect(end).toMatchObject({ reason: "threshold", aborted: false, willRetry: false });
    expect(end.errorMessage).toStartWith("Compaction failed: 400");
    expect(end.errorMessage).toContain("summary refused");
    expect(p.stderr).toContain("threshold compaction failed");
    expect(p.stderr).toContain("summary refused");
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop" });
    expect((await p.request({ type: "get_last_assistant_text" })).data.text).toBe("finished anyway");
    await p.close();
    await fake.stop();
  });
});

describe("overflow recovery", () => {
  for (const [model, overflow] of [
    ["small/tiny", { kind: "http_error", status: 400, message: "prompt is too long: 5000 tokens > 4000 maximum", errorType: "invalid_request_error" }],
    ["small-openai/tiny", { kind: "http_error", status: 400, message: "This model's maximum context length is 4000 tokens.", errorType: "invalid_request_error" }],
  ] as const) {
    test.concurrent(`${model}: the fifth call of one turn overflows; compact once inside the turn, retry in a new run`, async () => {
      const { fake, dirs } = setup({ compaction: { keepRecentTokens: 60, reserveTokens: 10 } });
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model] });
      for (let i = 1; i <= 4; i++) fake.enqueue(toolCall(`t${i}`, `echo step${i}`));
      fake.enqueue(overflow, say("OVERFLOW-PREFIX"), say("recovered"));
      const recs = await prompt(p, "fix the build");
      const types = recs.map((x) => x.type);
      const c = types.indexOf("compaction_start");
      expect(recs[c]).toEqual({ type: "compaction_start", reason: "overflow" });
      expect(types.slice(c - 2, c)).toEqual(["agent_end", "entry_appended"]);
      expect(recs[c - 2]!.willRetry).toBe(true);
      expect(recs[c - 1]!.entry).toMatchObject({ type: "context_edit", replacement: null });
      const end = recs.find((x) => x.type === "compaction_end")!;
      expect(end).toMatchObject({ reason: "overflow", aborted: false, willRetry: true });
      expect(end.result.summary).toContain(`${MARKER}\n\nOVERFLOW-PREFIX`);
      expect(types.slice(types.indexOf("compaction_end") + 1)[0]).toBe("agent_start");
      expect(types.filter((t) => t === "agent_start").length).toBe(2);
      expect(types.filter((t) => t === "compaction_start").length).toBe(1);
      expect(fake.requests.length).toBe(7);
      const retried = conversation(fake.requests[6]!.body);
      expect(textOf(retried[0]!)).toContain("OVERFLOW-PREFIX");
      expect(JSON.stringify(retried)).not.toContain("fix the build");
      expect(JSON.stringify(retried)).toContain("step4");
      expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop", aborted: false });
      expect((await p.request({ type: "get_last_assistant_text" })).data.text).toBe("recovered");
      await p.close();
      await fake.stop();
    });
  }

  test.concurrent("an overflow coming back on an auto-retry is recovered the same way", async () => {
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 60, reserveTokens: 10 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(
      toolCall("t1", "echo one"),
      { kind: "http_error", status: 529 },
      { kind: "http_error", status: 400, message: "prompt is too long: 4100 tokens > 4000 maximum" },
      say("AFTER-RETRY-PREFIX"),
      say("recovered"),
    );
    const recs = await prompt(p, "fix the build");
    const types = recs.map((x) => x.type);
    expect(types.indexOf("auto_retry_start")).toBeLessThan(types.indexOf("compaction_start"));
    expect(recs.find((x) => x.type === "compaction_end")).toMatchObject({ reason: "overflow", willRetry: true });
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop" });
    expect(fake.requests.length).toBe(5);
    await p.close();
    await fake.stop();
  });

  test.concurrent("two prompts, the second overflows: the first is summarized, the second kept and retried", async () => {
    // the default keepRecentTokens (20000) is far above this session's size
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    fake.enqueue({ kind: "http_error", status: 400, message: "prompt is too long: 4100 tokens > 4000 maximum" }, say("FIRST-PROMPT-SUMMARY"), say("second answer"));
    const recs = await prompt(p, "second prompt");
    const end = recs.find((x) => x.type === "compaction_end")!;
    expect(end).toMatchObject({ reason: "overflow", willRetry: true, result: { summary: "FIRST-PROMPT-SUMMARY" } });
    const retried = conversation(fake.requests[3]!.body);
    expect(retried.map(textOf)).toEqual([expect.stringContaining("FIRST-PROMPT-SUMMARY"), "second prompt"]);
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop" });
    await p.close();
    await fake.stop();
  });

  test.concurrent("the kept part alone overflows: no summary is asked for, the run fails naming the window and the estimate", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    fake.enqueue({ kind: "http_error", status: 400, message: "prompt is too long: 9000 tokens > 4000 maximum" });
    const recs = await prompt(p, "x".repeat(24000));
    const end = recs.find((x) => x.type === "compaction_end")!;
    expect(end.errorMessage).toMatch(
      /^Context overflow recovery failed: the part of the context that compaction would keep alone \(about 600\d tokens, estimated\) does not fit the context window of small\/tiny \(4000 tokens\)$/,
    );
    expect(end).toMatchObject({ reason: "overflow", aborted: false, willRetry: false });
    expect(end.result).toBeUndefined();
    const result = recs.at(-1)!;
    expect(result).toMatchObject({ type: "prompt_result", stopReason: "error", aborted: false });
    expect(result.errorMessage).toContain("does not fit the context window of small/tiny (4000 tokens)");
    expect(result.errorMessage).toContain("prompt is too long: 9000 tokens");
    expect(fake.requests.length).toBe(2);
    // the process keeps serving
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    await p.close();
    await fake.stop();
  });

  test.concurrent("still too long after compacting: one compaction, then recovery gives up without looping", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    const tooLong: FakeReply = { kind: "http_error", status: 400, message: "prompt is too long: 4100 tokens > 4000 maximum" };
    fake.enqueue(tooLong, say("SUMMARY"), tooLong);
    const recs = await prompt(p, "second prompt");
    const ends = recs.filter((x) => x.type === "compaction_end");
    expect(ends.map((e) => [e.willRetry, e.errorMessage])).toEqual([
      [true, undefined],
      [false, expect.stringMatching(/^Context overflow recovery failed: the compacted context alone \(about \d+ tokens, estimated\) does not fit the context window of small\/tiny \(4000 tokens\)$/)],
    ]);
    expect(recs.filter((x) => x.type === "compaction_start").length).toBe(2);
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "error", errorMessage: expect.stringContaining("(4000 tokens)") });
    expect(fake.requests.length).toBe(4);
    await p.close();
    await fake.stop();
  });
});

describe("abort during a tool", () => {
  test.concurrent("the tool ends aborted, then an empty aborted reply in a turn of its own; no request is sent", async () => {
    const { fake, dirs } = setup({});
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue(toolCall("t1", "echo started; sleep 30"));
    p.send({ id: "go", type: "prompt", message: "run it" });
    const from = p.records.length;
    await p.waitFor((r) => r.type === "tool_execution_update" && JSON.stringify(r.partialResult).includes("started"), from, LONG_WAIT);
    const ab = await p.request({ type: "abort" });
    expect(ab.success).toBe(true);
    await p.waitFor((r) => r.type === "prompt_result" && r.id === "go", from, LONG_WAIT);
    const recs = p.records.slice(from).filter((r) => r.type !== "tool_execution_update");
    const at = recs.findIndex((r) => r.type === "tool_execution_end");
    const tail = recs.slice(at);
    expect(tail.map((r) => (r.type.startsWith("message_") ? `${r.type}:${r.message.role}` : r.type))).toEqual([
      "tool_execution_end",
      "message_start:toolResult",
      "message_end:toolResult",
      "turn_end",
      "turn_start",
      "message_start:assistant",
      "message_end:assistant",
      "turn_end",
      "agent_end",
      "agent_settled",
      "prompt_result",
      "response",
    ]);
    expect(tail[0]).toMatchObject({ isError: true, result: { content: [{ type: "text", text: expect.stringContaining("Command aborted") }] } });
    expect(tail[6]!.message).toMatchObject({ role: "assistant", content: [], stopReason: "aborted", errorMessage: "The operation was aborted." });
    expect(tail[7]).toMatchObject({ type: "turn_end", toolResults: [] });
    expect(tail[9]).toMatchObject({ type: "agent_settled", aborted: true });
    expect(tail[10]).toMatchObject({ stopReason: "aborted", aborted: true });
    expect(fake.requests.length).toBe(1);
    const msgs = (await p.request({ type: "get_messages" })).data.messages as Rec[];
    expect(msgs.map((m) => [m.role, m.stopReason])).toEqual([
      ["user", undefined],
      ["assistant", "toolUse"],
      ["toolResult", undefined],
      ["assistant", "aborted"],
    ]);
    await p.close();
    await fake.stop();
  });
});
