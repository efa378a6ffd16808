import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider } from "../../support/fake-provider.ts";
import { setModelAuth } from "../../../src/extensions/model-calls.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

type Rec = Record<string, any>;
type Fn = (...a: any[]) => any;
const REF = process.env.PION_REFERENCE_PKG;
const core = referenceModules()["pi-agent-core"] as Rec;
const ca = referenceModules()["pi-coding-agent"] as Rec;

const fake = startFakeProvider();
afterAll(() => fake.stop());
const model = { id: "fake-model", name: "fake", api: "anthropic-messages", provider: "fake", baseUrl: fake.url, reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 100000, maxTokens: 1000 };
const user = (text: string) => ({ role: "user", content: text, timestamp: 1 });
const echo = {
  name: "echo",
  label: "Echo",
  description: "echo text",
  parameters: { type: "object", properties: { text: { type: "string" } }, required: ["text"] },
  execute: async (_id: string, p: { text: string }) => ({ content: [{ type: "text", text: `echo:${p.text}` }], details: { n: 1 } }),
};
const config = { model, apiKey: "k", convertToLlm: (m: Rec[]) => m };

describe("pi-agent-core's loop on pion's loop", () => {
  test("agentLoop's stream is pi-ai's EventStream and streamProxy's its AssistantMessageEventStream, as the reference's are", async () => {
    const ai = referenceModules()["pi-ai"] as Rec;
    const failing = () => {
      throw new Error("no stream");
    };
    const loop = core.agentLoop([user("go")], { messages: [] }, config, undefined, failing);
    expect(loop).toBeInstanceOf(ai.EventStream);
    const proxy = core.streamProxy(model, { messages: [] }, { proxyUrl: "http://127.0.0.1:9", authToken: "t" });
    expect(proxy).toBeInstanceOf(ai.AssistantMessageEventStream);
    expect((await proxy.result()).stopReason).toBe("error");
    expect(Array.isArray(await loop.result())).toBe(true);
  });

  test("agentLoop against a real provider: events, a tool call, result(), the request's prompt and tools", async () => {
    fake.enqueue({ blocks: [{ type: "toolCall", name: "echo", arguments: { text: "hi" } }] }, { blocks: [{ type: "text", text: "done" }] });
    const before = fake.requests.length;
    const context = { messages: [{ role: "system", content: "be brief", timestamp: 0 }], tools: [echo] };
    const stream = core.agentLoop([user("go")], context, config);
    const types: string[] = [];
    let update: Rec | undefined;
    for await (const e of stream) {
      types.push(e.type);
      if (e.type === "message_update" && e.assistantMessageEvent.type === "text_delta") update = e;
    }
    const added = (await stream.result()) as Rec[];
    expect(added.map((m) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(added[0]!.toolsAdded.map((t: Rec) => t.name)).toEqual(["echo"]);
    expect(added[3]!.content[0].text).toBe("echo:hi");
    expect(added[4]!.content[0].text).toBe("done");
    expect(update!.message.content[0].text).toBe("done");
    expect(types.slice(0, 8)).toEqual(["agent_start", "turn_start", "message_start", "message_end", "message_start", "message_end", "message_start", "message_update"]);
    expect(types.filter((t) => t === "tool_execution_end").length).toBe(1);
    expect(types.at(-1)).toBe("agent_end");
    const body = fake.requests[before]!.body as Rec;
    expect(body.system.map((s: Rec) => s.text).join("")).toContain("be brief");
    expect(body.tools.map((t: Rec) => t.name)).toEqual(["echo"]);
    expect(fake.requests[before]!.headers["x-api-key"]).toBe("k");
  });

  test("a custom stream function gets the transcript; hooks block and rewrite calls; follow-ups continue the run", async () => {
    const seen: Rec[] = [];
    let n = 0;
    const streamFn = (_m: Rec, ctx: Rec, options: Rec) => {
      seen.push({ ctx, options });
      const reply = n++ === 0
        ? { role: "assistant", content: [{ type: "toolCall", id: "c1", name: "echo", arguments: { text: "x" } }, { type: "toolCall", id: "c2", name: "echo", arguments: { text: "y" } }], stopReason: "toolUse" }
        : { role: "assistant", content: [{ type: "text", text: `r${n}` }], stopReason: "stop" };
      const message = { ...reply, api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 };
      return { async *[Symbol.asyncIterator]() { yield { type: "start", partial: message }; yield { type: "done", reason: message.stopReason, message }; }, result: async () => message };
    };
    let followed = false;
    const events: Rec[] = [];
    const added = await core.runAgentLoop([user("go")], { messages: [], tools: [echo] }, {
      ...config,
      reasoning: "high",
      beforeToolCall: async (c: Rec) => (c.args.text === "y" ? { block: true, reason: "no y" } : undefined),
      afterToolCall: async (c: Rec) => ({ content: [{ type: "text", text: `after:${c.result.content[0].text}` }] }),
      getFollowUpMessages: async () => (followed ? [] : ((followed = true), [user("more")])),
    }, (e: Rec) => void events.push(e), undefined, streamFn);
    expect(seen[0]!.ctx.messages.map((m: Rec) => m.role)).toEqual(["system", "user"]);
    expect(seen[0]!.options).toMatchObject({ apiKey: "k", reasoning: "high" });
    const results = added.filter((m: Rec) => m.role === "toolResult");
    expect(results.map((r: Rec) => [r.content[0].text, r.isError])).toEqual([["after:echo:x", false], ["no y", true]]);
    expect(added.filter((m: Rec) => m.role === "user").map((m: Rec) => m.content)).toEqual(["go", "more"]);
    expect(seen.length).toBe(3);
    expect(added.at(-1).thinkingLevel).toBe("high");
  });

  test("runToolCall: unknown tool, bad arguments, abort, and a call through the hooks", async () => {
    const base = { tools: [echo], assistantMessage: {}, context: { messages: [] } };
    const call = (args: Rec, name = "echo") => ({ type: "toolCall", id: "t", name, arguments: args });
    expect((await core.runToolCall(call({}, "nope"), base)).result.content[0].text).toBe("Tool nope not found");
    const bad = await core.runToolCall(call({ text: { a: 1 } }), base);
    expect(bad.isError).toBe(true);
    // A number for a string is coerced, as the reference's loop coerces it.
    expect((await core.runToolCall(call({ text: 3 }), base)).result.content[0].text).toBe("echo:3");
    const ac = new AbortController();
    ac.abort();
    expect((await core.runToolCall(call({ text: "a" }), { ...base, signal: ac.signal })).result.content[0].text).toBe("Operation aborted");
    const ok = await core.runToolCall(call({ text: "a" }), { ...base, afterToolCall: async () => ({ isError: true }) });
    expect([ok.result.content[0].text, ok.result.details, ok.isError, typeof ok.durationMs]).toEqual(["echo:a", { n: 1 }, true, "number"]);
  });

  test("agentLoopContinue refuses an empty context and one ending with an assistant message", () => {
    expect(() => core.agentLoopContinue({ messages: [] }, config)).toThrow("Cannot continue: no messages in context");
    expect(() => core.agentLoopContinue({ messages: [{ role: "assistant", content: [] }] }, config)).toThrow("Cannot continue from message role: assistant");
  });

  test("setDefaultStreamFn replaces pion's providers for Agents made without a streamFn; undefined restores them", async () => {
    let called = 0;
    core.setDefaultStreamFn!(() => {
      called++;
      const message = { role: "assistant", content: [{ type: "text", text: "from default" }], api: "x", provider: "x", model: "x", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 };
      return { async *[Symbol.asyncIterator]() {}, result: async () => message };
    });
    try {
      const agent = new core.Agent({ initialState: { systemPrompt: "s", model } });
      await agent.prompt("hi");
      expect([called, agent.state.messages.map((m: Rec) => m.role).join(","), agent.state.systemPrompt]).toEqual([1, "system,user,assistant", "s"]);
    } finally {
      core.setDefaultStreamFn!(undefined);
    }
  });

  // The reference's loop and pion's, driven by the same scripted stream function and config.
  const zero = { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
  const reply = (content: Rec[], stopReason = content.some((c) => c.type === "toolCall") ? "toolUse" : "stop") => ({ content, stopReason });
  async function both(replies: Rec[], make: () => Rec, context: () => Rec = () => ({ messages: [], tools: [echo] })) {
    const ref = await import(join(REF!, "../pi-agent-core/dist/index.js"));
    const ai = await import(join(REF!, "../pi-ai/dist/index.js"));
    const run = async (loop: Fn) => {
      let n = 0;
      const streamFn = () => {
        const s = ai.createAssistantMessageEventStream();
        const r = replies[Math.min(n++, replies.length - 1)]!;
        const message = { role: "assistant", content: r.content, api: "x", provider: "x", model: "x", usage: zero, stopReason: r.stopReason, timestamp: 2 };
        queueMicrotask(() => {
          s.push({ type: "start", partial: { ...message, content: [] } });
          s.push({ type: "done", reason: message.stopReason, message });
        });
        return s;
      };
      const stream = loop([user("go")], context(), { ...config, ...make() }, undefined, streamFn);
      const events: string[] = [];
      for await (const e of stream) events.push(e.type === "message_start" || e.type === "message_end" ? `${e.type}:${e.message.role}` : e.type === "tool_execution_end" ? `${e.type}:${e.isError}` : e.type);
      const added = (await stream.result()) as Rec[];
      return {
        events,
        added: added.map((m) => [m.role, m.role === "toolResult" ? [m.content[0]?.text?.slice(0, 12), m.isError] : m.role === "system" ? (m.toolsAdded ?? []).map((t: Rec) => t.name) : m.content]),
      };
    };
    const [mine, theirs] = [await run(core.agentLoop), await run(ref.agentLoop)];
    expect(mine).toEqual(theirs);
    return mine;
  }
  const call = (text: string, id = `c-${text}`) => ({ type: "toolCall", id, name: "echo", arguments: { text } });

  (REF ? test : test.skip)("as the reference's: a tool turn, then a final reply", async () => {
    const r = await both([reply([call("x")]), reply([{ type: "text", text: "end" }])], () => ({}));
    expect(r.added.map((m) => m[0])).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
  });

  (REF ? test : test.skip)("as the reference's: steering after a tool turn, follow-ups when the run would stop", async () => {
    await both([reply([call("x")]), reply([{ type: "text", text: "a" }]), reply([{ type: "text", text: "b" }])], () => {
      let s = 0;
      let f = 0;
      return { getSteeringMessages: async () => (s++ === 1 ? [user("steer")] : []), getFollowUpMessages: async () => (f++ === 0 ? [user("follow")] : []) };
    });
  });

  (REF ? test : test.skip)("as the reference's: blocked calls, afterToolCall overrides, in parallel and one at a time", async () => {
    for (const toolExecution of ["parallel", "sequential"]) {
      const r = await both([reply([call("a"), call("b")]), reply([{ type: "text", text: "end" }])], () => ({
        toolExecution,
        beforeToolCall: async (c: Rec) => (c.args.text === "b" ? { block: true, reason: "no b" } : undefined),
        afterToolCall: async (c: Rec) => ({ content: [{ type: "text", text: `after ${c.result.content[0].text}` }], isError: true }),
      }));
      expect(r.events.indexOf("message_start:toolResult") < r.events.lastIndexOf("tool_execution_end:true")).toBe(toolExecution === "sequential");
    }
  });

  (REF ? test : test.skip)("as the reference's: a terminating batch ends the run; finishTurn can end it; a cut-off reply's calls do not run", async () => {
    const stopper = { ...echo, name: "echo", execute: async () => ({ content: [{ type: "text", text: "stop" }], details: {}, terminate: true }) };
    const terminated = await both([reply([call("x")]), reply([{ type: "text", text: "never" }])], () => ({}), () => ({ messages: [], tools: [stopper] }));
    expect(terminated.added.at(-1)![0]).toBe("toolResult");
    const ended = await both([reply([call("x")]), reply([{ type: "text", text: "never" }])], () => ({ finishTurn: async () => ({ action: "end" }) }));
    expect(ended.events.at(-2)).toBe("turn_end");
    const cut = await both([reply([call("x")], "length"), reply([{ type: "text", text: "end" }])], () => ({}));
    expect(cut.events).toContain("tool_execution_end:true");
  });

  (REF ? test : test.skip)("a transcript's system messages replay into the reference's prompt and tools", async () => {
    const ai = await import(join(REF!, "../pi-ai/dist/index.js"));
    const t = await import("../../../src/extensions/surface/agent-transcript.ts");
    const tool = (name: string, d = "d") => ({ name, description: d, parameters: { type: "object" } });
    const messages = [
      { role: "system", content: "base", sections: { a: "<a>1</a>", b: "<b>2</b>" }, toolsAdded: [tool("x"), tool("y")], timestamp: 5 },
      user("hi"),
      { role: "system", content: [{ type: "text", text: "more" }, { type: "text", text: "and more" }], sections: { a: null, c: "<c/>" }, toolsRemoved: [{ name: "x" }], toolsAdded: [tool("y", "changed")], timestamp: 9 },
    ];
    const parts = t.requestParts(messages);
    expect([parts.systemPrompt, parts.tools, parts.messages]).toEqual([ai.getCurrentSystemPrompt(messages), ai.getCurrentTools(messages), [user("hi")]]);
    const pending = [user("next")];
    expect(t.declareToolChanges(messages, [tool("z")], pending).map(({ timestamp: _t, ...m }: Rec) => m)).toEqual([{ role: "system", content: "", toolsAdded: [tool("z")], toolsRemoved: [{ name: "y" }] }, { role: "user", content: "next" }]);
  });

  (REF ? test : test.skip)("Agent as the reference's: transcript, events, a follow-up queued while it runs, reset", async () => {
    const ref = await import(join(REF!, "../pi-agent-core/dist/index.js"));
    const ai = await import(join(REF!, "../pi-ai/dist/index.js"));
    const run = async (AgentClass: new (o: Rec) => Rec) => {
      let n = 0;
      const streamFn = () => {
        const s = ai.createAssistantMessageEventStream();
        const content = n++ === 0 ? [call("x")] : [{ type: "text", text: `r${n}` }];
        const message = { role: "assistant", content, api: "x", provider: "x", model: "x", usage: zero, stopReason: n === 1 ? "toolUse" : "stop", timestamp: 2 };
        queueMicrotask(() => {
          s.push({ type: "start", partial: { ...message, content: [] } });
          s.push({ type: "done", reason: message.stopReason, message });
        });
        return s;
      };
      const agent = new AgentClass({ initialState: { systemPrompt: "sys", model, tools: [echo] }, streamFn });
      const events: string[] = [];
      agent.subscribe((e: Rec) => {
        events.push(e.type);
        if (e.type === "tool_execution_start") agent.followUp(user("later"));
      });
      await agent.prompt("go");
      const out = { events, roles: agent.state.messages.map((m: Rec) => m.role), prompt: agent.state.systemPrompt, streaming: agent.state.isStreaming, queued: agent.hasQueuedMessages() };
      agent.reset();
      return { ...out, afterReset: agent.state.messages.map((m: Rec) => [m.role, m.content, (m.toolsAdded ?? []).map((t: Rec) => t.name)]) };
    };
    expect(await run(core.Agent)).toEqual(await run(ref.Agent));
  });

  (REF ? test : test.skip)("streamProxy reads a proxy's events as the reference's does", async () => {
    const ref = await import(join(REF!, "../pi-agent-core/dist/index.js"));
    const seen: Rec[] = [];
    const events = [
      { type: "start" },
      { type: "text_start", contentIndex: 0 },
      { type: "text_delta", contentIndex: 0, delta: "he" },
      { type: "text_delta", contentIndex: 0, delta: "llo" },
      { type: "text_end", contentIndex: 0, contentSignature: "sig" },
      { type: "toolcall_start", contentIndex: 1, id: "t1", toolName: "echo" },
      { type: "toolcall_delta", contentIndex: 1, delta: '{"text":"x"}' },
      { type: "toolcall_end", contentIndex: 1, toolCall: { type: "toolCall", id: "t1", name: "echo", arguments: { text: "x" } } },
      { type: "done", reason: "toolUse", usage: { ...zero, input: 3, output: 4, totalTokens: 7 } },
    ];
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: async (req) => {
        seen.push({ auth: req.headers.get("authorization"), body: await req.json() });
        if (new URL(req.url).searchParams.has("x")) return Response.json({ error: "nope" }, { status: 403 });
        return new Response(events.map((e) => `data: ${JSON.stringify(e)}\n\n`).join(""), { headers: { "content-type": "text/event-stream" } });
      },
    });
    try {
      const run = async (fn: Fn, url = `http://127.0.0.1:${server.port}`) => {
        const s = fn(model, { messages: [user("hi")] }, { proxyUrl: url, authToken: "tok", reasoning: "low", temperature: 0.5 });
        const types: string[] = [];
        for await (const e of s) types.push(e.type);
        const { timestamp: _t, durationMs, ...final } = await s.result();
        expect(typeof durationMs).toBe("number");
        return { types, final };
      };
      const [mine, theirs] = [await run(core.streamProxy), await run(ref.streamProxy)];
      expect(mine).toEqual(theirs);
      expect(mine.final.content[0].text).toBe("hello");
      expect(seen[0]).toEqual(seen[1]!);
      expect(seen[0]!.auth).toBe("Bearer tok");
      const refused = await run(core.streamProxy, `http://127.0.0.1:${server.port}/?x=1#`);
      expect([refused.types, refused.final.stopReason, refused.final.errorMessage]).toEqual([["error"], "error", "The proxy refused the request: nope"]);
    } finally {
      server.stop(true);
    }
  });
  (REF ? test : test.skip)("streamProxy shows a tool call's arguments so far at each delta, as the reference's does", async () => {
    const ref = await import(join(REF!, "../pi-agent-core/dist/index.js"));
    const pieces = ['{"path":"src/', 'a.ts","n":1', "2", ',"deep":{"k":[1,', "tr", "ue]}}"];
    const events = [
      { type: "start" },
      { type: "toolcall_start", contentIndex: 0, id: "t1", toolName: "read" },
      ...pieces.map((delta) => ({ type: "toolcall_delta", contentIndex: 0, delta })),
      { type: "toolcall_end", contentIndex: 0, toolCall: { type: "toolCall", id: "t1", name: "read", arguments: { path: "src/a.ts", n: 12, deep: { k: [1, true] } } } },
      { type: "done", reason: "toolUse", usage: zero },
    ];
    // One event per chunk, a pause between them: each event is read before the next arrives.
    const server = Bun.serve({
      port: 0,
      hostname: "127.0.0.1",
      fetch: () => {
        let i = 0;
        const body = new ReadableStream({
          async pull(c) {
            if (i === events.length) return c.close();
            await Bun.sleep(25);
            c.enqueue(new TextEncoder().encode(`data: ${JSON.stringify(events[i++])}\n\n`));
          },
        });
        return new Response(body, { headers: { "content-type": "text/event-stream" } });
      },
    });
    try {
      const run = async (fn: Fn) => {
        const s = fn(model, { messages: [user("hi")] }, { proxyUrl: `http://127.0.0.1:${server.port}`, authToken: "tok" });
        const seen: unknown[] = [];
        for await (const e of s) if (e.type === "toolcall_delta") seen.push(structuredClone(e.partial.content[0].arguments));
        return seen;
      };
      const mine = await run(core.streamProxy);
      expect(mine).toEqual(await run(ref.streamProxy));
      expect(mine.at(-1)).toEqual({ path: "src/a.ts", n: 12, deep: { k: [1, true] } });
    } finally {
      server.stop(true);
    }
  });
});

describe("pi-coding-agent's createAgentSession", () => {
  test("a prompt with a tool call in an in-memory session: events, messages, session entries", async () => {
    setModelAuth(async () => ({ apiKey: "session-key" }));
    const cwd = mkdtempSync(join(tmpdir(), "pion-as-"));
    Bun.write(join(cwd, "note.txt"), "the note says 42\n");
    fake.enqueue({ blocks: [{ type: "toolCall", name: "read", arguments: { path: "note.txt" } }] }, { blocks: [{ type: "text", text: "It says 42." }] });
    const before = fake.requests.length;
    const loader = { getSystemPrompt: () => "You answer asides.", getAppendSystemPrompt: () => ["Be short."], getAgentsFiles: () => ({ agentsFiles: [] }), getExtensions: () => ({ extensions: [], errors: [], runtime: ca.createExtensionRuntime() }) };
    const { session, extensionsResult } = await ca.createAgentSession({ cwd, sessionManager: ca.SessionManager.inMemory(cwd), model, thinkingLevel: "high", tools: ["read", "bash"], resourceLoader: loader });
    expect(extensionsResult.extensions).toEqual([]);
    expect([session.thinkingLevel, session.getActiveToolNames(), session.model.id]).toEqual(["off", ["read", "bash"], "fake-model"]);
    const types: string[] = [];
    session.subscribe((e: Rec) => types.push(e.type));
    await session.prompt("what does note.txt say?", { source: "extension" });
    expect(session.messages.map((m: Rec) => m.role)).toEqual(["system", "user", "assistant", "toolResult", "assistant"]);
    expect(session.messages[3].content[0].text).toContain("the note says 42");
    expect(session.getLastAssistantText()).toBe("It says 42.");
    expect(types).toContain("tool_execution_end");
    expect(types.slice(-2)).toEqual(["agent_end", "agent_settled"]);
    const body = fake.requests[before]!.body as Rec;
    const system = body.system.map((s: Rec) => s.text).join("");
    expect(system.startsWith("You answer asides.")).toBe(true);
    expect(system).toContain("Be short.");
    expect(body.tools.map((t: Rec) => t.name)).toEqual(["read", "bash"]);
    expect(fake.requests[before]!.headers["x-api-key"]).toBe("session-key");
    const entries = session.sessionManager.getEntries() as Rec[];
    expect(entries.map((e) => e.type)).toEqual(["model_change", "thinking_level_change", "message", "message", "message", "message"]);
    expect(entries[2]!.parentId).toBe(entries[1]!.id);
    expect(entries[2]!.message.content[0].text).toBe("what does note.txt say?");
    const usage = session.getContextUsage();
    expect([usage.contextWindow, usage.tokens > 0]).toEqual([100000, true]);
    expect(session.getSessionStats()).toMatchObject({ userMessages: 1, assistantMessages: 2, toolCalls: 1, toolResults: 1, sessionId: session.sessionId });
    await session.setModel({ ...model, id: "thinker", reasoning: true });
    session.setThinkingLevel("low");
    expect([types.at(-1), session.thinkingLevel]).toEqual(["thinking_level_changed", "low"]);
    await session.setModel(model);
    expect(session.thinkingLevel).toBe("off");
    expect(session.sessionManager.getBranch().slice(-4).map((e: Rec) => e.type)).toEqual(["model_change", "thinking_level_change", "model_change", "thinking_level_change"]);
    session.dispose();
    expect(() => session.compact()).toThrow("AgentSession.compact is not available");
  });

  test("seeded messages, steering while streaming, unknown tool names, the unbound extension runtime", async () => {
    // As in the reference: `tools` is an allowlist, a name no tool has yet waits for an extension to register it.
    expect((await ca.createAgentSession({ model, tools: ["nope", "read"] })).session.getActiveToolNames()).toEqual(["read"]);
    expect((await ca.createAgentSession({ model, tools: ["-bash", "+ls"] })).session.getActiveToolNames()).toEqual(["read", "edit", "write", "ls"]);
    await expect(ca.createAgentSession({ model, tools: ["read", "+ls"] })).rejects.toThrow("Invalid tools option");
    fake.enqueue({ blocks: [{ type: "text", text: "first" }], chunkDelayMs: 30 }, { blocks: [{ type: "text", text: "second" }] });
    const { session } = await ca.createAgentSession({ model, tools: [] });
    session.agent.state.messages = [user("earlier"), { role: "assistant", content: [{ type: "text", text: "ok" }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 1 }];
    const queues: Rec[] = [];
    session.subscribe((e: Rec) => e.type === "queue_update" && queues.push(e));
    const done = session.prompt("now");
    await Bun.sleep(20);
    await expect(session.prompt("busy")).rejects.toThrow("Specify streamingBehavior");
    await session.prompt("also", { streamingBehavior: "followUp" });
    await done;
    expect(queues.map((q) => q.followUp)).toEqual([["also"], []]);
    // The seeded transcript lost the system message: the session's prompt and the tools' declaration come back.
    expect(session.messages.map((m: Rec) => m.role).join(",")).toBe("system,user,assistant,user,assistant,user,assistant");
    expect(session.systemPrompt).toContain("You are pion");
    const sent = fake.requests.at(-1)!.body as Rec;
    expect(sent.system.map((x: Rec) => x.text).join("")).toContain("You are pion");
    expect(sent.messages.length).toBe(5);
    expect(session.getLastAssistantText()).toBe("second");
    const rt = ca.createExtensionRuntime();
    expect(() => rt.sendMessage()).toThrow("Extension runtime not initialized");
    rt.registerProvider("p", {});
    expect(rt.pendingProviderRegistrations.length).toBe(1);
  });

  test("a prompt's and a follow-up's images are fitted as pion's session fits them (scaled, with the note); the queue clears", async () => {
    const { gradientPng, imageSize } = await import("../../support/images.ts");
    const big = Buffer.from(gradientPng(3000, 2000)).toString("base64");
    const eyes = { ...model, input: ["text", "image"] };
    fake.enqueue({ blocks: [{ type: "text", text: "first" }], chunkDelayMs: 30 }, { blocks: [{ type: "text", text: "second" }] });
    const { session } = await ca.createAgentSession({ model: eyes, tools: [] });
    const queues: Rec[] = [];
    session.subscribe((e: Rec) => e.type === "queue_update" && queues.push(e));
    const from = fake.requests.length;
    const done = session.prompt("look", { images: [{ type: "image", data: big, mimeType: "image/png" }] });
    await Bun.sleep(20);
    await session.prompt("and this", { streamingBehavior: "followUp", images: [{ type: "image", data: big, mimeType: "image/png" }] });
    await done;
    const users = (fake.requests[from + 1]!.body as Rec).messages.filter((m: Rec) => m.role === "user");
    const note = "[Image: original 3000x2000, displayed at 2000x1333. Multiply coordinates by 1.50 to map to original image.]";
    for (const [i, text] of ["look", "and this"].entries()) {
      const blocks = users[i].content as Rec[];
      expect(blocks[0]).toEqual({ type: "text", text: `${text}\n\n${note}` });
      expect(imageSize(blocks[1].source.data)).toEqual([2000, 1333]);
    }
    expect(queues.map((q) => q.followUp)).toEqual([["and this"], []]);
  });

  test("custom tools run with the session's folder as ctx.cwd, beside the built-ins they are added to", async () => {
    const cwd = mkdtempSync(join(tmpdir(), "pion-as-"));
    const where = { ...echo, name: "where", execute: async (_id: string, _p: unknown, _s: unknown, _u: unknown, ctx: Rec) => ({ content: [{ type: "text", text: `at ${ctx.cwd}` }], details: {} }) };
    fake.enqueue({ blocks: [{ type: "toolCall", name: "where", arguments: { text: "?" } }] }, { blocks: [{ type: "text", text: "ok" }] });
    const { session } = await ca.createAgentSession({ cwd, model, customTools: [where] });
    expect(session.getActiveToolNames()).toEqual(["read", "bash", "edit", "write", "where"]);
    await session.prompt("where are you?");
    expect(session.messages.find((m: Rec) => m.role === "toolResult").content[0].text).toBe(`at ${cwd}`);
  });

  test("SessionManager.inMemory appends under its leaf; open appends to the file", () => {
    const sm = ca.SessionManager.inMemory("/w");
    const a = sm.appendMessage(user("x"));
    const b = sm.appendModelChange("p", "m");
    expect(sm.getLeafId()).toBe(b);
    expect(sm.getEntry(b).parentId).toBe(a);
    expect(sm.getBranch().map((e: Rec) => e.type)).toEqual(["message", "model_change"]);
    const file = join(mkdtempSync(join(tmpdir(), "pion-sm-")), "s.jsonl");
    const original = readFileSync(join(import.meta.dir, "../../fixtures/reference-v3-compaction.jsonl"), "utf8");
    writeFileSync(file, original);
    const id = ca.SessionManager.open(file).appendMessage(user("more"));
    expect(readFileSync(file, "utf8")).toStartWith(original);
    expect(JSON.parse(readFileSync(file, "utf8").trim().split("\n").at(-1)!)).toMatchObject({ type: "message", id, message: { content: "more" } });
  });
});
