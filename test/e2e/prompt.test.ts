import { describe, expect, test } from "bun:test";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  return { fake, ...dirs };
}

describe("prompt through the Anthropic SDK", () => {
  test.concurrent("streams a text reply with the spec's events in order", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["Hello", " world"] }], usage: { input: 12, output: 4 } });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--provider", "fake", "--model", "fake-model", "--thinking", "off"] });
    const res = await p.request({ id: "req-1", type: "prompt", message: "Hi there" });
    expect(res).toEqual({ id: "req-1", type: "response", command: "prompt", success: true, data: { disposition: "started" } });
    await p.waitFor("prompt_result");
    const from = p.records.indexOf(res);
    expect(p.types(from + 1)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_update:text_start",
      "message_update:text_delta",
      "message_update:text_delta",
      "message_update:text_end",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
      "prompt_result",
    ]);
    const recs = p.records.slice(from + 1);
    expect(recs[2]!.message).toMatchObject({ role: "user", content: [{ type: "text", text: "Hi there" }] });
    expect(recs[6]).toEqual({ type: "message_update", assistantMessageEvent: { type: "text_delta", contentIndex: 0, delta: "Hello" } });
    expect(recs[8]).toEqual({ type: "message_update", assistantMessageEvent: { type: "text_end", contentIndex: 0, content: "Hello world" } });
    const final = recs[9]!.message;
    expect(final).toMatchObject({
      role: "assistant",
      content: [{ type: "text", text: "Hello world" }],
      api: "anthropic-messages",
      provider: "fake",
      model: "fake-model",
      stopReason: "stop",
      usage: { input: 12, output: 4, cacheRead: 0, cacheWrite: 0, totalTokens: 16 },
    });
    expect(final.usage.cost.total).toBeCloseTo((12 * 3 + 4 * 15) / 1e6, 12);
    expect(recs[10]).toMatchObject({ type: "turn_end", message: final, toolResults: [] });
    expect(recs[11]).toMatchObject({ type: "agent_end", willRetry: false });
    expect(recs[11]!.messages.map((m: { role: string }) => m.role)).toEqual(["user", "assistant"]);
    expect(recs[12]).toMatchObject({ type: "agent_settled", aborted: false });

    const body = fake.requests[0]!.body as Record<string, unknown>;
    expect(body.model).toBe("fake-model");
    expect(body.max_tokens).toBe(8192);
    expect(body.messages).toEqual([{ role: "user", content: [{ type: "text", text: "Hi there", cache_control: { type: "ephemeral" } }] }]);
    expect(fake.requests[0]!.headers["x-api-key"]).toBe("test-key");

    const msgs = await p.request({ type: "get_messages" });
    expect(msgs.data.messages).toEqual([recs[3]!.message, final]);
    expect((await p.request({ type: "get_last_assistant_text" })).data).toEqual({ text: "Hello world" });
    const st = await p.request({ type: "get_state" });
    expect(st.data).toMatchObject({ isStreaming: false, messageCount: 2, model: { id: "fake-model", provider: "fake", api: "anthropic-messages" } });
    expect(await p.close()).toBe(0);
    await fake.stop();
  });

  test.concurrent("a provider error ends the turn with stopReason error and the process keeps serving", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ kind: "http_error", status: 400, message: "prompt is malformed", errorType: "invalid_request_error" });
    fake.enqueue({ blocks: [{ type: "text", text: "recovered" }] });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "prompt", message: "one" });
    const end = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant");
    expect(end.message.stopReason).toBe("error");
    expect(end.message.errorMessage).toContain("400");
    expect(end.message.errorMessage).toContain("prompt is malformed");
    const settled = await p.waitFor("agent_settled");
    const n = p.records.indexOf(settled);
    await p.request({ type: "prompt", message: "two" });
    const ok = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant", n);
    expect(ok.message.content).toEqual([{ type: "text", text: "recovered" }]);
    // the failed attempt is not replayed to the provider
    await p.waitFor("agent_settled", n);
    const second = fake.requests[1]!.body as { messages: { role: string }[] };
    expect(second.messages.map((m) => m.role)).toEqual(["user", "user"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a prompt while streaming needs streamingBehavior; followUp queues it", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b", "c", "d"] }], chunkDelayMs: 60 });
    fake.enqueue({ blocks: [{ type: "text", text: "second" }] });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model"] });
    p.send({ type: "prompt", message: "first", id: "1" });
    p.send({ type: "prompt", message: "again", id: "2" });
    p.send({ type: "prompt", message: "later", streamingBehavior: "followUp", id: "3" });
    const r2 = await p.waitFor((r) => r.id === "2");
    expect(r2.success).toBe(false);
    expect(r2.error).toContain("streamingBehavior");
    expect(await p.waitFor((r) => r.id === "3")).toMatchObject({ success: true, data: { disposition: "queued" } });
    expect(await p.waitFor("queue_update")).toEqual({ type: "queue_update", steering: [], followUp: ["later"] });
    await p.waitFor("agent_settled");
    const texts = p.records.filter((r) => r.type === "message_end").map((r) => r.message.role);
    expect(texts).toEqual(["user", "assistant", "user", "assistant"]);
    expect(p.records.filter((r) => r.type === "agent_settled").length).toBe(1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("stdin EOF lets the running prompt finish before exit 0", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["slow", " reply"] }], chunkDelayMs: 50 });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model"] });
    p.send({ type: "prompt", message: "go" });
    const code = await p.close();
    expect(code).toBe(0);
    expect(p.records.at(-1)).toMatchObject({ type: "agent_settled", aborted: false });
    await fake.stop();
  });

  test.concurrent("abort stops a streaming reply and answers once idle", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b"] }], stallAfterChunks: 4 });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model"] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor((r) => r.type === "message_update");
    const ab = await p.request({ type: "abort" });
    expect(ab).toMatchObject({ command: "abort", success: true });
    const i = p.records.indexOf(ab);
    const end = p.records.findLast((r) => r.type === "message_end");
    expect(end!.message.stopReason).toBe("aborted");
    expect(p.records.findIndex((r) => r.type === "agent_settled")).toBeLessThan(i);
    expect(p.records.find((r) => r.type === "agent_settled")).toMatchObject({ type: "agent_settled", aborted: true });
    await p.close();
    await fake.stop();
  });
});

describe("prompt through the OpenAI SDK", () => {
  for (const [model, path] of [
    ["fake-openai/fake-chat", "/v1/chat/completions"],
    ["fake-responses/fake-resp", "/v1/responses"],
  ] as const) {
    test.concurrent(`${model}: text, thinking and usage reach the client`, async () => {
      const { fake, home, cwd } = setup();
      fake.enqueue({ blocks: [{ type: "thinking", thinking: "hmm" }, { type: "text", text: ["Hi", " there"] }], usage: { input: 20, output: 7, cacheRead: 10 } });
      const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", model, "--thinking", "high"] });
      await p.request({ type: "prompt", message: "hello" });
      const end = await p.waitFor((r) => r.type === "message_end" && r.message.role === "assistant");
      expect(end.message.content).toMatchObject([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "Hi there" }]);
      expect(end.message.usage).toMatchObject({ input: 20, output: 7, cacheRead: 10, totalTokens: 37 });
      expect(end.message.stopReason).toBe("stop");
      expect(fake.requests[0]!.path).toBe(path);
      const body = fake.requests[0]!.body as Record<string, unknown>;
      expect(JSON.stringify(body)).toContain("high");
      await p.waitFor("agent_settled");
      await p.close();
      await fake.stop();
    });
  }

  test.concurrent("abort_and_prompt aborts the run and starts the new prompt", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b"] }], stallAfterChunks: 4 });
    fake.enqueue({ blocks: [{ type: "text", text: "fresh" }] });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model"] });
    await p.request({ type: "prompt", message: "first" });
    await p.waitFor((r) => r.type === "message_update");
    const r = await p.request({ type: "abort_and_prompt", message: "second" });
    expect(r).toMatchObject({ success: true, data: { disposition: "started" } });
    const settled = p.records.filter((x) => x.type === "agent_settled");
    expect(settled[0]).toMatchObject({ type: "agent_settled", aborted: true });
    await p.waitFor((x) => x.type === "agent_settled" && x.aborted === false);
    const users = p.records.filter((x) => x.type === "message_end" && x.message.role === "user").map((x) => x.message.content[0].text);
    expect(users).toEqual(["first", "second"]);
    expect(p.records.findLast((x) => x.type === "message_end")!.message.content).toEqual([{ type: "text", text: "fresh" }]);
    await p.close();
    await fake.stop();
  });
});

describe("signals", () => {
  test.concurrent("SIGTERM aborts the run, persists it, and exits; a second signal exits at once", async () => {
    const { fake, home, cwd } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["partial", " more"] }], stallAfterChunks: 4 });
    const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model"] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("message_update");
    const file = (await p.request({ type: "get_state" })).data.sessionFile;
    p.kill("SIGTERM");
    const code = await p.exited;
    expect(code).toBe(143);
    expect(p.records.find((r) => r.type === "agent_settled")).toMatchObject({ aborted: true });
    expect(p.records.at(-1)).toMatchObject({ type: "prompt_result", aborted: true });
    const q = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake-model", "--session", file] });
    const msgs = (await q.request({ type: "get_messages" })).data.messages;
    expect(msgs.map((m: { role: string; stopReason?: string }) => [m.role, m.stopReason])).toEqual([
      ["user", undefined],
      ["assistant", "aborted"],
    ]);
    await q.close();
    await fake.stop();
  });
});
