import { afterAll, describe, expect, test } from "bun:test";
import { join } from "node:path";
import { streamModel } from "../../../src/extensions/model-calls.ts";
import { PartialAssistant } from "../../../src/extensions/surface/ai-utils-stream.ts";
import { emptyAssistant } from "../../../src/providers/event-stream.ts";
import type { AssistantMessageEvent, Model } from "../../../src/providers/types.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { startFakeProvider } from "../../support/fake-provider.ts";

const REF = process.env.PION_REFERENCE_PKG;
type Rec = Record<string, any>;
type Fn = (...a: any[]) => any;
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

  (REF ? test : test.skip)("pi-agent-core's agentLoop: each message_update's partial is the reference's, tool call arguments so far included", async () => {
    const ref = await import(join(REF!, "../pi-agent-core/dist/index.js"));
    const ai = await import(join(REF!, "../pi-ai/dist/index.js"));
    const core = referenceModules()["pi-agent-core"] as Rec;
    const base = { role: "assistant", api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 };
    const call = (args: Rec) => ({ type: "toolCall", id: "c1", name: "noop", arguments: args });
    // A provider's events, each with its own snapshot of the message so far.
    const steps: [Rec, Rec[]][] = [
      [{ type: "text_start", contentIndex: 0 }, [{ type: "text", text: "" }]],
      [{ type: "text_delta", contentIndex: 0, delta: "ok" }, [{ type: "text", text: "ok" }]],
      [{ type: "text_end", contentIndex: 0, content: "ok" }, [{ type: "text", text: "ok" }]],
      [{ type: "toolcall_start", contentIndex: 1, id: "c1", toolName: "noop" }, [{ type: "text", text: "ok" }, call({})]],
      [{ type: "toolcall_delta", contentIndex: 1, delta: '{"a":"x' }, [{ type: "text", text: "ok" }, call({ a: "x" })]],
      [{ type: "toolcall_delta", contentIndex: 1, delta: 'y","b":[1' }, [{ type: "text", text: "ok" }, call({ a: "xy", b: [1] })]],
      [{ type: "toolcall_end", contentIndex: 1, toolCall: call({ a: "xy", b: [1, 2] }) }, [{ type: "text", text: "ok" }, call({ a: "xy", b: [1, 2] })]],
    ];
    const run = async (loop: Fn) => {
      let n = 0;
      const streamFn = () => {
        const s = ai.createAssistantMessageEventStream();
        const first = n++ === 0;
        queueMicrotask(() => {
          s.push({ type: "start", partial: { ...base, content: [] } });
          if (first) for (const [e, content] of steps) s.push({ ...e, partial: { ...base, content } });
          const content = first ? steps.at(-1)![1] : [{ type: "text", text: "end" }];
          s.push({ type: "done", reason: first ? "toolUse" : "stop", message: { ...base, content, stopReason: first ? "toolUse" : "stop" } });
        });
        return s;
      };
      const noop = { name: "noop", label: "noop", description: "d", parameters: { type: "object", properties: {} }, execute: async () => ({ content: [{ type: "text", text: "" }], details: {} }) };
      const stream = loop([{ role: "user", content: "go", timestamp: 1 }], { messages: [], tools: [noop] }, { model: { ...model, api: "x", provider: "x", id: "x" }, convertToLlm: (m: Rec[]) => m }, undefined, streamFn);
      const updates: unknown[] = [];
      for await (const e of stream) if (e.type === "message_update") updates.push(structuredClone([e.assistantMessageEvent.type, e.assistantMessageEvent.partial.content, e.message.content]));
      return updates;
    };
    const mine = await run(core.agentLoop);
    expect(mine).toEqual(await run(ref.agentLoop));
    expect(mine.length).toBe(steps.length);
  });
});
