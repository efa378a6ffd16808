import { describe, expect, test } from "bun:test";
import { planCompaction } from "../../../src/session/compaction.ts";
import { buildContext } from "../../../src/session/context.ts";
import { findCutPoint } from "../../../src/session/cut-point.ts";
import { assistantMessage, Branch, keptTokens, splitsToolPair, threeTurns } from "./branch.ts";

/** One prompt and four long tool results, as the session writes it (metadata entries first). */
function oneTurn(): Branch {
  const b = new Branch();
  b.modelChange();
  b.modelChange();
  b.user("fix the build");
  for (let i = 1; i <= 4; i++) {
    b.call(`c${i}`, "read", { path: `src/f${i}.ts` });
    b.result(`c${i}`, String(i).repeat(4000));
  }
  return b;
}

describe("findCutPoint", () => {
  test("never separates a tool call from its result, and the kept part starts at a cut point, for every budget", () => {
    for (const path of [threeTurns().entries, oneTurn().entries]) {
      const total = keptTokens(path, 0);
      for (let keep = 0; keep <= total + 10; keep += 7) {
        const cut = findCutPoint(path, keep);
        if (!cut) continue;
        expect(splitsToolPair(path, cut.firstKeptIndex)).toBe(false);
        expect(cut.firstKeptIndex).toBeGreaterThan(cut.summarizeFrom);
        const first = path[cut.firstKeptIndex]!;
        expect(first.type === "message" && first.message.role !== "toolResult").toBe(true);
        if (cut.splitTurn) expect(cut.turnStartIndex).toBeLessThan(cut.firstKeptIndex);
        else expect(cut.turnStartIndex).toBe(-1);
      }
    }
  });

  test("one-turn session: the cut falls inside the turn and the turn's first part is a split-turn prefix", () => {
    const b = oneTurn();
    const lastTwo = keptTokens(b.entries, b.index("e9"));
    const cut = findCutPoint(b.entries, lastTwo);
    expect(cut).toEqual({ firstKeptIndex: b.index("e9"), summarizeFrom: 0, splitTurn: true, turnStartIndex: b.index("e2") });
    const plan = planCompaction(b.entries, lastTwo)!;
    expect(plan.messages).toEqual([]);
    expect(plan.turnPrefix.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant", "toolResult", "assistant", "toolResult"]);
    expect(plan.keptTokens).toBe(lastTwo);
    expect(plan.fileOps.readFiles).toEqual(["src/f1.ts", "src/f2.ts", "src/f3.ts"]);
  });

  test("a budget reached inside a tool result keeps the nearest call after it", () => {
    const b = oneTurn();
    // the budget is reached in the third result: the cut moves forward to the fourth call
    const cut = findCutPoint(b.entries, keptTokens(b.entries, b.index("e9")) + 10);
    expect(cut?.firstKeptIndex).toBe(b.index("e9"));
  });

  test("tool-heavy tail: results that alone exceed the budget are kept with the call that produced them", () => {
    const b = new Branch();
    b.user("first");
    b.say("ok");
    b.user("read everything");
    b.call("c1", "read", { path: "a" });
    b.result("c1", "x".repeat(4000));
    const cut = findCutPoint(b.entries, 100);
    expect(cut).toEqual({ firstKeptIndex: b.index("e3"), summarizeFrom: 0, splitTurn: true, turnStartIndex: b.index("e2") });
  });

  test("two turns: a budget reached at the start of the last turn cuts there without splitting", () => {
    const b = threeTurns();
    const third = b.index("e10");
    expect(findCutPoint(b.entries, keptTokens(b.entries, third))).toEqual({ firstKeptIndex: third, summarizeFrom: 0, splitTurn: false, turnStartIndex: -1 });
    const plan = planCompaction(b.entries, keptTokens(b.entries, third))!;
    expect(plan.turnPrefix).toEqual([]);
    expect(plan.messages).toEqual(buildContext(b.entries).slice(0, third));
  });

  test("two turns: a budget reaching into the previous turn splits it at its last assistant message", () => {
    const b = threeTurns();
    const cut = findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")) + 1);
    expect(cut).toEqual({ firstKeptIndex: b.index("e9"), summarizeFrom: 0, splitTurn: true, turnStartIndex: b.index("e4") });
    const plan = planCompaction(b.entries, keptTokens(b.entries, b.index("e10")) + 1)!;
    expect(plan.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(plan.turnPrefix.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant", "toolResult"]);
  });

  test("a tiny budget with two user turns still finds a cut", () => {
    const b = new Branch();
    b.user("hi");
    b.say("hello");
    b.user("again");
    b.say("yes");
    expect(findCutPoint(b.entries, 1)).toEqual({ firstKeptIndex: 3, summarizeFrom: 0, splitTurn: true, turnStartIndex: 2 });
  });

  test("undefined when the session fits the budget or has nothing before the cut", () => {
    const b = new Branch();
    b.user("hi");
    b.say("hello");
    expect(findCutPoint(b.entries, 20_000)).toBeUndefined();
    expect(findCutPoint([], 1)).toBeUndefined();
    expect(findCutPoint(b.entries.slice(0, 1), 0)).toBeUndefined();
  });

  test("fallbackToNewest: a session under the budget is cut at its newest cut point; a lone prompt still has nothing", () => {
    const b = new Branch();
    b.modelChange();
    b.user("hi");
    b.say("hello");
    b.user("a second prompt that overflows");
    expect(findCutPoint(b.entries, 20_000)).toBeUndefined();
    expect(findCutPoint(b.entries, 20_000, { fallbackToNewest: true })).toEqual({ firstKeptIndex: 3, summarizeFrom: 0, splitTurn: false, turnStartIndex: -1 });
    const lone = new Branch();
    lone.modelChange();
    lone.user("hi");
    expect(findCutPoint(lone.entries, 20_000, { fallbackToNewest: true })).toBeUndefined();
  });

  test("a user message between a tool call and its result neither is a cut point nor starts the split turn", () => {
    const b = new Branch();
    b.user("first");
    b.say("ok");
    b.user("second");
    b.call("c1", "bash", { command: "sleep 1" });
    b.user("steer while the tool runs");
    b.result("c1", "done", "bash");
    b.say("finished");
    expect(findCutPoint(b.entries, 1)).toEqual({ firstKeptIndex: 6, summarizeFrom: 0, splitTurn: true, turnStartIndex: 2 });
    for (let keep = 0; keep < 200; keep++) expect([4, 5]).not.toContain(findCutPoint(b.entries, keep)?.firstKeptIndex);
  });

  test("a repeated compaction starts at the previous firstKeptEntryId", () => {
    const b = threeTurns();
    b.compaction("old summary", "e4", { readFiles: ["old.ts"], modifiedFiles: [] });
    b.user("fourth question");
    b.say("answer four");
    b.user("fifth question");
    b.say("answer five");
    const last = keptTokens(b.entries, b.index("e17"));
    expect(findCutPoint(b.entries, last)).toEqual({ firstKeptIndex: b.index("e17"), summarizeFrom: b.index("e4"), splitTurn: false, turnStartIndex: -1 });

    const plan = planCompaction(b.entries, last)!;
    expect(plan.firstKeptEntryId).toBe("e17");
    expect(plan.previousSummary).toBe("old summary");
    expect(plan.messages).toEqual(buildContext(b.entries).slice(1, -2));
    expect(plan.messages.some((m) => m.role === "compactionSummary")).toBe(false);
    expect(plan.fileOps).toEqual({ readFiles: ["old.ts"], modifiedFiles: ["src/b.ts"] });
  });

  test("a cut can land between the previous kept boundary and the previous compaction", () => {
    const b = threeTurns();
    b.compaction("old summary", "e4");
    b.say("more");
    const cut = findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")));
    expect(cut).toEqual({ firstKeptIndex: b.index("e10"), summarizeFrom: b.index("e4"), splitTurn: false, turnStartIndex: -1 });
  });

  test("a compaction that kept nothing makes the next one start after it", () => {
    const b = new Branch();
    b.user("one");
    b.say("two");
    const c = b.compaction("summary", "e2");
    expect(c).toBe("e2");
    b.user("three");
    b.say("four");
    b.user("five");
    b.say("six");
    expect(findCutPoint(b.entries, keptTokens(b.entries, b.index("e5")))).toEqual({ firstKeptIndex: b.index("e5"), summarizeFrom: b.index("e3"), splitTurn: false, turnStartIndex: -1 });
  });

  test("nothing new to summarize after a compaction is undefined", () => {
    const b = threeTurns();
    b.compaction("old summary", "e10");
    // keeping all of the kept turn leaves nothing between the old boundary and the cut
    expect(findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")))).toBeUndefined();
    b.say("a little more");
    expect(findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")))).toBeUndefined();
  });

  test("the plan applies context edits: an omitted attempt is neither summarized nor a cut point", () => {
    const b = new Branch();
    b.user("one");
    const failed = b.message(assistantMessage([], { stopReason: "error", errorMessage: "500 boom" }));
    b.edit(failed, null);
    b.say("answer");
    b.user("two");
    b.say("done");
    const plan = planCompaction(b.entries, keptTokens(b.entries, b.index("e4")))!;
    expect(plan.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(plan.firstKeptEntryId).toBe("e4");
    const overflowed = new Branch();
    overflowed.user("one");
    overflowed.say("answer");
    overflowed.user("two");
    const attempt = overflowed.message(assistantMessage([], { stopReason: "error", errorMessage: "prompt is too long" }));
    overflowed.edit(attempt, null);
    expect(findCutPoint(overflowed.entries, 20_000, { fallbackToNewest: true })?.firstKeptIndex).toBe(2);
  });
});
