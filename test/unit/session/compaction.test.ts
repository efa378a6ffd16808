import { describe, expect, test } from "bun:test";
import { emptyUsage } from "../../../src/providers/event-stream.ts";
import type { LlmRequest, TextContent, Usage } from "../../../src/providers/types.ts";
import {
  appendFileLists,
  buildSummaryRequest,
  collectFileOps,
  estimateContextTokens,
  isContextOverflow,
  overrunOf,
  serializeForSummary,
  shouldCompact,
  summarize,
  type SummaryRetry,
} from "../../../src/session/compaction.ts";
import { estimateTokens } from "../../../src/session/stats.ts";
import type { AgentMessage } from "../../../src/store/entries.ts";
import { assistantMessage, failure, model, scripted, text, usage } from "./branch.ts";

describe("collectFileOps", () => {
  test("read and modified files, sorted, unique, merged with the previous lists", () => {
    const messages: AgentMessage[] = [
      assistantMessage([
        { type: "toolCall", id: "1", name: "read", arguments: { path: "z.ts" } },
        { type: "toolCall", id: "2", name: "read", arguments: { path: "a.ts" } },
        { type: "toolCall", id: "3", name: "edit", arguments: { path: "a.ts", edits: [] } },
      ]),
      assistantMessage([
        { type: "toolCall", id: "4", name: "write", arguments: { path: "new.ts", content: "x" } },
        { type: "toolCall", id: "5", name: "read", arguments: { path: "z.ts" } },
        { type: "toolCall", id: "6", name: "bash", arguments: { command: "cat q.ts" } },
      ]),
      { role: "user", content: "read m.ts", timestamp: 0 },
    ];
    expect(collectFileOps(messages)).toEqual({ readFiles: ["z.ts"], modifiedFiles: ["a.ts", "new.ts"] });
    expect(collectFileOps(messages, { readFiles: ["b.ts", "new.ts"], modifiedFiles: ["c.ts"] })).toEqual({
      readFiles: ["b.ts", "z.ts"],
      modifiedFiles: ["a.ts", "c.ts", "new.ts"],
    });
  });

  test("appendFileLists adds tagged lists only when there are files", () => {
    expect(appendFileLists("S\n", { readFiles: [], modifiedFiles: [] })).toBe("S");
    expect(appendFileLists("S", { readFiles: ["a"], modifiedFiles: ["b", "c"] })).toBe("S\n\n<read-files>\na\n</read-files>\n\n<modified-files>\nb\nc\n</modified-files>");
  });
});

describe("serializeForSummary", () => {
  test("labels every kind of message and truncates tool results", () => {
    const text = serializeForSummary([
      { role: "user", content: "fix the bug", timestamp: 0 },
      assistantMessage([{ type: "text", text: "looking" }, { type: "toolCall", id: "1", name: "read", arguments: { path: "a.ts" } }]),
      { role: "toolResult", toolCallId: "1", toolName: "read", content: [{ type: "text", text: "r".repeat(5000) }], isError: false, timestamp: 0 },
      { role: "assistant", content: [{ type: "thinking", thinking: "hmm" }], api: "scripted", provider: "f", model: "m", usage: emptyUsage(), stopReason: "stop", timestamp: 0 },
      { role: "bashExecution", command: "ls", output: "a.ts", exitCode: 0, cancelled: false, truncated: false, timestamp: 0 },
      { role: "bashExecution", command: "secret", output: "x", exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true, timestamp: 0 },
      { role: "custom", customType: "note", content: "remember this", display: true, timestamp: 0 },
    ]);
    expect(text).toContain("[User]: fix the bug");
    expect(text).toContain("[Assistant]: looking");
    expect(text).toContain('[Tool call] read({"path":"a.ts"})');
    expect(text).toContain("[Tool result] read: rrr");
    expect(text).toContain("3000 more characters left out");
    expect(text).not.toContain("r".repeat(2001));
    expect(text).toContain("[Assistant thinking]: hmm");
    expect(text).toContain("[User ran a shell command]: Ran `ls`");
    expect(text).not.toContain("secret");
    expect(text).toContain("[Custom message (note)]: remember this");
  });
});

describe("buildSummaryRequest", () => {
  const messages: AgentMessage[] = [{ role: "user", content: "build the parser", timestamp: 0 }];
  const promptOf = (req: LlmRequest) => ((req.messages[0]!.content as TextContent[])[0]!).text;

  test("a fresh summary: one user message, no tools, thinking off, not cached, all sections asked for", () => {
    const req = buildSummaryRequest({ model, apiKey: "k", messages });
    expect(req.tools).toEqual([]);
    expect(req.thinkingLevel).toBe("off");
    expect(req.apiKey).toBe("k");
    // sent once: caching its transcript would be a write never read
    expect(req.cacheConversation).toBe(false);
    expect(req.messages).toHaveLength(1);
    expect(req.systemPrompt.length).toBeGreaterThan(0);
    const prompt = promptOf(req);
    expect(prompt).toContain("[User]: build the parser");
    for (const section of ["## Goal", "## Constraints & Preferences", "## Progress", "### Done", "### In Progress", "### Blocked", "## Key Decisions", "## Next Steps", "## Critical Context"]) {
      expect(prompt).toContain(section);
    }
    expect(prompt).not.toContain("<previous-summary>");
  });

  test("an update carries the previous summary and the custom instructions", () => {
    const prompt = promptOf(buildSummaryRequest({ model, messages, previousSummary: "## Goal\nOLD GOAL", customInstructions: "focus on the lexer" }));
    expect(prompt).toContain("<previous-summary>\n## Goal\nOLD GOAL\n</previous-summary>");
    expect(prompt).toContain("updated summary");
    expect(prompt).toContain("focus on the lexer");
    expect(prompt.indexOf("focus on the lexer")).toBeGreaterThan(prompt.indexOf("[User]: build the parser"));
  });
});

describe("isContextOverflow", () => {
  const err = (errorMessage: string) => assistantMessage([], { stopReason: "error", errorMessage });
  test.each([
    "400 prompt is too long: 213456 tokens > 200000 maximum",
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}',
    "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "400 context_length_exceeded",
    "400 Your input exceeds the context window of this model. Please adjust your input and try again.",
    "413 request_too_large",
    "Input is too long for requested model.",
    "400 too many tokens in the request",
    "the request exceeds the available context size, try increasing it",
    "400 request (2634 tokens) exceeds the available context size (2048 tokens), try increasing it",
    "400 input (3000 tokens) is larger than the max context size (2048 tokens). skipping",
    '400 {"error":{"code":400,"type":"exceed_context_size_error","n_ctx":2048}}',
  ])("overflow: %s", (message) => {
    expect(isContextOverflow(err(message))).toBe(true);
  });

  test.each([
    "429 Rate limit reached for requests",
    "429 rate_limit_error: Number of request tokens has exceeded your per-minute rate limit",
    "529 Overloaded",
    '529 {"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}',
    "500 Internal server error",
    "401 invalid x-api-key",
    "fetch failed: ECONNRESET",
    // OpenAI's tokens-per-minute limit: a rate limit, not the context window
    "Request too large for gpt-4o in organization org-1 on tokens per min (TPM): Limit 30000, Requested 50000.",
    // Bedrock throttling as pion's adapter words it: a rate limit that mentions tokens
    "429 ThrottlingException: Too many tokens, please wait before trying again.",
  ])("not overflow: %s", (message) => {
    expect(isContextOverflow(err(message))).toBe(false);
  });

  test("only failed responses count", () => {
    expect(isContextOverflow(assistantMessage([], { stopReason: "stop", errorMessage: "prompt is too long" }))).toBe(false);
    expect(isContextOverflow(assistantMessage([], { stopReason: "length" }))).toBe(false);
    expect(isContextOverflow(assistantMessage([], { stopReason: "error" }))).toBe(false);
  });
});

describe("overrunOf", () => {
  const limits = { contextWindow: 4000, maxTokens: 64 };
  const cut = (input: number, output: number, cacheRead = 0) => assistantMessage([], { stopReason: "length", usage: { ...usage(input, output), cacheRead } });

  test("a length stop that used the whole output limit is a normal reply, however full the context", () => {
    expect(overrunOf(cut(1500, 64), limits)).toBeUndefined();
    expect(overrunOf(cut(3900, 64), limits)).toBeUndefined();
  });

  test("a length stop below the output limit is truncated; without output after a prompt filling the window, an overflow", () => {
    expect(overrunOf(cut(1500, 10), limits)).toBe("truncated");
    expect(overrunOf(cut(1500, 0), limits)).toBe("truncated");
    expect(overrunOf(cut(3960, 0), limits)).toBe("overflow");
    expect(overrunOf(cut(960, 0, 3000), limits)).toBe("overflow");
  });

  test("the provider's context-length error is an overflow; without known limits nothing else is", () => {
    expect(overrunOf(assistantMessage([], { stopReason: "error", errorMessage: "400 prompt is too long" }))).toBe("overflow");
    expect(overrunOf(cut(3990, 0))).toBeUndefined();
    expect(overrunOf(assistantMessage([], { usage: usage(5000, 0) }))).toBeUndefined();
  });

  test("a completed reply whose prompt (fresh plus cache-read) exceeded the window overflowed silently", () => {
    expect(overrunOf(assistantMessage([], { usage: usage(5000, 0) }), limits)).toBe("silent");
    expect(overrunOf(assistantMessage([], { usage: { ...usage(1000, 0), cacheRead: 3001 } }), limits)).toBe("silent");
    expect(overrunOf(assistantMessage([], { usage: usage(4000, 10) }), limits)).toBeUndefined();
  });
});

test("shouldCompact compares against the window minus the reserve", () => {
  expect(shouldCompact(null, 200_000, 16_384)).toBe(false);
  expect(shouldCompact(183_616, 200_000, 16_384)).toBe(false);
  expect(shouldCompact(183_617, 200_000, 16_384)).toBe(true);
  expect(shouldCompact(10, 0, 16_384)).toBe(false);
});

test("estimateContextTokens sums the per-message estimates", () => {
  const messages: AgentMessage[] = [
    { role: "user", content: "x".repeat(400), timestamp: 0 },
    { role: "compactionSummary", summary: "s".repeat(100), tokensBefore: 5, timestamp: 0 },
  ];
  expect(estimateContextTokens(messages)).toBe(estimateTokens(messages[0]!) + estimateTokens(messages[1]!));
  expect(estimateContextTokens([])).toBe(0);
});

function recorder(overrides: Partial<SummaryRetry> = {}) {
  const calls: string[] = [];
  const retry: SummaryRetry = {
    enabled: true,
    maxRetries: 3,
    baseDelayMs: 1,
    onScheduled: (attempt, max, delayMs, error) => calls.push(`scheduled ${attempt}/${max} ${delayMs}ms ${error}`),
    onAttemptStart: () => calls.push("attempt"),
    onFinished: () => calls.push("finished"),
    ...overrides,
  };
  return { calls, retry };
}

describe("summarize", () => {
  /** The summary's usage is a sum of replies the provider did not price itself. */
  const summed = (u: Usage): Usage => ({ ...u, cost: { ...u.cost, totalFromProvider: false } });
  const req = buildSummaryRequest({ model, messages: [{ role: "user", content: "hi", timestamp: 0 }] });

  test("returns the summary text and its usage", async () => {
    const { stream, requests } = scripted(text("## Goal\nShip it"));
    const { calls, retry } = recorder();
    expect(await summarize(stream, req, new AbortController().signal, retry)).toEqual({ summary: "## Goal\nShip it", usage: summed(usage(100, 20)) });
    expect(requests).toEqual([req]);
    expect(calls).toEqual([]);
  });

  test("retries a transient error, calling the callbacks in order and summing usage", async () => {
    const { stream, requests } = scripted(failure("529 Overloaded", usage(3, 0)), failure("fetch failed: ECONNRESET"), text("done"));
    const { calls, retry } = recorder();
    const result = await summarize(stream, req, new AbortController().signal, retry);
    expect(result).toEqual({ summary: "done", usage: summed(usage(103, 20)) });
    expect(requests).toHaveLength(3);
    expect(calls).toEqual(["scheduled 1/3 1ms 529 Overloaded", "attempt", "scheduled 2/3 2ms fetch failed: ECONNRESET", "attempt", "finished"]);
  });

  test("a non-transient error is returned at once", async () => {
    const { stream, requests } = scripted(failure("400 prompt is too long: 300000 tokens > 200000 maximum"));
    const { calls, retry } = recorder();
    expect(await summarize(stream, req, new AbortController().signal, retry)).toEqual({
      error: "400 prompt is too long: 300000 tokens > 200000 maximum",
      aborted: false,
      usage: summed(emptyUsage()),
    });
    expect(requests).toHaveLength(1);
    expect(calls).toEqual([]);
  });

  test("gives up after maxRetries and reports the last error", async () => {
    const { stream, requests } = scripted(failure("529 Overloaded"), failure("529 Overloaded"), failure("503 unavailable"));
    const { calls, retry } = recorder({ maxRetries: 2 });
    const result = await summarize(stream, req, new AbortController().signal, retry);
    expect(result).toMatchObject({ error: "503 unavailable", aborted: false });
    expect(requests).toHaveLength(3);
    expect(calls).toEqual(["scheduled 1/2 1ms 529 Overloaded", "attempt", "scheduled 2/2 2ms 529 Overloaded", "attempt", "finished"]);
  });

  test("does not retry when retries are disabled", async () => {
    const { stream, requests } = scripted(failure("529 Overloaded"));
    const { calls, retry } = recorder({ enabled: false });
    expect(await summarize(stream, req, new AbortController().signal, retry)).toMatchObject({ error: "529 Overloaded", aborted: false });
    expect(requests).toHaveLength(1);
    expect(calls).toEqual([]);
  });

  test("an abort while streaming ends with aborted", async () => {
    const { stream } = scripted("hang");
    const { calls, retry } = recorder();
    const controller = new AbortController();
    const pending = summarize(stream, req, controller.signal, retry);
    controller.abort();
    expect(await pending).toMatchObject({ aborted: true });
    expect(calls).toEqual([]);
  });

  test("an abort during the retry delay ends the sequence", async () => {
    const controller = new AbortController();
    const { stream, requests } = scripted(failure("529 Overloaded"), text("never"));
    const { calls, retry } = recorder({
      baseDelayMs: 60_000,
      onScheduled: () => {
        calls.push("scheduled");
        controller.abort();
      },
    });
    expect(await summarize(stream, req, controller.signal, retry)).toMatchObject({ aborted: true });
    expect(requests).toHaveLength(1);
    expect(calls).toEqual(["scheduled", "finished"]);
  });

  test("an empty reply is an error, not an empty summary", async () => {
    const { stream } = scripted(text("   "));
    expect(await summarize(stream, req, new AbortController().signal, recorder().retry)).toMatchObject({ aborted: false, error: expect.stringContaining("empty") });
  });
});
