import { describe, expect, test } from "bun:test";
import { emptyUsage } from "../../../src/providers/event-stream.ts";
import type { Model, TextContent } from "../../../src/providers/types.ts";
import { NO_EARLIER_HISTORY, SPLIT_TURN_MARKER } from "../../../src/session/compaction-prompt.ts";
import { compact, keepBudget, type CompactionEvent, type CompactionHost, type CompactionReason } from "../../../src/session/compactor.ts";
import { buildContext } from "../../../src/session/context.ts";
import type { Entry } from "../../../src/store/entries.ts";
import { PionError } from "../../../src/util/errors.ts";
import { Branch, failure, keptTokens, model, scripted, text, threeTurns } from "./branch.ts";

function host(b: Branch, stream: ReturnType<typeof scripted>["stream"], opts: { keep: number; model?: Model; commit?: () => void }) {
  const events: CompactionEvent[] = [];
  const committed: Entry[] = [];
  let usage = emptyUsage();
  const h: CompactionHost = {
    model: opts.model ?? model,
    auth: { apiKey: "k" },
    stream,
    branch: () => b.entries,
    messages: () => buildContext(b.entries),
    commit: (entry) => {
      opts.commit?.();
      committed.push(entry as unknown as Entry);
    },
    emit: (e) => void events.push(e),
    addUsage: (u) => {
      usage = { ...usage, input: usage.input + u.input };
    },
    settings: { keepRecentTokens: opts.keep, retry: { enabled: false, maxRetries: 0, baseDelayMs: 1 } },
  };
  return { h, events, committed, usage: () => usage };
}

const promptText = (req: { messages: { content: unknown }[] }) => ((req.messages[0]!.content as TextContent[])[0]!).text;

/** One prompt, two tool calls with long results, as the session writes it. */
function oneTurn(): Branch {
  const b = new Branch();
  b.modelChange();
  b.user("fix the build");
  b.call("c1", "read", { path: "a.ts" });
  b.result("c1", "a".repeat(4000));
  b.call("c2", "read", { path: "b.ts" });
  b.result("c2", "b".repeat(4000));
  return b;
}

describe("compact", () => {
  test("a one-turn session: only the turn's first part is summarized, after the no-history line and the marker", async () => {
    const b = oneTurn();
    const llm = scripted(text("PREFIX"));
    const { h, events, committed } = host(b, llm.stream, { keep: keptTokens(b.entries, b.index("e4")) });
    const result = await compact(h, "manual", new AbortController().signal);
    expect(llm.requests).toHaveLength(1);
    const asked = promptText(llm.requests[0]!);
    expect(asked).toContain("[User]: fix the build");
    expect(asked).toContain("first part of a turn");
    expect(asked).not.toContain("bbbb");
    expect(result.summary).toBe(`${NO_EARLIER_HISTORY}\n\n---\n\n${SPLIT_TURN_MARKER}\n\nPREFIX\n\n<read-files>\na.ts\n</read-files>`);
    expect(result.firstKeptEntryId).toBe("e4");
    expect(committed).toMatchObject([{ type: "compaction", summary: result.summary, firstKeptEntryId: "e4" }]);
    expect(events.map((e) => e.type)).toEqual(["compaction_start", "compaction_end"]);
  });

  test("a split turn after earlier history: two summaries joined by the marker, usage of both", async () => {
    const b = threeTurns();
    const llm = scripted(text("HISTORY", { ...emptyUsage(), input: 100, totalTokens: 100 }), text("PREFIX", { ...emptyUsage(), input: 50, totalTokens: 50 }));
    const { h, usage } = host(b, llm.stream, { keep: keptTokens(b.entries, b.index("e10")) + 1 });
    const result = await compact(h, "manual", new AbortController().signal, "mind the tests");
    expect(llm.requests).toHaveLength(2);
    expect(promptText(llm.requests[0]!)).toContain("[User]: first question");
    expect(promptText(llm.requests[0]!)).not.toContain("second question");
    expect(promptText(llm.requests[1]!)).toContain("[User]: second question");
    for (const req of llm.requests) expect(promptText(req)).toContain("mind the tests");
    expect(result.summary.startsWith(`HISTORY\n\n---\n\n${SPLIT_TURN_MARKER}\n\nPREFIX`)).toBe(true);
    expect(result.usage.input).toBe(150);
    expect(usage().input).toBe(150);
  });

  test("threshold with nothing to compact throws nothing_to_compact and emits nothing", async () => {
    const b = new Branch();
    b.user("hi");
    b.say("hello");
    const { h, events } = host(b, scripted().stream, { keep: 20_000 });
    const err = await compact(h, "threshold", new AbortController().signal).catch((e) => e);
    expect(err).toBeInstanceOf(PionError);
    expect((err as PionError).code).toBe("nothing_to_compact");
    expect(events).toEqual([]);
  });

  test("overflow: a kept part larger than the window gives up before asking for a summary", async () => {
    const b = new Branch();
    b.user("first");
    b.say("answer");
    b.user("x".repeat(20_000));
    const llm = scripted();
    const tiny: Model = { ...model, provider: "small", id: "tiny", contextWindow: 4000 };
    const { h, events } = host(b, llm.stream, { keep: 20_000, model: tiny });
    const err = (await compact(h, "overflow", new AbortController().signal).catch((e) => e)) as PionError;
    expect(err.code).toBe("context_overflow");
    expect(err.message).toMatch(/^the part of the context that compaction would keep alone \(about 500\d tokens, estimated\) does not fit the context window of small\/tiny \(4000 tokens\)$/);
    expect(llm.requests).toHaveLength(0);
    expect(events.at(-1)).toEqual({ type: "compaction_end", reason: "overflow", aborted: false, willRetry: false, errorMessage: `Context overflow recovery failed: ${err.message}` });
  });

  test("a store error while committing is reported in compaction_end, not swallowed", async () => {
    const b = threeTurns();
    const { h, events, committed } = host(b, scripted(text("S")).stream, {
      keep: keptTokens(b.entries, b.index("e10")),
      commit: () => {
        throw new Error("database is locked");
      },
    });
    const err = (await compact(h, "threshold", new AbortController().signal).catch((e) => e)) as PionError;
    expect(err.code).toBe("compaction_failed");
    expect(events.at(-1)).toMatchObject({ type: "compaction_end", reason: "threshold", errorMessage: "Compaction failed: database is locked" });
    expect(committed).toEqual([]);
  });

  test("a provider error on the summary is reported in compaction_end", async () => {
    const b = threeTurns();
    const { h, events } = host(b, scripted(failure("400 bad request")).stream, { keep: keptTokens(b.entries, b.index("e10")) });
    await expect(compact(h, "threshold", new AbortController().signal)).rejects.toThrow("400 bad request");
    expect(events.at(-1)).toMatchObject({ type: "compaction_end", errorMessage: "Compaction failed: 400 bad request" });
  });
});

test("keepBudget: manual keeps keepRecentTokens; automatic ones at most a quarter of the window", () => {
  const cases: [CompactionReason, number, number, number][] = [
    ["manual", 20_000, 4000, 20_000],
    ["threshold", 20_000, 4000, 1000],
    ["overflow", 20_000, 200_000, 20_000],
    ["overflow", 500, 0, 500],
  ];
  for (const [reason, keep, window, expected] of cases) expect(keepBudget(reason, keep, window)).toBe(expected);
});
