import { describe, expect, test } from "bun:test";
import { limitReached, mergeLimits, parseLimit } from "../../../src/session/limits.ts";
import { RunState } from "../../../src/session/run-state.ts";
import { assistantMessage } from "./branch.ts";

describe("run limits", () => {
  test("limitReached names the limit and the figure once a call count or cost reaches it", () => {
    expect(limitReached({}, 100, 100)).toBeUndefined();
    expect(limitReached({ maxTurns: 3 }, 2, 0)).toBeUndefined();
    expect(limitReached({ maxTurns: 3 }, 3, 0)).toBe("Run limit reached: max turns 3 (3 model calls made)");
    expect(limitReached({ maxTurns: 1 }, 1, 0)).toBe("Run limit reached: max turns 1 (1 model call made)");
    expect(limitReached({ maxCostUsd: 0.5 }, 9, 0.49)).toBeUndefined();
    expect(limitReached({ maxCostUsd: 0.5 }, 9, 0.6000000001)).toBe("Run limit reached: max cost $0.5 (spent $0.6)");
    expect(limitReached({ maxCostUsd: 0.00001 }, 1, 0.0000123)).toBe("Run limit reached: max cost $0.00001 (spent $0.0000123)");
  });

  test("mergeLimits: the run's values win field by field", () => {
    expect(mergeLimits({ maxTurns: 5, maxCostUsd: 1 }, { maxTurns: 2 })).toEqual({ maxTurns: 2, maxCostUsd: 1 });
    expect(mergeLimits({}, undefined)).toEqual({});
    expect(mergeLimits({ maxCostUsd: 1 }, { maxTurns: undefined, maxCostUsd: 2 })).toEqual({ maxCostUsd: 2 });
  });

  test("parseLimit accepts whole turns and positive dollars, with an optional $", () => {
    expect(parseLimit("maxTurns", "12")).toBe(12);
    expect(parseLimit("maxCostUsd", "$0.25")).toBe(0.25);
    expect(parseLimit("maxCostUsd", " 3 ")).toBe(3);
    for (const bad of ["0", "-2", "1.5", "x", ""]) expect(() => parseLimit("maxTurns", bad)).toThrow("--max-turns");
    for (const bad of ["0", "-1", "abc", "Infinity"]) expect(() => parseLimit("maxCostUsd", bad)).toThrow("--max-cost");
  });
});

describe("RunState", () => {
  const policy = { autoRetry: true, autoCompaction: true, maxRetries: 2 };
  const failed = (errorMessage: string) => assistantMessage([], { stopReason: "error", errorMessage });

  test("decide: transient errors retry, overflows recover once, both stop at a limit", () => {
    const run = new RunState([], {});
    expect(run.decide(failed("529 overloaded"), "e1", policy)).toBe(true);
    expect(run.retry).toMatchObject({ pending: true, lastError: "529 overloaded", failedEntryId: "e1" });
    expect(run.decide(failed("400 prompt is too long"), "e2", policy)).toBe(true);
    expect(run.overflow.pending).toBe("overflow");
    expect(run.retry.pending).toBe(false);
    run.overflow.tried = true;
    expect(run.decide(failed("400 prompt is too long"), "e3", policy)).toBe(false);
    expect(run.decide(assistantMessage([{ type: "text", text: "ok" }]), "e4", policy)).toBe(false);

    const limited = new RunState([], { maxTurns: 1 });
    limited.calls = 1;
    expect(limited.decide(failed("529 overloaded"), "e1", policy)).toBe(false);
    expect(limited.outcome(false, undefined, failed("529 overloaded"))).toEqual({
      stopReason: "limit",
      aborted: false,
      errorMessage: "Run limit reached: max turns 1 (1 model call made)",
    });
  });

  test("decide: a length stop at the output limit ends the run; below it, it is retried once when compacting can help", () => {
    const model = { contextWindow: 4000, maxTokens: 64 };
    const cut = (output: number) => assistantMessage([], { stopReason: "length", usage: { ...assistantMessage([]).usage, input: 1500, output } });
    const run = new RunState([], {});
    expect(run.decide(cut(64), "e1", { ...policy, model, canCompact: () => true })).toBe(false);
    expect(run.overflow.pending).toBeUndefined();
    expect(run.decide(cut(10), "e2", { ...policy, model, canCompact: () => false })).toBe(false);
    expect(run.overflow.pending).toBeUndefined();
    expect(run.decide(cut(10), "e3", { ...policy, model, canCompact: () => true })).toBe(true);
    expect(run.overflow.pending).toBe("truncated");
    run.overflow.tried = true;
    expect(run.decide(cut(10), "e4", { ...policy, model, canCompact: () => true })).toBe(false);
    expect(run.overflow.pending).toBe("truncated");
  });

  test("outcome: abort, then pion's failure, then a limit, then the last message", () => {
    const run = new RunState([], { maxTurns: 1 });
    run.calls = 1;
    expect(run.atLimit()).toBe(true);
    expect(run.outcome(true, "boom", undefined)).toEqual({ stopReason: "aborted", aborted: true });
    expect(run.outcome(false, "boom", undefined)).toEqual({ stopReason: "error", aborted: false, errorMessage: "boom" });
    expect(new RunState([], {}).outcome(false, undefined, failed("500 x"))).toEqual({ stopReason: "error", aborted: false, errorMessage: "500 x" });
    expect(new RunState([], {}).outcome(false, undefined, undefined)).toEqual({ stopReason: "stop", aborted: false });
  });
});
