import { describe, expect, test } from "bun:test";
import { retryingFetch } from "../../../src/mcp/retry-fetch.ts";

describe("the HTTP transport's fetch", () => {
  const flaky = (statuses: (number | "error")[]) => {
    const seen: string[] = [];
    const f = (async (_: unknown, init?: RequestInit) => {
      seen.push(String(init?.body));
      const s = statuses.shift() ?? 200;
      if (s === "error") throw new TypeError("fetch failed");
      return new Response("x", { status: s });
    }) as unknown as typeof fetch;
    return { f, seen };
  };
  const list = JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" });
  const call = JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "x" } });

  test("retries transient statuses and network errors twice", async () => {
    const { f, seen } = flaky([503, "error", 200]);
    expect((await retryingFetch(f, [1, 1])("http://x", { method: "POST", body: list })).status).toBe(200);
    expect(seen).toHaveLength(3);
    const gives = flaky([429, 502, 500, 200]);
    expect((await retryingFetch(gives.f, [1, 1])("http://x", { method: "POST", body: list })).status).toBe(500);
    const notTransient = flaky([404]);
    expect((await retryingFetch(notTransient.f, [1, 1])("http://x", { body: list })).status).toBe(404);
    expect(notTransient.seen).toHaveLength(1);
  });

  test("never retries a tool call", async () => {
    const { f, seen } = flaky([503, 200]);
    expect((await retryingFetch(f, [1, 1])("http://x", { method: "POST", body: call })).status).toBe(503);
    expect(seen).toHaveLength(1);
  });
});
