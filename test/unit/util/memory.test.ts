import { afterAll, afterEach, expect, spyOn, test } from "bun:test";
import { PeriodicCollector } from "../../../src/util/memory.ts";

const gc = spyOn(Bun, "gc");
afterEach(() => gc.mockClear());
afterAll(() => gc.mockRestore());

test("a full collection on every n-th tick, and none in between", () => {
  const c = new PeriodicCollector(3);
  const calls: number[] = [];
  for (let i = 1; i <= 10; i++) {
    c.tick();
    calls.push(gc.mock.calls.length);
  }
  expect(calls).toEqual([0, 0, 1, 1, 1, 2, 2, 2, 3, 3]);
  expect(gc.mock.calls.every((args) => args[0] === true)).toBe(true);
});
