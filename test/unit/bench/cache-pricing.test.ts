import { describe, expect, test } from "bun:test";
import { bestBound, blocksOf, priceRequests, type Block } from "../../../bench/cache-pricing.ts";

/** A request of blocks given as [name, tokens, breakpoint?]: equal names, equal blocks. */
const req = (...blocks: [string, number, boolean?][]): Block[] => blocks.map(([key, tokens, bp]) => ({ key, tokens, breakpoint: bp ?? false }));

describe("priceRequests", () => {
  test("a request that extends the previous one reads all of it and writes the rest", () => {
    const r1 = req(["a", 4], ["b", 4, true]);
    const r2 = req(["a", 4], ["b", 4], ["c", 8, true]);
    const p = priceRequests([r1, r2]);
    expect(p.requests).toEqual([
      { uncached: 8, read: 0, written: 8, plain: 0, billed: 10 },
      { uncached: 16, read: 8, written: 8, plain: 0, billed: 0.8 + 10 },
    ]);
    expect(p.uncached).toBe(24);
    expect(p.billed).toBeCloseTo(20.8, 10);
  });

  test("after the last breakpoint is plain input; no breakpoint at all is all plain", () => {
    const p = priceRequests([req(["a", 10, true], ["b", 6]), req(["a", 10], ["x", 2])]);
    expect(p.requests[0]).toEqual({ uncached: 16, read: 0, written: 10, plain: 6, billed: 12.5 + 6 });
    // no breakpoint of its own: it cannot read the entry at "a" either
    expect(p.requests[1]).toEqual({ uncached: 12, read: 0, written: 0, plain: 12, billed: 12 });
  });

  test("a breakpoint looks back 20 positions, its own included; another breakpoint nearer the entry reads it", () => {
    const head: [string, number][] = [["a", 100]];
    const step = (n: number) => Array.from({ length: n }, (_, i) => [`s${i}`, 1] as [string, number]);
    const first = req(["a", 100, true]);
    // the entry at position 0 is 19 positions before a breakpoint at 19: found
    expect(priceRequests([first, req(...head, ...step(18), ["end", 1, true])]).requests[1]!.read).toBe(100);
    // ... and 20 before one at 20: not found, everything is written again
    const far = priceRequests([first, req(...head, ...step(19), ["end", 1, true])]).requests[1]!;
    expect(far).toMatchObject({ read: 0, written: 120 });
    // a second breakpoint on the old end reads it exactly
    const anchored = priceRequests([first, req(["a", 100, true], ...step(19), ["end", 1, true])]).requests[1]!;
    expect(anchored).toMatchObject({ read: 100, written: 20, billed: 10 + 25 });
  });

  test("the longest prefix found over all breakpoints is read; a different earlier block ends the match", () => {
    const p = priceRequests([
      req(["t", 10, true], ["m1", 5, true]),
      req(["t", 10, true], ["m1", 5], ["m2", 5, true]),
      req(["t", 10, true], ["other", 5], ["m2", 5, true]),
    ]);
    expect(p.requests[1]).toMatchObject({ read: 15, written: 5 });
    // "m2" after "other" is another prefix: only the tools' entry matches
    expect(p.requests[2]).toMatchObject({ read: 10, written: 10 });
  });
});

describe("bestBound", () => {
  test("a position held by one request costs 1×, by m requests 1.25× + 0.1× for each later one", () => {
    const r1 = req(["a", 4], ["b", 4, true]);
    const r2 = req(["a", 4], ["b", 4], ["c", 8, true]);
    // a and b: held by two requests, 4 × 1.35 each; c: held by one, 8 × 1
    expect(bestBound([r1, r2])).toBeCloseTo(4 * 1.35 * 2 + 8, 10);
    // three requests sharing a: 10 × (1.25 + 0.2); their own tails plain
    expect(bestBound([req(["a", 10]), req(["a", 10], ["x", 1]), req(["a", 10], ["y", 2])])).toBeCloseTo(14.5 + 3, 10);
  });

  test("never above what a placement is billed: here the end-of-request placement is the bound plus the last tail's write premium", () => {
    const reqs = [req(["a", 4], ["b", 4, true]), req(["a", 4], ["b", 4], ["c", 8, true])];
    expect(priceRequests(reqs).billed - bestBound(reqs)).toBeCloseTo(8 * 0.25, 10);
  });
});

describe("blocksOf", () => {
  const body = {
    model: "m",
    tools: [{ name: "read", input_schema: {}, cache_control: { type: "ephemeral" } }],
    system: [{ type: "text", text: "sys", cache_control: { type: "ephemeral" } }],
    messages: [
      { role: "user", content: "hello" },
      { role: "assistant", content: [{ type: "text", text: "hi" }, { type: "tool_use", id: "t", name: "read", input: {} }] },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "x", cache_control: { type: "ephemeral" } }] },
    ],
  };

  test("tools, system, then each message's blocks; ceil(bytes/4) tokens of the JSON without cache_control", () => {
    const blocks = blocksOf(body);
    expect(blocks.map((b) => b.breakpoint)).toEqual([true, true, false, false, false, true]);
    expect(blocks[2]!.tokens).toBe(Math.ceil(JSON.stringify({ type: "text", text: "hello" }).length / 4));
    expect(blocks[5]!.tokens).toBe(Math.ceil(JSON.stringify({ type: "tool_result", tool_use_id: "t", content: "x" }).length / 4));
    expect(blocks[0]!.key).toStartWith("m\ntool:");
  });

  test("a breakpoint does not change a block's identity; a string content is one text block; the message boundary counts", () => {
    const unmarked = JSON.parse(JSON.stringify(body).replaceAll(',"cache_control":{"type":"ephemeral"}', ""));
    unmarked.messages[0].content = [{ type: "text", text: "hello" }];
    expect(blocksOf(unmarked).map((b) => b.key)).toEqual(blocksOf(body).map((b) => b.key));
    const split = { ...body, messages: [{ role: "assistant", content: [{ type: "text", text: "hi" }] }, { role: "assistant", content: [{ type: "tool_use", id: "t", name: "read", input: {} }] }] };
    const joined = { ...body, messages: [body.messages[1]] };
    expect(blocksOf(split).map((b) => b.key)).not.toEqual(blocksOf(joined).map((b) => b.key));
    expect(blocksOf({ ...body, model: "other" })[0]!.key).not.toBe(blocksOf(body)[0]!.key);
  });
});
