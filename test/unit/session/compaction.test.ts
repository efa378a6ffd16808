import { describe, expect, test } from "bun:test";
import { PushStream, emptyUsage } from "../../../src/providers/event-stream.ts";
import type { AssistantMessage, LlmRequest, Model, StreamFn, TextContent, ToolCall, Usage } from "../../../src/providers/types.ts";
import {
  appendFileLists,
  buildSummaryRequest,
  collectFileOps,
  estimateContextTokens,
  findCutPoint,
  isContextOverflow,
  planCompaction,
  serializeForSummary,
  shouldCompact,
  summarize,
  type SummaryRetry,
} from "../../../src/session/compaction.ts";
import { buildContext } from "../../../src/session/context.ts";
import { estimateTokens } from "../../../src/session/stats.ts";
import type { AgentMessage, Entry } from "../../../src/store/entries.ts";

const model: Model = {
  id: "fake-model",
  name: "Fake",
  api: "scripted",
  provider: "fake",
  baseUrl: "http://localhost",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100_000,
  maxTokens: 8_000,
};

function usage(input: number, output: number): Usage {
  return { ...emptyUsage(), input, output, totalTokens: input + output };
}

function assistantMessage(content: (TextContent | ToolCall)[], extra: Partial<AssistantMessage> = {}): AssistantMessage {
  return { role: "assistant", content, api: "scripted", provider: "fake", model: "fake-model", usage: usage(10, 5), stopReason: "stop", timestamp: 0, ...extra };
}

type NewEntry = Entry extends infer E ? (E extends Entry ? Omit<E, "id" | "parentId" | "timestamp"> : never) : never;

/** Builds a linear branch; ids are e0, e1, … in append order. */
class Branch {
  readonly entries: Entry[] = [];

  private add(entry: NewEntry): string {
    const id = `e${this.entries.length}`;
    const parentId = this.entries.at(-1)?.id ?? null;
    this.entries.push({ ...entry, id, parentId, timestamp: new Date(Date.UTC(2026, 0, 1) + this.entries.length * 1000).toISOString() } as Entry);
    return id;
  }

  message(message: AgentMessage): string {
    return this.add({ type: "message", message });
  }
  user(text: string): string {
    return this.message({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
  }
  say(text: string): string {
    return this.message(assistantMessage([{ type: "text", text }]));
  }
  call(id: string, name: string, args: Record<string, unknown>): string {
    return this.message(assistantMessage([{ type: "toolCall", id, name, arguments: args }], { stopReason: "toolUse" }));
  }
  result(callId: string, text: string, toolName = "read"): string {
    return this.message({ role: "toolResult", toolCallId: callId, toolName, content: [{ type: "text", text }], isError: false, timestamp: 0 });
  }
  compaction(summary: string, firstKeptEntryId: string, details?: unknown): string {
    return this.add({ type: "compaction", summary, firstKeptEntryId, tokensBefore: 1000, details });
  }
  edit(targetId: string, replacement: AgentMessage | null): string {
    return this.add({ type: "context_edit", targetId, replacement });
  }
  index(id: string): number {
    return this.entries.findIndex((e) => e.id === id);
  }
}

/** Three user turns with tool calls; turn 2 is large. */
function threeTurns(): Branch {
  const b = new Branch();
  b.user("first question");
  b.call("c1", "read", { path: "src/a.ts" });
  b.result("c1", "a".repeat(400));
  b.say("answer one");
  b.user("second question");
  b.call("c2", "read", { path: "src/b.ts" });
  b.result("c2", "b".repeat(4000));
  b.call("c3", "edit", { path: "src/b.ts", edits: [] });
  b.result("c3", "edited", "edit");
  b.say("answer two");
  b.user("third question");
  b.call("c4", "bash", { command: "bun test" });
  b.result("c4", "c".repeat(800), "bash");
  b.say("answer three");
  return b;
}

function keptTokens(path: readonly Entry[], from: number): number {
  let sum = 0;
  for (const e of path.slice(from)) if (e.type === "message") sum += estimateTokens(e.message);
  return sum;
}

/** Every toolResult at or after the cut answers a call at or after the cut. */
function splitsToolPair(path: readonly Entry[], cut: number): boolean {
  const keptCalls = new Set<string>();
  for (const e of path.slice(cut)) {
    if (e.type !== "message") continue;
    const m = e.message;
    if (m.role === "assistant") for (const c of m.content) if (c.type === "toolCall") keptCalls.add(c.id);
    if (m.role === "toolResult" && !keptCalls.has(m.toolCallId)) return true;
  }
  return false;
}

describe("findCutPoint", () => {
  test("never separates a tool call from its result, for every budget", () => {
    const path = threeTurns().entries;
    const total = keptTokens(path, 0);
    for (let keep = 0; keep <= total + 10; keep += 7) {
      const cut = findCutPoint(path, keep);
      if (!cut) continue;
      expect(splitsToolPair(path, cut.firstKeptIndex)).toBe(false);
      expect(cut.firstKeptIndex).toBeGreaterThan(cut.summarizeFrom);
    }
  });

  test("keeps at least keepRecentTokens, cutting at the nearest earlier user message", () => {
    const b = threeTurns();
    const third = b.index("e10");
    const turn3 = keptTokens(b.entries, third);
    expect(findCutPoint(b.entries, turn3)).toEqual({ firstKeptIndex: third, summarizeFrom: 0, splitTurn: false });
    // one token more than the last turn reaches into the middle of turn 2: the cut moves back to its start
    const cut = findCutPoint(b.entries, turn3 + 1);
    expect(cut).toEqual({ firstKeptIndex: b.index("e4"), summarizeFrom: 0, splitTurn: false });
    expect(keptTokens(b.entries, cut!.firstKeptIndex)).toBeGreaterThanOrEqual(turn3 + 1);
  });

  test("a tiny budget with two user turns still finds a cut", () => {
    const b = new Branch();
    b.user("hi");
    b.say("hello");
    b.user("again");
    b.say("yes");
    expect(findCutPoint(b.entries, 1)).toEqual({ firstKeptIndex: 2, summarizeFrom: 0, splitTurn: false });
  });

  test("undefined when the session fits the budget or has nothing before the cut", () => {
    const b = new Branch();
    b.user("hi");
    b.say("hello");
    expect(findCutPoint(b.entries, 20_000)).toBeUndefined();
    expect(findCutPoint([], 1)).toBeUndefined();
    expect(findCutPoint(b.entries.slice(0, 1), 0)).toBeUndefined();
  });

  test("a user message between a tool call and its result is not a cut point", () => {
    const b = new Branch();
    b.user("first");
    b.say("ok");
    b.user("second");
    b.call("c1", "bash", { command: "sleep 1" });
    b.user("steer while the tool runs");
    b.result("c1", "done", "bash");
    b.say("finished");
    expect(findCutPoint(b.entries, 1)).toEqual({ firstKeptIndex: 2, summarizeFrom: 0, splitTurn: false });
  });

  test("a single turn over budget is cut at an assistant message, never at a tool result", () => {
    const b = new Branch();
    b.user("do it all");
    b.call("c1", "read", { path: "a" });
    b.result("c1", "x".repeat(2000));
    b.call("c2", "read", { path: "b" });
    b.result("c2", "y".repeat(2000));
    b.say("done");
    // the budget reaches into the second tool result: the cut moves back to the call that produced it
    expect(findCutPoint(b.entries, 300)).toEqual({ firstKeptIndex: 3, summarizeFrom: 0, splitTurn: true });
    expect(findCutPoint(b.entries, 600)).toEqual({ firstKeptIndex: 1, summarizeFrom: 0, splitTurn: true });
  });

  test("a repeated compaction starts at the previous firstKeptEntryId", () => {
    const b = threeTurns();
    b.compaction("old summary", "e4", { readFiles: ["old.ts"], modifiedFiles: [] });
    b.user("fourth question");
    b.say("answer four");
    b.user("fifth question");
    b.say("answer five");
    const cut = findCutPoint(b.entries, 1);
    expect(cut).toEqual({ firstKeptIndex: b.index("e17"), summarizeFrom: b.index("e4"), splitTurn: false });

    const plan = planCompaction(b.entries, 1)!;
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
    const cut = findCutPoint(b.entries, 1);
    expect(cut).toEqual({ firstKeptIndex: b.index("e10"), summarizeFrom: b.index("e4"), splitTurn: false });
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
    expect(findCutPoint(b.entries, 1)).toEqual({ firstKeptIndex: b.index("e5"), summarizeFrom: b.index("e3"), splitTurn: false });
  });

  test("nothing new to summarize after a compaction is undefined", () => {
    const b = threeTurns();
    b.compaction("old summary", "e10");
    // keeping all of the kept turn leaves nothing between the old boundary and the cut
    expect(findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")))).toBeUndefined();
    b.say("a little more");
    expect(findCutPoint(b.entries, keptTokens(b.entries, b.index("e10")))).toBeUndefined();
  });

  test("the plan applies context edits", () => {
    const b = new Branch();
    b.user("one");
    const failed = b.message(assistantMessage([], { stopReason: "error", errorMessage: "500 boom" }));
    b.edit(failed, null);
    b.say("answer");
    b.user("two");
    b.say("done");
    const plan = planCompaction(b.entries, 1)!;
    expect(plan.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    expect(plan.firstKeptEntryId).toBe("e4");
  });
});

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

  test("a fresh summary: one user message, no tools, thinking off, all sections asked for", () => {
    const req = buildSummaryRequest({ model, apiKey: "k", messages });
    expect(req.tools).toEqual([]);
    expect(req.thinkingLevel).toBe("off");
    expect(req.apiKey).toBe("k");
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
  const err = (errorMessage: string) => ({ stopReason: "error", errorMessage });
  test.each([
    "400 prompt is too long: 213456 tokens > 200000 maximum",
    '400 {"type":"error","error":{"type":"invalid_request_error","message":"prompt is too long: 201000 tokens > 200000 maximum"}}',
    "400 This model's maximum context length is 128000 tokens. However, your messages resulted in 130000 tokens.",
    "400 context_length_exceeded",
    "400 Your input exceeds the context window of this model. Please adjust your input and try again.",
    "413 request_too_large",
    "Request too large for gpt-4o in organization org-1 on tokens per min (TPM): Limit 30000, Requested 50000.",
    "Input is too long for requested model.",
    "400 too many tokens in the request",
    "the request exceeds the available context size, try increasing it",
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
  ])("not overflow: %s", (message) => {
    expect(isContextOverflow(err(message))).toBe(false);
  });

  test("only failed responses count", () => {
    expect(isContextOverflow({ stopReason: "stop", errorMessage: "prompt is too long" })).toBe(false);
    expect(isContextOverflow({ stopReason: "length" })).toBe(false);
    expect(isContextOverflow({ stopReason: "error" })).toBe(false);
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

type Reply = AssistantMessage | "hang";

/** A StreamFn that answers each request with the next scripted reply; "hang" waits for abort. */
function scripted(...replies: Reply[]) {
  const requests: LlmRequest[] = [];
  const stream: StreamFn = (req, signal) => {
    requests.push(req);
    const reply = replies.shift();
    if (!reply) throw new Error(`no scripted reply for request #${requests.length}`);
    const out = new PushStream();
    if (reply === "hang") {
      signal.addEventListener("abort", () => out.end(assistantMessage([], { stopReason: "aborted", errorMessage: "aborted" })), { once: true });
      return out;
    }
    queueMicrotask(() => {
      reply.content.forEach((block, contentIndex) => {
        if (block.type === "text") out.push({ type: "text_delta", contentIndex, delta: block.text });
      });
      out.end(reply);
    });
    return out;
  };
  return { stream, requests };
}

const text = (t: string, u = usage(100, 20)) => assistantMessage([{ type: "text", text: t }], { usage: u });
const failure = (errorMessage: string, u = usage(0, 0)) => assistantMessage([], { stopReason: "error", errorMessage, usage: u });

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
  const req = buildSummaryRequest({ model, messages: [{ role: "user", content: "hi", timestamp: 0 }] });

  test("returns the summary text and its usage", async () => {
    const { stream, requests } = scripted(text("## Goal\nShip it"));
    const { calls, retry } = recorder();
    expect(await summarize(stream, req, new AbortController().signal, retry)).toEqual({ summary: "## Goal\nShip it", usage: usage(100, 20) });
    expect(requests).toEqual([req]);
    expect(calls).toEqual([]);
  });

  test("retries a transient error, calling the callbacks in order and summing usage", async () => {
    const { stream, requests } = scripted(failure("529 Overloaded", usage(3, 0)), failure("fetch failed: ECONNRESET"), text("done"));
    const { calls, retry } = recorder();
    const result = await summarize(stream, req, new AbortController().signal, retry);
    expect(result).toEqual({ summary: "done", usage: usage(103, 20) });
    expect(requests).toHaveLength(3);
    expect(calls).toEqual(["scheduled 1/3 1ms 529 Overloaded", "attempt", "scheduled 2/3 2ms fetch failed: ECONNRESET", "attempt", "finished"]);
  });

  test("a non-transient error is returned at once", async () => {
    const { stream, requests } = scripted(failure("400 prompt is too long: 300000 tokens > 200000 maximum"));
    const { calls, retry } = recorder();
    expect(await summarize(stream, req, new AbortController().signal, retry)).toEqual({
      error: "400 prompt is too long: 300000 tokens > 200000 maximum",
      aborted: false,
      usage: emptyUsage(),
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
