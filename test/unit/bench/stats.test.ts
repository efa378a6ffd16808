import { describe, expect, test } from "bun:test";
import { atMostRef, MIN_RUNS, ratioInterval, stat } from "../../../bench/stats.ts";

const runs = (center: number, spread: number, n = 20) => Array.from({ length: n }, (_, i) => center + spread * (((i * 7) % n) / (n - 1) - 0.5));

describe("stat", () => {
  test("median of an even and an odd count; non-finite figures are left out", () => {
    expect(stat([3, 1, 2])).toEqual({ median: 2, min: 1, max: 3, n: 3 });
    expect(stat([4, 1, 3, 2, Number.NaN])).toEqual({ median: 2.5, min: 1, max: 4, n: 4 });
    expect(stat([Number.NaN])).toBeUndefined();
  });
});

describe("ratioInterval", () => {
  test("holds the ratio of the medians, and is the same for the same figures", () => {
    const a = runs(6, 2);
    const b = runs(5, 2);
    const ci = ratioInterval(a, b);
    expect(ci.lo).toBeLessThanOrEqual(6 / 5);
    expect(ci.hi).toBeGreaterThanOrEqual(6 / 5);
    expect(ratioInterval(a, b)).toEqual(ci);
  });

  test("narrows as the spread shrinks", () => {
    const wide = ratioInterval(runs(6, 4), runs(5, 4));
    const narrow = ratioInterval(runs(6, 0.4), runs(5, 0.4));
    expect(narrow.hi - narrow.lo).toBeLessThan(wide.hi - wide.lo);
  });
});

describe("atMostRef", () => {
  test("a median at or below the reference's is met, however few the runs", () => {
    expect(atMostRef([5], [6])).toBe("met");
    expect(atMostRef([5, 5], [5, 5])).toBe("met");
  });

  test("above it by less than the spread of the runs is within noise", () => {
    expect(atMostRef(runs(5.2, 2), runs(5, 2))).toStartWith("within noise (95% CI ");
  });

  test("above it by more than the spread is not met", () => {
    expect(atMostRef(runs(6, 0.4), runs(5, 0.4))).toStartWith("**not met** (95% CI ");
  });

  test("above it with too few runs to tell is not met", () => {
    const few = MIN_RUNS - 1;
    expect(atMostRef(runs(5.2, 2, few), runs(5, 2, few))).toBe(`**not met** (${few} runs: too few to tell from noise)`);
  });

  test("no figures on a side: nothing to judge", () => {
    expect(atMostRef([], [1])).toBe("");
    expect(atMostRef([Number.NaN], [1])).toBe("");
  });
});
