import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { streamPiMessages } from "../../../src/providers/pi-messages.ts";
import type { AssistantMessage, LlmRequest, Message, Model } from "../../../src/providers/types.ts";
import { startFakeProvider, type FakeProvider, type FakeReply, type FakeRequest } from "../../support/fake-provider.ts";

/**
 * pi-ai's `piMessagesApi` and pion's pi-messages adapter against the reference's own, on the same
 * fake server: the same request (path, body, headers) for the same context and options, and the
 * same final message for the same reply.
 */
const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test : test.skip;
// biome-ignore lint/suspicious/noExplicitAny: the reference's modules and pion's virtual ones are untyped here
type Mod = Record<string, any>;
const refCompat = async (): Promise<Mod> => import(join(REF!, "..", "pi-ai", "dist", "compat.js"));
const compat = () => referenceModules()["pi-ai/compat"] as Mod;

const modelOf = (fake: FakeProvider): Model => ({
  id: "gw-model",
  name: "GW",
  api: "pi-messages",
  provider: "gw",
  baseUrl: `${fake.url}/pi`,
  reasoning: true,
  input: ["text", "image"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 100000,
  maxTokens: 8000,
});

const tools = [{ name: "read", description: "Read a file", parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] } }];
const usage = { input: 1, output: 2, cacheRead: 0, cacheWrite: 0, totalTokens: 3, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
const messages: Message[] = [
  { role: "user", content: [{ type: "text", text: "read a.txt" }], timestamp: 1 },
  { role: "assistant", content: [{ type: "text", text: "ok" }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" } }], api: "pi-messages", provider: "gw", model: "gw-model", usage, stopReason: "toolUse", timestamp: 2 },
  { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "alpha" }], isError: false, timestamp: 3 },
];

/** What a request carried that both clients should agree on: not the transport's own headers, not the client's version. */
function sent(r: FakeRequest): Mod {
  const { host: _h, "content-length": _l, connection: _c, "accept-encoding": _e, "user-agent": ua, ...headers } = r.headers;
  return { path: r.path, headers, userAgent: ua?.replace(/^pi\/\S+/, "pi/<version>"), body: r.body };
}

async function drain(stream: AsyncIterable<Mod> & { result(): Promise<AssistantMessage> }): Promise<{ types: string[]; message: Mod }> {
  const types: string[] = [];
  for await (const e of stream) types.push(e.type);
  // As JSON (undefined fields are none), without the times and the fake's random response id.
  const { timestamp: _t, durationMs: _d, responseId, ...message } = JSON.parse(JSON.stringify(await stream.result())) as Mod;
  if (responseId !== undefined) message.responseId = typeof responseId;
  // pion marks a cost total a provider reported as such; the reference has no such field.
  delete message.usage.cost.totalFromProvider;
  return { types, message };
}

const REPLIES: FakeReply[] = [
  { blocks: [{ type: "thinking", thinking: ["a", "b"], signature: "s1" }, { type: "text", text: ["Hel", "lo"] }, { type: "toolCall", id: "c2", name: "read", arguments: { path: "b.txt" }, fragments: 2 }], usage: { input: 7, output: 3, billing: { cost: 0.125 } } },
  { kind: "stream_error", afterBlocks: [{ type: "text", text: "par" }], message: "upstream exploded" },
  { kind: "http_error", status: 401, message: "bad key", errorType: "unauthorized" },
];

describe("pi-messages against the reference's", () => {
  refTest("the session's adapter sends what the reference's streamSimple sends for the same context", async () => {
    await using fake = startFakeProvider();
    const model = modelOf(fake);
    fake.enqueue({ blocks: [{ type: "text", text: "x" }] }, { blocks: [{ type: "text", text: "x" }] });
    const ref = await refCompat();
    await ref.streamSimple(model, { systemPrompt: "Be terse.", tools, messages }, { apiKey: "k1", reasoning: "high", sessionId: "s-1", headers: { "x-team": "t1" } }).result();
    const req: LlmRequest = { model: { ...model, headers: { "x-team": "t1" } }, apiKey: "k1", systemPrompt: "Be terse.", tools, messages, thinkingLevel: "high", sessionId: "s-1" };
    await streamPiMessages(req, new AbortController().signal).result();
    expect(fake.requests).toHaveLength(2);
    expect(sent(fake.requests[1]!)).toEqual(sent(fake.requests[0]!));
    expect(sent(fake.requests[1]!).body.context.messages[0]).toEqual({ role: "system", content: "Be terse.", toolsAdded: tools, timestamp: 0 });
  });

  refTest("piMessagesApi sends a raw context and the call's options as the reference's does", async () => {
    await using fake = startFakeProvider();
    const model = modelOf(fake);
    fake.enqueue({ blocks: [{ type: "text", text: "x" }] }, { blocks: [{ type: "text", text: "x" }] });
    const context = { systemPrompt: "raw prompt", tools, messages };
    const options = { apiKey: "k2", temperature: 0.3, maxTokens: 123, cacheRetention: "short", toolChoice: "auto", debug: true, reasoning: "low", sessionId: "s-2", headers: { "X-Call": "c" } };
    const seen: Mod[][] = [];
    for (const api of [(await refCompat()).piMessagesApi(), compat().piMessagesApi()]) {
      const calls: Mod[] = [];
      seen.push(calls);
      const hooks = {
        onPayload: (payload: Mod) => void calls.push({ payload: Object.keys(payload) }),
        onResponse: (r: Mod) => void calls.push({ status: r.status, type: r.headers["content-type"] }),
        onProviderStreamEvent: (e: Mod) => void calls.push({ event: e.type }),
      };
      await api.stream(model, context, { ...options, ...hooks }).result();
    }
    expect(sent(fake.requests[1]!)).toEqual(sent(fake.requests[0]!));
    expect(seen[1]).toEqual(seen[0]!);
    expect(seen[0]!.map((c) => Object.keys(c)[0])).toEqual(["payload", "status", "event", "event", "event", "event", "event"]);
    expect(sent(fake.requests[0]!).path).toBe("/pi/messages");
    expect(sent(fake.requests[0]!).body).toMatchObject({ context, options: { temperature: 0.3, maxTokens: 123, cacheRetention: "short", toolChoice: "auto" } });
  });

  refTest("the same replies end in the same events and final messages: a tool call, an error event, an HTTP error", async () => {
    await using fake = startFakeProvider();
    const model = modelOf(fake);
    const context = { systemPrompt: "p", messages: [messages[0]] };
    const ref = (await refCompat()).piMessagesApi();
    const own = compat().piMessagesApi();
    for (const reply of REPLIES) {
      fake.enqueue(reply, reply);
      const theirs = await drain(ref.stream(model, context, { apiKey: "k" }));
      const ours = await drain(own.stream(model, context, { apiKey: "k" }));
      // The reference adds a diagnostic record of a failed response, which pion's messages do not carry.
      delete theirs.message.diagnostics;
      // pion's pi-ai streams open with `start` before the request (model-calls.ts); the reference's
      // opens when the response does, so a request refused over HTTP has none there.
      if (reply.kind === "http_error") ours.types = ours.types.filter((t) => t !== "start");
      expect(ours).toEqual(theirs);
    }
  });
});
