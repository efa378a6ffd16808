import { describe, expect, test } from "bun:test";
import { streamAnthropic } from "../../../src/providers/anthropic.ts";
import { markConversation } from "../../../src/providers/cache-points.ts";
import type { AssistantMessage, Message, ToolResultMessage } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { readTool, request, run, testModel } from "./helpers.ts";

const signal = () => new AbortController().signal;

describe("markConversation", () => {
  /** Marks the message indices it is given, refusing those in `refuse`; returns them in marking order. */
  const marks = (roles: string[], refuse: number[] = []) => {
    const msgs = roles.map((role, i) => ({ role, i }));
    const got: number[] = [];
    markConversation(msgs, (m) => (refuse.includes(m.i) ? false : (got.push(m.i), true)));
    return got;
  };

  test("the end of the conversation, and the end of the request before the last assistant message", () => {
    expect(marks(["user"])).toEqual([0]);
    expect(marks(["user", "assistant", "user"])).toEqual([2, 0]);
    expect(marks(["user", "assistant", "user", "assistant", "user", "user"])).toEqual([5, 2]);
    expect(marks([])).toEqual([]);
  });

  test("a message that cannot take a breakpoint hands it to the one before; never two on one message", () => {
    // the last assistant message holds only thinking: the end breakpoint lands where the previous request ended
    expect(marks(["user", "assistant"], [1])).toEqual([0]);
    expect(marks(["user", "assistant", "user", "assistant"], [3])).toEqual([2]);
    expect(marks(["user", "assistant", "user"], [0])).toEqual([2]);
  });
});

const usage = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const assistant = (content: AssistantMessage["content"]): AssistantMessage => ({
  role: "assistant",
  content,
  api: "anthropic-messages",
  provider: "anthropic",
  model: "claude-test",
  usage,
  stopReason: content.some((c) => c.type === "toolCall") ? "toolUse" : "stop",
  timestamp: 2,
});
const result = (id: string, text: string): ToolResultMessage => ({
  role: "toolResult",
  toolCallId: id,
  toolName: "read",
  content: [{ type: "text", text }],
  isError: false,
  timestamp: 3,
});

type Block = { type: string; text?: string; cache_control?: unknown };
type Body = { system?: Block[]; tools?: Block[]; messages: { role: string; content: Block[] | string }[] };
const marked = (b: { cache_control?: unknown }) => b.cache_control !== undefined;
/** [message index, block index] of every marked conversation block. */
const conversationMarks = (body: Body) =>
  body.messages.flatMap((m, i) => (typeof m.content === "string" ? [] : m.content.flatMap((b, j) => (marked(b) ? [[i, j]] : []))));
const countMarks = (body: Body) => JSON.stringify(body).split('"cache_control"').length - 1;

describe("Anthropic request bodies", () => {
  test.concurrent("a wide step (12 parallel tool calls) gets a second conversation breakpoint where the previous request ended", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-test", provider: "anthropic" });
    const calls = Array.from({ length: 12 }, (_, i) => ({ type: "toolCall" as const, id: `toolu_${i}`, name: "read", arguments: { path: `f${i}` } }));
    const history: Message[] = [
      { role: "user", content: "read them all", timestamp: 1 },
      assistant([{ type: "text", text: "first one" }, calls[0]!]),
      result("toolu_0", "zero"),
      assistant([{ type: "text", text: "now the rest at once" }, ...calls.slice(1)]),
      ...calls.slice(1).map((c) => result(c.id, `content of ${c.id}`)),
    ];
    await run(streamAnthropic(request(model, { tools: [readTool, { ...readTool, name: "ls" }], messages: history }), signal()));
    const body = fake.requests[0]!.body as Body;
    // user, assistant, user [1 result], assistant, user [11 results]
    expect(body.messages.map((m) => m.role)).toEqual(["user", "assistant", "user", "assistant", "user"]);
    expect(conversationMarks(body)).toEqual([
      [2, 0],
      [4, 10],
    ]);
    expect(marked(body.system!.at(-1)!)).toBe(true);
    expect(body.tools!.map(marked)).toEqual([false, true]);
    expect(countMarks(body)).toBe(4);
  });

  test.concurrent("no breakpoint on thinking or empty text; user text always goes as blocks", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "ok" }] }] });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-test", provider: "anthropic", reasoning: true });
    const history: Message[] = [
      { role: "user", content: "think about it", timestamp: 1 },
      assistant([
        { type: "text", text: "so far" },
        { type: "text", text: "" },
        { type: "thinking", thinking: "hmm", thinkingSignature: "sig" },
      ]),
    ];
    await run(streamAnthropic(request(model, { messages: history, thinkingLevel: "high" }), signal()));
    const body = fake.requests[0]!.body as Body;
    // the last assistant message ends with thinking: its text takes the end breakpoint, the user message before it the other
    expect(body.messages[0]!.content).toEqual([{ type: "text", text: "think about it", cache_control: { type: "ephemeral" } }]);
    expect(body.messages[1]!.content as unknown[]).toEqual([
      { type: "text", text: "so far", cache_control: { type: "ephemeral" } },
      { type: "thinking", thinking: "hmm", signature: "sig" },
    ]);
    expect(countMarks(body)).toBe(3);
  });

  test.concurrent("any history: at most four breakpoints, never on thinking or empty text, the end of the conversation always one", async () => {
    const N = 40;
    await using fake = startFakeProvider({ replies: Array.from({ length: N }, () => ({ blocks: [{ type: "text" as const, text: "ok" }] })) });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-test", provider: "anthropic", reasoning: true });
    let seed = 7;
    const rnd = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    for (let k = 0; k < N; k++) {
      const history: Message[] = [{ role: "user", content: rnd(4) === 0 ? "" : "go", timestamp: 1 }];
      let id = 0;
      for (let step = rnd(6); step > 0; step--) {
        const content: AssistantMessage["content"] = [];
        if (rnd(2)) content.push({ type: "thinking", thinking: "t", thinkingSignature: "s" });
        if (rnd(2)) content.push({ type: "text", text: rnd(3) ? "said" : "" });
        const calls = rnd(4);
        for (let c = 0; c < calls; c++) content.push({ type: "toolCall", id: `toolu_${++id}`, name: "read", arguments: {} });
        if (rnd(3) === 0) content.push({ type: "thinking", thinking: "after", thinkingSignature: "s2" });
        history.push(assistant(content));
        for (const c of content) if (c.type === "toolCall") history.push(result(c.id, rnd(5) ? "r" : ""));
        if (calls === 0 || rnd(3) === 0) history.push({ role: "user", content: [{ type: "text", text: "more" }], timestamp: 4 });
      }
      await run(streamAnthropic(request(model, { messages: history, tools: rnd(2) ? [readTool] : [], thinkingLevel: "high" }), signal()));
      const body = fake.requests.at(-1)!.body as Body;
      expect(countMarks(body)).toBeLessThanOrEqual(4);
      for (const m of body.messages) {
        expect(typeof m.content).not.toBe("string");
        for (const b of m.content as Block[]) {
          if (!marked(b)) continue;
          expect(b.type === "thinking" || b.type === "redacted_thinking").toBe(false);
          if (b.type === "text") expect(b.text).not.toBe("");
        }
      }
      // the last block that can carry a breakpoint carries one
      const lastMarkable = body.messages
        .flatMap((m) => m.content as Block[])
        .filter((b) => b.type !== "thinking" && b.type !== "redacted_thinking" && !(b.type === "text" && !b.text))
        .at(-1);
      if (lastMarkable) expect(marked(lastMarkable)).toBe(true);
    }
    expect(fake.failures).toEqual([]);
  });

  test.concurrent("a request no later one extends (a compaction summary) caches its system prompt only", async () => {
    await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "## Goal" }] }] });
    const model = testModel(fake.url, "anthropic-messages", { id: "claude-test", provider: "anthropic" });
    await run(streamAnthropic(request(model, { cacheConversation: false, messages: [{ role: "user", content: "summarize", timestamp: 1 }] }), signal()));
    const body = fake.requests[0]!.body as Body;
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "summarize" }] }]);
    expect(countMarks(body)).toBe(1);
    expect(marked(body.system![0]!)).toBe(true);
  });
});
