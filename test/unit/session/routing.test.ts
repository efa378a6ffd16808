import { describe, expect, test } from "bun:test";
import { PushStream } from "../../../src/providers/event-stream.ts";
import type { LlmRequest, Model, StreamFn, UserMessage } from "../../../src/providers/types.ts";
import { Routing, type RouteRequest } from "../../../src/session/routing.ts";
import type { AgentMessage, Entry } from "../../../src/store/entries.ts";
import { assistantMessage, model } from "./branch.ts";

const virtual: Model = { ...model, id: "auto", provider: "router", api: "pi-virtual", reasoning: true, thinkingLevels: ["low", "high"] };
const plain: Model = { ...model, id: "plain" };
const keyless: Model = { ...model, id: "k", provider: "nokey" };
const catalog = [model, plain, virtual, keyless];

function host(answer: (r: RouteRequest) => unknown) {
  const asked: RouteRequest[] = [];
  const branch: Entry[] = [];
  const h = {
    router: async (r: RouteRequest) => (asked.push(r), answer(r)),
    models: {
      find: (p: string, id: string) => catalog.find((m) => m.provider === p && m.id === id),
      apiKey: (p: string) => (p === "nokey" ? undefined : "k"),
      requestAuth: async (p: string) => (p === "nokey" ? {} : { apiKey: "k" }),
    },
    branch: () => branch,
    record: async (e: Partial<Entry>) => {
      const entry = { ...e, id: `s${branch.length}`, parentId: null, timestamp: "" } as Entry;
      branch.push(entry);
      return entry;
    },
  };
  return { routing: new Routing(h), asked, branch };
}

const request = (messages: LlmRequest["messages"], m: Model = virtual): LlmRequest => ({
  model: m,
  systemPrompt: "SYSTEM",
  messages,
  tools: [],
  thinkingLevel: "high",
});
const user = (text: string): UserMessage => ({ role: "user", content: [{ type: "text", text }], timestamp: 0 });
const signal = new AbortController().signal;

describe("routing of virtual models", () => {
  test("a physical model passes untouched; a virtual one becomes the routed model, key and clamped level", async () => {
    const { routing, asked } = host(() => ({ model: plain, thinkingLevel: "xhigh" }));
    const physical = request([], model);
    expect(await routing.forLoop(physical, [], undefined, signal)).toBe(physical);
    const routed = await routing.forLoop(request([user("hi")]), [user("hi")], undefined, signal);
    expect(routed).toMatchObject({ model: plain, apiKey: "k", thinkingLevel: "off" });
    expect(asked[0]).toMatchObject({ model: virtual, thinkingLevel: "high", reason: "user", messages: [{ role: "system", content: "SYSTEM" }, user("hi")] });
  });

  test("reasons: user after a message the user wrote, continuation after tool results, retry with the failed attempt", async () => {
    const { routing, asked } = host(() => ({ model, thinkingLevel: "low" }));
    const answered = assistantMessage([{ type: "toolCall", id: "c", name: "read", arguments: {} }], { stopReason: "toolUse", thinkingLevel: "low" });
    const result: AgentMessage = { role: "toolResult", toolCallId: "c", toolName: "read", content: [], isError: false, timestamp: 0 };
    await routing.forLoop(request([]), [user("a"), answered, result], undefined, signal);
    const failed = assistantMessage([], { stopReason: "error", errorMessage: "529" });
    await routing.forLoop(request([]), [user("a")], failed, signal);
    await routing.forLoop(request([answered]), [user("a"), answered, user("b")], undefined, signal);
    expect(asked.map((r) => r.reason)).toEqual(["continuation", "retry", "user"]);
    expect(asked[1]!.failed).toEqual({ model, thinkingLevel: undefined, message: failed });
    expect(asked[2]!.previous).toEqual({ model, thinkingLevel: "low" });
  });

  test("state: the branch's latest for this model is passed back; a new object is stored before the request", async () => {
    let next: unknown = { phase: "plan" };
    const { routing, asked, branch } = host((r) => ({ model, thinkingLevel: "low", state: next === "same" ? r.state : next }));
    await routing.forLoop(request([]), [user("a")], undefined, signal);
    next = "same";
    await routing.forLoop(request([]), [user("b")], undefined, signal);
    next = { phase: "build" };
    await routing.forLoop(request([]), [user("c")], undefined, signal);
    expect(asked.map((r) => r.state)).toEqual([undefined, { phase: "plan" }, { phase: "plan" }]);
    expect(branch.map((e) => (e.type === "custom" ? [e.customType, e.data] : e.type))).toEqual([
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { phase: "plan" } }],
      ["pi.virtual-model-state", { provider: "router", modelId: "auto", state: { phase: "build" } }],
    ]);
  });

  test("a failed route ends the request as an error naming the virtual model; other requests are routed as direct", async () => {
    let target: unknown = virtual;
    const { routing, asked, branch } = host(() => ({ model: target, thinkingLevel: "low", state: { x: 1 } }));
    const sent: LlmRequest[] = [];
    const inner: StreamFn = (req) => {
      sent.push(req);
      const s = new PushStream();
      s.end(assistantMessage([{ type: "text", text: "fine" }], { provider: req.model.provider, model: req.model.id }));
      return s;
    };
    const stream = routing.stream(inner);
    for (const [t, why] of [
      [virtual, "Virtual model router/auto routed to router/auto, which is not a physical model."],
      [keyless, "Virtual model router/auto routed to nokey/k, which has no credentials."],
      [undefined, "Virtual model router/auto returned no model to route to."],
    ] as const) {
      target = t;
      const req = await routing.forLoop(request([]), [user("a")], undefined, signal);
      expect(await stream(req, signal).result()).toMatchObject({ provider: "router", model: "auto", api: "pi-virtual", stopReason: "error", errorMessage: why });
    }
    expect(sent).toEqual([]);
    target = plain;
    expect(await stream(request([]), signal).result()).toMatchObject({ model: "plain", stopReason: "stop" });
    expect(asked.at(-1)!.reason).toBe("direct");
    expect(asked.at(-1)!.state).toBeUndefined();
    expect(branch).toEqual([]);
  });
});
