import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, promptToResult, runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream } from "../support/provider-scenarios.ts";

// A models.json custom provider on the reference's own wire API, pointed at the fake's pi-messages endpoint.
function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  const providers = {
    gw: {
      baseUrl: `${fake.url}/pi`,
      api: "pi-messages",
      apiKey: "gw-key",
      headers: { "x-team": "t1" },
      models: [{ id: "gw-model", name: "GW Model", reasoning: true, contextWindow: 100000, maxTokens: 8000 }],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeSettings(dirs.home, { retry: { maxRetries: 1, baseDelayMs: 20 } });
  return { fake, dirs };
}

type Body = { model: string; context: { messages: Record<string, unknown>[] }; options: Record<string, unknown> };
const bodyOf = (r: FakeRequest) => r.body as Body;
const ARGS = ["--mode", "rpc", "--model", "gw/gw-model"];

describe("pi-messages: a models.json provider on the reference's wire API", () => {
  test.concurrent("text and a tool call round trip: one POST per turn of {model, context, options}, the events back as pion's", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha beta");
    fake.enqueue(
      { blocks: [{ type: "text", text: ["Let me ", "look."] }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" }, fragments: 3 }], usage: { input: 30, output: 8, billing: { cost: 0.25 } } },
      { blocks: [{ type: "thinking", thinking: ["it says ", "alpha"], signature: "sig-1" }, { type: "text", text: "It says alpha beta." }] },
    );
    const p = new Pion({ ...dirs, args: [...ARGS, "--thinking", "high"] });
    const recs = await promptToResult(p, "what is in a.txt?");

    const ends = recs.filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message);
    expect(ends.map((m) => [m.stopReason, m.api, m.provider, m.model])).toEqual([
      ["toolUse", "pi-messages", "gw", "gw-model"],
      ["stop", "pi-messages", "gw", "gw-model"],
    ]);
    expect(ends[0].content).toEqual([{ type: "text", text: "Let me look." }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }]);
    expect(ends[1].content).toEqual([{ type: "thinking", thinking: "it says alpha", thinkingSignature: "sig-1" }, { type: "text", text: "It says alpha beta." }]);
    expect(ends[0].responseId).toStartWith("resp_");
    // The server's token counts, and its cost total (it prices the upstream model; models.json has no prices here).
    expect(ends[0].usage).toMatchObject({ input: 30, output: 8, totalTokens: 38, cost: { total: 0.25 } });
    const tool = recs.find((r) => r.type === "tool_execution_end");
    expect(tool?.isError).toBe(false);
    const deltas = recs.filter((r) => r.type === "message_update").map((r) => r.assistantMessageEvent.type);
    expect(deltas.slice(0, 7)).toEqual(["text_start", "text_delta", "text_delta", "text_end", "toolcall_start", "toolcall_delta", "toolcall_delta"]);
    expect(recs.find((r) => r.type === "prompt_result")).toMatchObject({ stopReason: "stop", aborted: false });

    expect(fake.requests.map((r) => [r.method, r.path])).toEqual([
      ["POST", "/pi/messages"],
      ["POST", "/pi/messages"],
    ]);
    const { headers } = fake.requests[0]!;
    expect([headers.authorization, headers.accept, headers["content-type"], headers["x-team"]]).toEqual(["Bearer gw-key", "text/event-stream", "application/json", "t1"]);
    expect(headers["user-agent"]).toMatch(/^pi\/\S+ \((?:linux|darwin); bun\/[\d.]+; \w+\)$/);

    const first = bodyOf(fake.requests[0]!);
    expect(first.model).toBe("gw-model");
    expect(Object.keys(first.options)).toEqual(["reasoning", "sessionId"]);
    expect(first.options.reasoning).toBe("high");
    const state = await p.request({ type: "get_state" });
    expect(first.options.sessionId).toBe(state.data.sessionId);
    // The reference's transcript: the system prompt and tools as a leading system message.
    const [system, user] = first.context.messages;
    expect(Object.keys(system!)).toEqual(["role", "content", "toolsAdded", "timestamp"]);
    expect(system).toMatchObject({ role: "system", timestamp: 0 });
    expect(String(system!.content)).toContain("read");
    expect((system!.toolsAdded as { name: string }[]).map((t) => t.name)).toContain("read");
    expect(user).toMatchObject({ role: "user", content: [{ type: "text", text: "what is in a.txt?" }] });

    // The second turn sends the stored messages as they are: the assistant's tool call and the read's result.
    const second = bodyOf(fake.requests[1]!).context.messages;
    expect(second).toHaveLength(4);
    expect(second[2]).toMatchObject({ role: "assistant", api: "pi-messages", stopReason: "toolUse", content: ends[0].content });
    expect(second[3]).toMatchObject({ role: "toolResult", toolCallId: "call_1", toolName: "read", isError: false, content: [{ type: "text", text: expect.stringContaining("alpha beta") }] });
    await p.close();
    await fake.stop();
  });

  test.concurrent("an error event from the server ends the turn: stopReason error, the server's message, the content so far", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ kind: "stream_error", afterBlocks: [{ type: "text", text: "par" }], message: "upstream exploded" });
    const p = new Pion({ ...dirs, args: ARGS });
    const recs = await promptToResult(p, "hi");
    const end = recs.findLast((r) => r.type === "message_end")!.message;
    expect({ stopReason: end.stopReason, errorMessage: end.errorMessage, content: end.content }).toEqual({ stopReason: "error", errorMessage: "upstream exploded", content: [{ type: "text", text: "par" }] });
    expect(recs.find((r) => r.type === "prompt_result")).toMatchObject({ stopReason: "error", aborted: false, errorMessage: "upstream exploded" });
    expect(recs.some((r) => r.type === "auto_retry_start")).toBe(false);
    expect(fake.requests).toHaveLength(1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("an HTTP error reads '<status> <statusText>: <error.message> (<error.code>)'; a 503 is retried", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ kind: "http_error", status: 401, message: "bad key", errorType: "unauthorized" });
    const p = new Pion({ ...dirs, args: ARGS });
    const recs = await promptToResult(p, "hi");
    expect(recs.findLast((r) => r.type === "message_end")!.message).toMatchObject({ stopReason: "error", errorMessage: "401 Unauthorized: bad key (unauthorized)", content: [] });
    fake.enqueue({ kind: "http_error", status: 503, message: "busy" }, { blocks: [{ type: "text", text: "fine" }] });
    const again = await promptToResult(p, "again");
    expect(again.filter((r) => r.type === "auto_retry_start").map((r) => r.errorMessage)).toEqual(["503 Service Unavailable: busy"]);
    expect(again.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "fine" }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort mid-stream", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ARGS });
    await abortedMidStream(p, fake);
    await p.close();
    await fake.stop();
  });

  test.concurrent("the provider is no longer skipped: it is listed, with no warning", async () => {
    const { fake, dirs } = setup();
    const r = await runPion(["--list-models", "gw-model"], dirs);
    expect(r.stdout).toContain("gw-model");
    expect(r.stderr).not.toContain("does not implement");
    await fake.stop();
  });
});

test.concurrent("an extension's provider on pi-ai/compat's piMessagesApi: the session's transcript goes to the server as given", async () => {
  await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "hi from the gateway" }] }] });
  const dirs = tempDirs();
  const ext = join(import.meta.dir, "../fixtures/extensions/pi-messages-api.ts");
  const r = await runPion(["-p", "hello there", "--model", "extgw/ext-model", "-e", ext, "--no-session"], { ...dirs, env: { PIM_BASE_URL: `${fake.url}/pi` } });
  expect(r.stdout.trim()).toBe("hi from the gateway");
  expect(r.code).toBe(0);
  const req = fake.requests[0]!;
  expect([req.path, req.headers.authorization]).toEqual(["/pi/messages", "Bearer ext-key"]);
  const body = bodyOf(req);
  expect(body.model).toBe("ext-model");
  expect(body.options.temperature).toBe(0.5);
  expect(body.context.messages.map((m) => m.role)).toEqual(["system", "user"]);
  expect(body.context.messages[1]).toMatchObject({ content: [{ type: "text", text: "hello there" }] });
});
