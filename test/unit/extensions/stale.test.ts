import { describe, expect, test } from "bun:test";
import { guardStale, STALE_MESSAGE } from "../../../src/extensions/stale.ts";

const tag = Symbol("tag");

describe("guardStale", () => {
  const make = () => {
    let stale = false;
    const target = {
      count: 1,
      get live() {
        return this.count + 1;
      },
      add(n: number) {
        this.count += n;
        return this.count;
      },
      [tag]: () => "symbol member",
    };
    return { guarded: guardStale(target, () => stale), target, replace: () => (stale = true) };
  };

  test("until replaced, members answer as the target's (getters, methods with their this, values, symbol keys)", () => {
    const { guarded, target } = make();
    expect(guarded.add(2)).toBe(3);
    expect(target.count).toBe(3);
    expect(guarded.live).toBe(4);
    expect(guarded.count).toBe(3);
    expect(guarded[tag]()).toBe("symbol member");
  });

  test("once replaced, reading a member or calling one taken earlier throws", () => {
    const { guarded, replace } = make();
    const add = guarded.add;
    replace();
    expect(() => guarded.live).toThrow(STALE_MESSAGE);
    expect(() => guarded.count).toThrow(STALE_MESSAGE);
    expect(() => add(1)).toThrow(STALE_MESSAGE);
    expect(() => guarded[tag]()).toThrow(STALE_MESSAGE);
  });
});
