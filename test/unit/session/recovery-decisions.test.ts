/**
 * What the session does after a model call (retry, compact and retry, compact and keep the reply,
 * nothing) for one message, against the reference's AgentSession for the same message: it retries
 * when `isRetryableAssistantError` holds and `isContextOverflow(message, window)` does not, and
 * otherwise compacts on `isContextOverflow` or `isRecoverableLength(message, maxTokens)`,
 * retrying unless the reply completed (stopReason "stop").
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { retryDelayMs } from "../../../src/providers/retryable.ts";
import type { AssistantMessage } from "../../../src/providers/types.ts";
import { RunState } from "../../../src/session/run-state.ts";
import { assistantMessage, usage } from "./branch.ts";

const REFERENCE = process.env.PION_REFERENCE_PKG;
const refTest = REFERENCE ? test : test.skip;
type Decision = "retry" | "compact and retry" | "compact" | "none";
const LIMITS = { contextWindow: 4000, maxTokens: 64 };

function pionDecision(message: AssistantMessage, autoCompaction = true): Decision {
  const run = new RunState([], {});
  run.decide(message, "e1", { autoRetry: true, autoCompaction, maxRetries: 3, model: LIMITS, canCompact: () => true });
  if (run.retry.pending) return "retry";
  if (run.overflow.pending === "silent") return "compact";
  return run.overflow.pending ? "compact and retry" : "none";
}

const failed = (errorMessage: string, provider = "anthropic") => assistantMessage([], { stopReason: "error", errorMessage, provider });
const reply = (stopReason: AssistantMessage["stopReason"], input: number, output: number, cacheRead = 0) =>
  assistantMessage([], { stopReason, usage: { ...usage(input, output), cacheRead } });

const ERRORS = [
  "429 Too Many Requests",
  '429 {"error":{"code":"insufficient_quota","message":"You exceeded your current quota"}}',
  "429 Quota exceeded",
  "402 billing: add a payment method",
  "Monthly usage limit reached",
  '429 {"code":"1308","message":"usage limit"}',
  "529 Overloaded",
  "500 Internal server error",
  "503 Service temporarily unavailable",
  "getaddrinfo ENOTFOUND api.example.com",
  "ENOTFOUND",
  "EAI_AGAIN",
  "websocket closed",
  "WebSocket error",
  "Connection error.",
  "fetch failed",
  "socket hang up",
  "Request timed out: no data for 30000 ms",
  "terminated",
  "stream ended without finish_reason",
  "stream ended without response.completed",
  "stream ended without messageStop",
  "stream ended without finishReason",
  "stream ended before message_stop",
  "400 invalid request",
  "401 invalid x-api-key",
  "408 Request Timeout",
  "409 Conflict",
  "400 prompt is too long: 213462 tokens > 200000 maximum",
  "413 request_too_large",
  "Input is too long for requested model.",
  "The input token count (5000) exceeds the maximum number of tokens allowed (4000).",
  "400 Your input exceeds the context window of this model",
  "400 request (3000 tokens) exceeds the available context size (2048 tokens), try increasing it",
  "500 prompt is too long",
  "400 too many tokens in the request",
  "rate limit: too many tokens",
  "github-copilot API error (413): failed to parse request",
  "400 status code (no body)",
];
const REPLIES = [reply("stop", 5000, 5), reply("stop", 1000, 5, 3001), reply("stop", 4000, 5), reply("length", 3960, 0), reply("length", 960, 0, 3000), reply("length", 1500, 10), reply("length", 1500, 64), reply("length", 3900, 64)];

describe("the session's decision after a model call", () => {
  refTest("equals the reference's for the same message", async () => {
    const pkg = join(REFERENCE!, "../pi-ai/dist/utils");
    const overflow = (await import(join(pkg, "overflow.js"))) as Record<string, (...a: any[]) => boolean>;
    const retry = (await import(join(pkg, "retry.js"))) as Record<string, (...a: any[]) => boolean>;
    const reference = (m: AssistantMessage): Decision => {
      if (!overflow.isContextOverflow!(m, LIMITS.contextWindow) && retry.isRetryableAssistantError!(m)) return "retry";
      const overflowed = (m.stopReason === "error" && overflow.isContextOverflow!(m)) || overflow.isContextOverflow!(m, LIMITS.contextWindow);
      if (!overflowed && !overflow.isRecoverableLength!(m, LIMITS.maxTokens)) return "none";
      return m.stopReason === "stop" ? "compact" : "compact and retry";
    };
    const messages = [...ERRORS.flatMap((e) => [failed(e), failed(e, "cerebras")]), ...REPLIES];
    for (const m of messages) expect({ m: m.errorMessage ?? m.usage, decision: pionDecision(m) }).toEqual({ m: m.errorMessage ?? m.usage, decision: reference(m) });
  });

  test("spent quota and billing are never retried; DNS and websocket failures are", () => {
    for (const e of ['429 {"error":{"code":"insufficient_quota"}}', "429 Quota exceeded", "402 billing: add a payment method"]) expect(pionDecision(failed(e))).toBe("none");
    for (const e of ["getaddrinfo ENOTFOUND api.example.com", "EAI_AGAIN", "websocket closed", "stream ended without finish_reason"]) expect(pionDecision(failed(e))).toBe("retry");
  });

  test("an overflow is compacted, never retried as it is, also with auto-compaction off", () => {
    expect(pionDecision(failed("500 prompt is too long"))).toBe("compact and retry");
    expect(pionDecision(failed("500 prompt is too long"), false)).toBe("none");
    expect(pionDecision(reply("stop", 5000, 5))).toBe("compact");
  });

  test("pion's additions: llama.cpp with context shift, and Bedrock throttling as pion words it", () => {
    expect(pionDecision(failed("400 input (3000 tokens) is larger than the max context size (2048 tokens). skipping"))).toBe("compact and retry");
    expect(pionDecision(failed('400 {"error":{"code":400,"type":"exceed_context_size_error","n_ctx":2048}}'))).toBe("compact and retry");
    expect(pionDecision(failed("429 ThrottlingException: Too many tokens, please wait before trying again."))).toBe("retry");
  });

  test("the wait before a retry doubles from the base and stops at a minute (or the setting)", () => {
    expect([1, 2, 3].map((a) => retryDelayMs({ baseDelayMs: 2000 }, a))).toEqual([2000, 4000, 8000]);
    expect(retryDelayMs({ baseDelayMs: 2000 }, 10)).toBe(60_000);
    expect(retryDelayMs({ baseDelayMs: 2000, maxAgentDelayMs: 5000 }, 3)).toBe(5000);
  });
});
