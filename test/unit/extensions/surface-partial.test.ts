import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { streamModel } from "../../../src/extensions/model-calls.ts";
import { PartialAssistant } from "../../../src/extensions/surface/ai-utils-stream.ts";
import { emptyAssistant } from "../../../src/providers/event-stream.ts";
import type { AssistantMessageEvent, Model } from "../../../src/providers/types.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";

const REF = process.env.PION_REFERENCE_PKG;
type Rec = Record<string, any>;
const fake = startFakeProvider();
afterAll(() => fake.stop());
const model = { id: "fake-model", name: "fake", api: "anthropic-messages", provider: "fake", baseUrl: fake.url, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 } as unknown as Model;

describe("the message so far of an assistant stream", () => {
  test("PartialAssistant: each delta gives a new message, earlier ones unchanged, arguments read as far as they have come", () => {
    const p = new PartialAssistant(emptyAssistant(model));
    const events: AssistantMessageEvent[] = [
      { type: "thinking_start", contentIndex: 0 },
      { type: "thinking_delta", contentIndex: 0, delta: "hm" },
      { type: "thinking_end", contentIndex: 0, content: "hmm" },
      { type: "text_start", contentIndex: 1 },
      { type: "text_delta", contentIndex: 1, delta: "he" },
      { type: "text_delta", contentIndex: 1, delta: "llo" },
      { type: "toolcall_start", contentIndex: 2, id: "t1", toolName: "read" },
      { type: "toolcall_delta", contentIndex: 2, delta: '{"path":"sr' },
      { type: "toolcall_delta", contentIndex: 2, delta: 'c","n":[1' },
      { type: "toolcall_end", contentIndex: 2, toolCall: { type: "toolCall", id: "t1", name: "read", arguments: { path: "src", n: [1, 2] } } },
    ];
    const seen = events.map((e) => p.apply(e));
    expect(seen[1]!.content).toEqual([{ type: "thinking", thinking: "hm" }]);
    expect(seen[2]!.content).toEqual([{ type: "thinking", thinking: "hmm" }]);
    expect(seen[5]!.content[1]).toEqual({ type: "text", text: "hello" });
    expect(seen[4]!.content[1]).toEqual({ type: "text", text: "he" });
    expect(seen[6]!.content[2]).toEqual({ type: "toolCall", id: "t1", name: "read", arguments: {} });
    expect(seen[7]!.content[2]).toEqual({ type: "toolCall", id: "t1", name: "read", arguments: { path: "sr" } });
    expect(seen[8]!.content[2]).toEqual({ type: "toolCall", id: "t1", name: "read", arguments: { path: "src", n: [1] } });
    expect(seen[9]!.content[2]).toEqual({ type: "toolCall", id: "t1", name: "read", arguments: { path: "src", n: [1, 2] } });
    expect(p.message).toBe(seen[9]!);
  });

  test("pi-ai's stream() events carry the message so far", async () => {
    fake.enqueue({ blocks: [{ type: "text", text: "hello there" }, { type: "toolCall", name: "echo", arguments: { text: "hi" } }] });
    const s = streamModel(model, { systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "k" });
    const seen: Rec[] = [];
    for await (const e of s) seen.push(e);
    expect(seen[0]).toMatchObject({ type: "start", partial: { role: "assistant", content: [], stopReason: "pending", model: "fake-model" } });
    expect(seen.slice(0, -1).every((e) => e.partial?.role === "assistant")).toBe(true);
    const delta = seen.find((e) => e.type === "text_delta")!;
    expect(delta.partial.content[delta.contentIndex].text.length).toBeGreaterThan(0);
    const end = seen.find((e) => e.type === "toolcall_end")!;
    expect(end.partial.content).toEqual((await s.result()).content);
  });

  (REF ? test : test.skip)("pi-ai's stream() events are the reference's streamSimple's: which carry a partial, and the content it reaches", async () => {
    const ref = await import(join(REF!, "../pi-ai/dist/compat.js"));
    const script = { blocks: [{ type: "thinking" as const, thinking: "let me see" }, { type: "text" as const, text: "hello there" }, { type: "toolCall" as const, name: "echo", arguments: { text: "hi", n: [1, 2] } }] };
    const run = async (fn: (...a: unknown[]) => AsyncIterable<Rec> & { result(): Promise<Rec> }) => {
      fake.enqueue(script);
      const s = fn(model, { systemPrompt: "s", messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "k" });
      const events: [string, boolean][] = [];
      let last: unknown;
      for await (const e of s) {
        events.push([e.type, e.partial !== undefined]);
        if (e.partial) last = structuredClone(e.partial.content);
      }
      const strip = (c: Rec[]) => c.map(({ id: _i, thinkingSignature: _s, ...b }) => b);
      return { events, last: strip(last as Rec[]), final: strip((await s.result()).content) };
    };
    const mine = await run(streamModel as never);
    expect(mine).toEqual(await run(ref.streamSimple));
    expect(mine.last).toEqual(mine.final);
  });
});
