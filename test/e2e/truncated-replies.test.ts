import { describe, expect, test } from "bun:test";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, tinyProvider, writeFakeModels, writeSettings, type Rec, promptToResult } from "../support/pion.ts";

/**
 * Replies that stop at the output limit (`stopReason: "length"`). One that used the model's
 * whole output limit is a normal, truncated reply; one cut off below it may be context
 * pressure and gets one compact-and-retry when there is something to compact; a request that
 * did not fit (the provider's context-length error, or no output after a prompt that filled
 * the window) is an overflow and is compacted and retried as before.
 */

const LONG_WAIT = 60_000;
const lines = (out: string): Rec[] => out.split("\n").filter(Boolean).map((l) => JSON.parse(l));
const say = (text: string): FakeReply => ({ blocks: [{ type: "text", text }] });
const cut = (text: string, usage: { input: number; output: number }): FakeReply => ({ blocks: [{ type: "text", text }], stopReason: "length", usage });

/** Models whose output limit is 64 tokens, on the Messages API and on Chat Completions. */
const capped = (baseUrl: string, api: string) => ({
  baseUrl,
  api,
  apiKey: "k",
  models: [{ id: "m64", reasoning: false, contextWindow: 200000, maxTokens: 64, cost: { input: 1, output: 2 } }],
});

function setup(settings: Record<string, unknown> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, {
    capped: capped(fake.url, "anthropic-messages"),
    "capped-openai": capped(`${fake.url}/v1`, "openai-completions"),
    small: tinyProvider(fake.url),
  });
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 }, ...settings });
  return { fake, dirs };
}

const prompt = (p: Pion, message: string): Promise<Rec[]> => promptToResult(p, message, LONG_WAIT);

const RECOVERY_EVENTS = ["compaction_start", "compaction_end", "auto_retry_start", "entry_appended"];

describe("a reply that used the whole output limit", () => {
  for (const model of ["capped/m64", "capped-openai/m64"]) {
    test.concurrent(`${model}, json mode: kept with stopReason length, no compaction, exit 0`, async () => {
      const { fake, dirs } = setup();
      fake.enqueue(cut("sixty-four tokens of an answer", { input: 1500, output: 64 }));
      const r = await runPion(["--mode", "json", "--model", model, "explain the build"], dirs);
      expect(r.stderr).not.toContain("overflow");
      expect(r.code).toBe(0);
      const recs = lines(r.stdout);
      expect(recs.filter((x) => RECOVERY_EVENTS.includes(x.type))).toEqual([]);
      const ends = recs.filter((x) => x.type === "message_end" && x.message.role === "assistant");
      expect(ends.map((x) => [x.message.stopReason, x.message.content[0].text, x.message.errorMessage])).toEqual([
        ["length", "sixty-four tokens of an answer", undefined],
      ]);
      expect(recs.find((x) => x.type === "agent_end")!.willRetry).toBe(false);
      expect(recs.at(-1)).toMatchObject({ type: "agent_settled", aborted: false });
      expect(fake.requests.length).toBe(1);
      await fake.stop();
    });

    test.concurrent(`${model}, print mode: the text on stdout, the truncation on stderr, exit 1 as the reference`, async () => {
      const { fake, dirs } = setup();
      fake.enqueue(cut("sixty-four tokens of an answer", { input: 1500, output: 64 }));
      const r = await runPion(["-p", "--model", model, "explain the build"], dirs);
      expect(r.stdout).toBe("sixty-four tokens of an answer\n");
      expect(r.stderr).not.toContain("overflow");
      expect(r.stderr).toContain("truncated: the model reached its output token limit");
      expect(r.code).toBe(1);
      expect(fake.requests.length).toBe(1);
      await fake.stop();
    });
  }
});

describe("a reply cut off below the output limit", () => {
  test.concurrent("nothing to compact: the reply stands in the context and the run ends normally", async () => {
    const { fake, dirs } = setup();
    fake.enqueue(cut("cut at 64", { input: 1500, output: 64 }), say("second answer"));
    const r = await runPion(["--mode", "json", "--model", "fake/fake-model", "first prompt", "second prompt"], dirs);
    expect(r.stderr).not.toContain("overflow");
    expect(r.code).toBe(0);
    const recs = lines(r.stdout);
    expect(recs.filter((x) => RECOVERY_EVENTS.includes(x.type))).toEqual([]);
    expect(recs.filter((x) => x.type === "agent_end").map((x) => x.willRetry)).toEqual([false, false]);
    expect(fake.requests.length).toBe(2);
    // the truncated reply is still part of the conversation the second prompt sends
    const sent = JSON.stringify((fake.requests[1]!.body as { messages: unknown[] }).messages);
    expect(sent).toContain("cut at 64");
    await fake.stop();
  });

  test.concurrent("something to compact: compacted and retried once; a second cut reply ends the run without an error", async () => {
    // keepRecentTokens 4: the second prompt (4 tokens) is kept, the first turn is summarized
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000, keepRecentTokens: 4 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    const truncated = cut("cut short", { input: 300, output: 5 });
    fake.enqueue(truncated, say("SUMMARY"), truncated);
    const recs = await prompt(p, "second prompt");
    const ends = recs.filter((x) => x.type === "compaction_end");
    expect(ends.map((e) => [e.reason, e.willRetry, e.errorMessage])).toEqual([
      ["overflow", true, undefined],
      ["overflow", false, "Truncated response recovery failed after one compact-and-retry attempt."],
    ]);
    expect(ends[0]!.result.summary).toContain("SUMMARY");
    // the retried request has the summary, the second prompt, and not the cut reply
    const retried = JSON.stringify((fake.requests[3]!.body as { messages: unknown[] }).messages);
    expect(retried).toContain("SUMMARY");
    expect(retried).toContain("second prompt");
    expect(retried).not.toContain("cut short");
    const result = recs.at(-1)!;
    expect(result).toMatchObject({ type: "prompt_result", stopReason: "length", aborted: false });
    expect(result.errorMessage).toBeUndefined();
    expect(fake.requests.length).toBe(4);
    await p.close();
    await fake.stop();
  });
});

describe("a request that overflowed still recovers by compacting", () => {
  test.concurrent("no output after a prompt that filled the window: compacted with reason overflow, retried, exit 0", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    fake.enqueue(cut("", { input: 3990, output: 0 }), say("SUMMARY"), say("answer after compacting"));
    const recs = await prompt(p, "second prompt");
    const types = recs.map((x) => x.type);
    expect(recs.find((x) => x.type === "agent_end")!.willRetry).toBe(true);
    expect(recs.find((x) => x.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "overflow" });
    expect(recs.find((x) => x.type === "compaction_end")).toMatchObject({ reason: "overflow", aborted: false, willRetry: true });
    expect(types.filter((t) => t === "agent_start").length).toBe(2);
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop", aborted: false });
    expect((await p.request({ type: "get_last_assistant_text" })).data.text).toBe("answer after compacting");
    expect(fake.requests.length).toBe(4);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a completed reply whose prompt exceeded the window (silent overflow): compacted with reason overflow, the reply kept, not retried", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000, keepRecentTokens: 4 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    fake.enqueue({ blocks: [{ type: "text", text: "answer over the window" }], usage: { input: 4100, output: 5 } }, say("SUMMARY"), say("TURN PREFIX"));
    const recs = await prompt(p, "second prompt");
    expect(recs.find((x) => x.type === "agent_end")!.willRetry).toBe(false);
    expect(recs.find((x) => x.type === "compaction_start")).toEqual({ type: "compaction_start", reason: "overflow" });
    const end = recs.find((x) => x.type === "compaction_end")!;
    expect(end).toMatchObject({ reason: "overflow", aborted: false, willRetry: false });
    expect(end.errorMessage).toBeUndefined();
    expect(end.result.summary).toContain("SUMMARY");
    expect(recs.filter((x) => x.type === "agent_start").length).toBe(1);
    expect(recs.some((x) => x.type === "entry_appended" && x.entry.type === "context_edit")).toBe(false);
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop", aborted: false });
    expect((await p.request({ type: "get_last_assistant_text" })).data.text).toBe("answer over the window");
    // the reply, then the summaries of the history and of the split turn's first part
    expect(fake.requests.length).toBe(4);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a reply that completes after a compact-and-retry earns the run another one: a later overflow is compacted and retried again", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000, keepRecentTokens: 10 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "small/tiny"] });
    fake.enqueue(say("first answer"));
    await prompt(p, "first prompt");
    const overflow: FakeReply = { kind: "http_error", status: 400, message: "prompt is too long: 5000 tokens > 4000 maximum" };
    fake.enqueue(
      overflow,
      say("SUMMARY ONE"),
      { blocks: [{ type: "toolCall", id: "t1", name: "ls", arguments: {} }] },
      overflow,
      say("SUMMARY TWO"),
      say("answer after two compactions"),
    );
    const recs = await prompt(p, "second prompt");
    const ends = recs.filter((x) => x.type === "compaction_end");
    expect(ends.map((x) => [x.reason, x.willRetry, x.errorMessage])).toEqual([
      ["overflow", true, undefined],
      ["overflow", true, undefined],
    ]);
    expect(recs.at(-1)).toMatchObject({ type: "prompt_result", stopReason: "stop", aborted: false });
    expect((await p.request({ type: "get_last_assistant_text" })).data.text).toBe("answer after two compactions");
    await p.close();
    await fake.stop();
  });

  test.concurrent("the provider's context-length error in json mode (llama.cpp's wording): compacted, retried, exit 0", async () => {
    const { fake, dirs } = setup({ compaction: { reserveTokens: 1000, keepRecentTokens: 10 } });
    fake.enqueue(
      say("first answer"),
      { kind: "http_error", status: 400, message: "the request exceeds the available context size, try increasing it" },
      say("SUMMARY"),
      say("answer after compacting"),
    );
    const r = await runPion(["--mode", "json", "--model", "small/tiny", "first prompt", "second prompt"], dirs);
    expect(r.code).toBe(0);
    const recs = lines(r.stdout);
    expect(recs.filter((x) => x.type === "compaction_end").map((x) => [x.reason, x.willRetry, x.errorMessage])).toEqual([["overflow", true, undefined]]);
    const last = recs.findLast((x) => x.type === "message_end" && x.message.role === "assistant")!;
    expect(last.message.content[0].text).toBe("answer after compacting");
    expect(fake.requests.length).toBe(4);
    await fake.stop();
  });
});
