import { describe, expect, test } from "bun:test";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { Pion, tinyProvider, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

function setup(settings: Record<string, unknown> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, { small: tinyProvider(fake.url), "small-openai": tinyProvider(`${fake.url}/v1`, "openai-completions") });
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 }, compaction: { keepRecentTokens: 30, reserveTokens: 1000 }, ...settings });
  return { fake, dirs };
}

async function turn(p: Pion, fake: FakeProvider, text: string, usage = { input: 100, output: 10 }) {
  fake.enqueue({ blocks: [{ type: "text", text: `answer to ${text} `.repeat(5) }], usage });
  const from = p.records.length;
  await p.request({ type: "prompt", message: `${text} `.repeat(10) });
  await p.waitFor("agent_settled", from);
}

const userTexts = (body: unknown) =>
  (body as { messages: { role: string; content: Rec[] | string }[] }).messages.map((m) =>
    typeof m.content === "string" ? m.content : m.content.map((c) => c.text ?? "").join(""),
  );

describe("compaction", () => {
  test.concurrent("manual compact: summary request, compaction entry, and the next request carries the summary", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    for (const t of ["alpha", "beta", "gamma"]) await turn(p, fake, t);
    fake.enqueue({ blocks: [{ type: "text", text: "## Goal\nSUMMARY-OF-ALPHA-BETA" }], usage: { input: 300, output: 40 } });
    const st0 = (await p.request({ type: "get_state" })).data;
    expect(st0.isCompacting).toBe(false);
    const r = await p.request({ type: "compact", customInstructions: "Focus on alpha" });
    expect(r.success).toBe(true);
    expect(r.data).toMatchObject({
      summary: "## Goal\nSUMMARY-OF-ALPHA-BETA",
      firstKeptEntryId: expect.stringMatching(/^[0-9a-f]{8}$/),
      tokensBefore: expect.any(Number),
      estimatedTokensAfter: expect.any(Number),
      usage: { input: 300, output: 40 },
      details: { readFiles: [], modifiedFiles: [] },
    });
    expect(p.records.find((x) => x.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "manual" });
    const end = p.records.find((x) => x.type === "compaction_end");
    expect(end).toEqual({ type: "compaction_end", reason: "manual", result: r.data, aborted: false, willRetry: false });
    const summaryReq = fake.requests.at(-1)!.body as { tools?: unknown[]; messages: { content: Rec[] | string }[]; system?: unknown };
    expect(summaryReq.tools ?? []).toEqual([]);
    const asked = JSON.stringify(summaryReq.messages);
    expect(asked).toContain("alpha");
    expect(asked).toContain("Focus on alpha");
    const entries = (await p.request({ type: "get_entries" })).data.entries;
    const c = entries.at(-1);
    expect(c).toMatchObject({ type: "compaction", summary: r.data.summary, firstKeptEntryId: r.data.firstKeptEntryId, tokensBefore: r.data.tokensBefore });
    const stats = (await p.request({ type: "get_session_stats" })).data;
    expect(stats.contextUsage).toMatchObject({ tokens: null, percent: null });
    expect(stats.tokens.input).toBe(300 + 300);

    await turn(p, fake, "delta");
    const texts = userTexts(fake.requests.at(-1)!.body);
    expect(texts[0]).toContain("SUMMARY-OF-ALPHA-BETA");
    expect(texts.join("\n")).not.toContain("alpha alpha");
    expect(texts.at(-1)).toContain("delta");
    const msgs = (await p.request({ type: "get_messages" })).data.messages;
    expect(msgs[0]).toMatchObject({ role: "compactionSummary", summary: r.data.summary });
    await p.close();
    await fake.stop();
  });

  test.concurrent("nothing to compact is a clear failure with compaction_end.errorMessage", async () => {
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 20000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await turn(p, fake, "one");
    const r = await p.request({ type: "compact" });
    expect(r).toMatchObject({ success: false, error: "Nothing to compact (session too small)" });
    expect(p.records.find((x) => x.type === "compaction_end")).toEqual({
      type: "compaction_end",
      reason: "manual",
      aborted: false,
      willRetry: false,
      errorMessage: "Compaction failed: Nothing to compact (session too small)",
    });
    await p.close();
    await fake.stop();
  });

  test.concurrent("threshold: a prompt over the window minus reserve compacts first", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    await turn(p, fake, "one", { input: 500, output: 10 });
    await turn(p, fake, "two", { input: 3200, output: 10 });
    fake.enqueue({ blocks: [{ type: "text", text: "THRESHOLD-SUMMARY" }] });
    await turn(p, fake, "three", { input: 200, output: 10 });
    const start = p.records.find((x) => x.type === "compaction_start");
    expect(start).toEqual({ type: "compaction_start", reason: "threshold" });
    const i = p.records.indexOf(start!);
    expect(p.records.slice(0, i).filter((x) => x.type === "agent_start").length).toBe(2);
    expect(p.records[i - 1]).toMatchObject({ type: "response", command: "prompt" });
    expect(userTexts(fake.requests.at(-1)!.body)[0]).toContain("THRESHOLD-SUMMARY");
    const settled = p.records.findLast((x) => x.type === "agent_settled");
    expect(settled!.usage.output).toBe(5 + 10);
    await p.close();
    await fake.stop();
  });

  test.concurrent("threshold between turns: after tool results, before the next model call", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    await turn(p, fake, "one", { input: 100, output: 10 });
    await turn(p, fake, "two", { input: 100, output: 10 });
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "echo hi" } }], usage: { input: 3500, output: 10 } },
      { blocks: [{ type: "text", text: "MID-RUN-SUMMARY" }] },
      { blocks: [{ type: "text", text: "finished" }] },
    );
    const from = p.records.length;
    await p.request({ type: "prompt", message: "use a tool" });
    await p.waitFor("agent_settled", from);
    const types = p.types(from).filter((t) => !t.startsWith("message_update") && !t.startsWith("tool_execution"));
    const c = types.indexOf("compaction_start");
    expect(types.slice(c - 1, c + 3)).toEqual(["turn_end", "compaction_start", "compaction_end", "turn_start"]);
    const texts = userTexts(fake.requests.at(-1)!.body);
    expect(texts[0]).toContain("MID-RUN-SUMMARY");
    await p.close();
    await fake.stop();
  });

  for (const [model, reply] of [
    ["small/tiny", { kind: "http_error", status: 400, message: "prompt is too long: 5000 tokens > 4000 maximum", errorType: "invalid_request_error" }],
    ["small-openai/tiny", { kind: "http_error", status: 400, message: "This model's maximum context length is 4000 tokens.", errorType: "invalid_request_error" }],
  ] as const) {
    test.concurrent(`overflow from ${model}: compact once with reason overflow, then retry the turn`, async () => {
      const { fake, dirs } = setup({ compaction: { keepRecentTokens: 15, reserveTokens: 1000 } });
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model] });
      await turn(p, fake, "one", { input: 100, output: 10 });
      await turn(p, fake, "two", { input: 100, output: 10 });
      // keepRecentTokens 15 (the new prompt, 2 tokens, and turn two's answer, 18) cuts inside turn two: a history summary and a split-turn summary
      fake.enqueue(
        reply,
        { blocks: [{ type: "text", text: "OVERFLOW-SUMMARY" }] },
        { blocks: [{ type: "text", text: "TURN-PREFIX" }] },
        { blocks: [{ type: "text", text: "after overflow" }] },
      );
      const from = p.records.length;
      await p.request({ type: "prompt", message: "three" });
      await p.waitFor("agent_settled", from);
      const recs = p.records.slice(from);
      expect(recs.find((x) => x.type === "agent_end")!.willRetry).toBe(true);
      expect(recs.find((x) => x.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "overflow" });
      const end = recs.find((x) => x.type === "compaction_end")!;
      expect(end).toMatchObject({ reason: "overflow", aborted: false, willRetry: true });
      expect(end.result.summary).toBe("OVERFLOW-SUMMARY\n\n---\n\n**Turn Context (split turn):**\n\nTURN-PREFIX");
      const last = recs.findLast((x) => x.type === "message_end")!;
      expect(last.message.content).toEqual([{ type: "text", text: "after overflow" }]);
      expect(recs.filter((x) => x.type === "compaction_start").length).toBe(1);
      await p.close();
      await fake.stop();
    });
  }

  test.concurrent("a lone prompt that overflows: nothing can be cut, recovery gives up naming the window and the estimate", async () => {
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 100000, reserveTokens: 10 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue({ kind: "http_error", status: 400, message: "prompt is too long" });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    const why = "the part of the context that compaction would keep alone (about 1 tokens, estimated) does not fit the context window of small/tiny (4000 tokens)";
    expect(p.records.filter((x) => x.type === "compaction_end").map((x) => x.errorMessage)).toEqual([`Context overflow recovery failed: ${why}`]);
    const result = await p.waitFor("prompt_result");
    expect(result).toMatchObject({ stopReason: "error", aborted: false });
    expect(result.errorMessage).toStartWith(`Context overflow: ${why} (provider: 400`);
    expect(fake.requests.length).toBe(1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort during compaction: compaction_end aborted, no entry written; summary retry events", async () => {
    // keepRecentTokens 20 keeps turn c3 whole (its answer is 17 tokens, its prompt 8): one summary request
    const { fake, dirs } = setup({ compaction: { keepRecentTokens: 20, reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    for (const t of ["a1", "b2", "c3"]) await turn(p, fake, t);
    const before = (await p.request({ type: "get_entries" })).data.entries.length;
    fake.enqueue({ blocks: [{ type: "text", text: ["x", "y"] }], stallAfterChunks: 3 });
    p.send({ id: "c", type: "compact" });
    await p.waitFor("compaction_start");
    expect((await p.request({ type: "get_state" })).data.isCompacting).toBe(true);
    await p.request({ type: "abort" });
    expect(await p.waitFor((x) => x.type === "response" && x.id === "c")).toMatchObject({ success: false });
    expect(p.records.find((x) => x.type === "compaction_end")).toMatchObject({ reason: "manual", aborted: true, willRetry: false });
    expect((await p.request({ type: "get_entries" })).data.entries.length).toBe(before);

    fake.enqueue({ kind: "http_error", status: 529 }, { blocks: [{ type: "text", text: "RETRIED-SUMMARY" }] });
    const from = p.records.length;
    const r = await p.request({ type: "compact" });
    expect(r.data.summary).toBe("RETRIED-SUMMARY");
    expect(p.types(from).filter((t) => t.startsWith("summarization") || t.startsWith("compaction"))).toEqual([
      "compaction_start",
      "summarization_retry_scheduled",
      "summarization_retry_attempt_start",
      "summarization_retry_finished",
      "compaction_end",
    ]);
    expect(p.records.find((x) => x.type === "summarization_retry_attempt_start")).toEqual({
      type: "summarization_retry_attempt_start",
      source: "compaction",
      reason: "manual",
    });
    await p.close();
    await fake.stop();
  });
});
