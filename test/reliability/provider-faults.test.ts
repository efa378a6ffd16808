/**
 * Provider faults during a run: HTTP status errors, dropped connections, stalls cut by
 * httpIdleTimeoutMs, SSE truncated inside an event, malformed JSON in a chunk, and a tool call
 * whose arguments are not JSON. Each must end in the right events (an assistant message with
 * stopReason "error" and an errorMessage, auto_retry_* when the fault is transient, an error
 * tool result), leave the session usable for the next prompt, and write nothing on stderr that
 * looks like an unhandled rejection or a stack trace.
 */
import { describe, expect, test } from "bun:test";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { encodeAnthropic, encodeCompletions, type Frame, type StreamPlan } from "../support/fake-provider/encoders.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const RETRY = { retry: { maxRetries: 1, baseDelayMs: 10 } };

function setup(settings: Record<string, unknown> = RETRY, model = "fake/fake-model") {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, settings);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model] });
  return { fake, p };
}

/** Sends a prompt and returns the records of its run, through agent_settled. */
async function run(p: Pion, message: string): Promise<Rec[]> {
  const from = p.records.length;
  const r = await p.request({ type: "prompt", message });
  expect(r.success).toBe(true);
  await p.waitFor("agent_settled", from);
  return p.records.slice(from);
}

const assistantEnds = (recs: Rec[]) => recs.filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message);
const ofType = (recs: Rec[], type: string) => recs.filter((r) => r.type === type);

/** The next prompt gets a normal answer. */
async function stillUsable(p: Pion, enqueue: (reply: FakeReply) => void) {
  enqueue({ blocks: [{ type: "text", text: "recovered fine" }] });
  const recs = await run(p, "are you there?");
  expect(assistantEnds(recs).map((m) => [m.stopReason, m.content])).toEqual([["stop", [{ type: "text", text: "recovered fine" }]]]);
  expect((await p.request({ type: "get_last_assistant_text" })).data).toEqual({ text: "recovered fine" });
}

const NOISE = /Unhandled|unhandledRejection|uncaught|panic|^\s+at .+[:(]\d+:\d+\)?$|^error: /im;

async function finish(p: Pion, fake: { stop(): unknown }) {
  expect(await p.close()).toBe(0);
  expect(p.stderr).not.toMatch(NOISE);
  await fake.stop();
}

/** A raw SSE server for faults the fake cannot script: each request takes the next body writer. */
function rawServer(script: ((ctl: ReadableStreamDefaultController<Uint8Array>) => Promise<void> | void)[]) {
  const requests: unknown[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req) {
      requests.push(await req.json().catch(() => null));
      const next = script.shift();
      if (!next) return new Response(JSON.stringify({ type: "error", error: { type: "api_error", message: "no script left" } }), { status: 500, headers: { "x-should-retry": "false" } });
      const body = new ReadableStream<Uint8Array>({ start: (ctl) => next(ctl) });
      return new Response(body, { headers: { "content-type": "text/event-stream" } });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, requests, script, stop: () => server.stop(true) };
}

const enc = new TextEncoder();
const plan = (text: string): StreamPlan => ({
  model: "fake-model",
  includeUsage: true,
  blocks: [{ type: "text", text: [text.slice(0, 4), text.slice(4)] }],
  usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0 },
  stopReason: "stop",
});
const whole = (frames: Frame[]) => (ctl: ReadableStreamDefaultController<Uint8Array>) => {
  for (const f of frames) ctl.enqueue(typeof f === "string" ? enc.encode(f) : f);
  ctl.close();
};

describe("provider faults", () => {
  for (const status of [400, 401]) {
    test.concurrent(`HTTP ${status}: an error message, no retry, session usable`, async () => {
      const { fake, p } = setup();
      fake.enqueue({ kind: "http_error", status, message: `fault ${status} here` });
      const recs = await run(p, "hi");
      const [msg] = assistantEnds(recs);
      // (no asymmetric matchers inside toMatchObject here: bun 1.4 writes them into the received object)
      expect(msg.stopReason).toBe("error");
      expect(msg.errorMessage).toContain(String(status));
      expect(msg.errorMessage).toContain(`fault ${status} here`);
      expect(ofType(recs, "auto_retry_start")).toEqual([]);
      expect(fake.requests.length).toBe(1);
      await stillUsable(p, (r) => fake.enqueue(r));
      await finish(p, fake);
    });
  }

  for (const status of [429, 500, 529]) {
    test.concurrent(`HTTP ${status}: retried once and the retry succeeds`, async () => {
      const { fake, p } = setup();
      fake.enqueue({ kind: "http_error", status }, { blocks: [{ type: "text", text: "second try" }] });
      const recs = await run(p, "hi");
      expect(assistantEnds(recs).map((m) => m.stopReason)).toEqual(["error", "stop"]);
      expect(assistantEnds(recs)[0].errorMessage).toContain(String(status));
      expect(ofType(recs, "auto_retry_start")).toEqual([{ type: "auto_retry_start", attempt: 1, maxAttempts: 1, delayMs: 10, errorMessage: expect.stringContaining(String(status)) }]);
      expect(ofType(recs, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: true, attempt: 1 }]);
      await stillUsable(p, (r) => fake.enqueue(r));
      await finish(p, fake);
    });
  }

  test.concurrent("HTTP 500 twice: retries run out with the final error; session usable", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 500, message: "first break" }, { kind: "http_error", status: 503, message: "second break" });
    const recs = await run(p, "hi");
    expect(assistantEnds(recs).map((m) => m.stopReason)).toEqual(["error", "error"]);
    expect(ofType(recs, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: false, attempt: 1, finalError: expect.stringContaining("second break") }]);
    expect(recs.at(-1)).toMatchObject({ type: "agent_settled" });
    await stillUsable(p, (r) => fake.enqueue(r));
    await finish(p, fake);
  });

  for (const model of ["fake/fake-model", "fake-openai/fake-chat"]) {
    test.concurrent(`${model}: a connection reset mid-stream is transient and retried`, async () => {
      const { fake, p } = setup(RETRY, model);
      fake.enqueue({ blocks: [{ type: "text", text: ["partial ", "text ", "then ", "gone"] }], disconnectAfterChunks: 3 }, { blocks: [{ type: "text", text: "whole" }] });
      const recs = await run(p, "hi");
      const ends = assistantEnds(recs);
      expect(ends.map((m) => [m.stopReason, m.errorMessage])).toEqual([["error", expect.any(String)], ["stop", undefined]]);
      expect(typeof ends[0].errorMessage).toBe("string");
      expect(ends[0].errorMessage.length).toBeGreaterThan(0);
      expect(ofType(recs, "auto_retry_start").length).toBe(1);
      expect(ofType(recs, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: true, attempt: 1 }]);
      await stillUsable(p, (r) => fake.enqueue(r));
      await finish(p, fake);
    });
  }

  test.concurrent("a stalled stream is ended by httpIdleTimeoutMs and retried; a stall on the retry ends in an error", async () => {
    const { fake, p } = setup({ ...RETRY, httpIdleTimeoutMs: 300 });
    fake.enqueue({ blocks: [{ type: "text", text: ["slow ", "and ", "stuck"] }], stallAfterChunks: 2 }, { blocks: [{ type: "text", text: "unstuck" }] });
    const recs = await run(p, "hi");
    const ends = assistantEnds(recs);
    expect(ends.map((m) => [m.stopReason, m.errorMessage])).toEqual([["error", expect.any(String)], ["stop", undefined]]);
    expect(ends[0].errorMessage).toMatch(/timed out|timeout/i);
    expect(ofType(recs, "auto_retry_start").length).toBe(1);
    expect(ofType(recs, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: true, attempt: 1 }]);

    // stalls before the first byte of both attempts
    fake.enqueue({ blocks: [{ type: "text", text: "never" }], stallAfterChunks: 0 }, { blocks: [{ type: "text", text: "never" }], stallAfterChunks: 0 });
    const again = await run(p, "and now?");
    expect(assistantEnds(again).map((m) => m.stopReason)).toEqual(["error", "error"]);
    expect(ofType(again, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: false, attempt: 1, finalError: expect.stringMatching(/timed out|timeout/i) }]);
    await stillUsable(p, (r) => fake.enqueue(r));
    await finish(p, fake);
  });

  test.concurrent("SSE truncated inside an event, then a clean close: an error, retried, session usable", async () => {
    const frames = encodeAnthropic(plan("truncated reply"));
    const cut = frames.slice(0, 4).join("");
    const srv = rawServer([
      (ctl) => {
        // the last frame is cut in the middle of its JSON
        ctl.enqueue(enc.encode(cut.slice(0, cut.length - 25)));
        ctl.close();
      },
      whole(encodeAnthropic(plan("fine after truncation"))),
    ]);
    const dirs = tempDirs();
    writeFakeModels(dirs.home, srv.url);
    writeSettings(dirs.home, RETRY);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const recs = await run(p, "hi");
    const ends = assistantEnds(recs);
    expect(ends.at(-1)).toMatchObject({ stopReason: "stop", content: [{ type: "text", text: "fine after truncation" }] });
    expect([ends[0].stopReason, typeof ends[0].errorMessage]).toEqual(["error", "string"]);
    expect(ofType(recs, "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: true, attempt: 1 }]);
    srv.script.push(whole(encodeAnthropic(plan("recovered fine"))));
    const next = await run(p, "are you there?");
    expect(assistantEnds(next).map((m) => m.stopReason)).toEqual(["stop"]);
    await finish(p, srv);
  });

  for (const [name, model, encode] of [
    ["anthropic-messages", "fake/fake-model", encodeAnthropic],
    ["openai-completions", "fake-openai/fake-chat", encodeCompletions],
  ] as const) {
    test.concurrent(`${name}: malformed JSON in a data line ends the message with an error; session usable`, async () => {
      const bad = (ctl: ReadableStreamDefaultController<Uint8Array>) => {
        const frames = encode(plan("broken json reply"));
        // the second frame's data line loses its closing characters and gains garbage
        frames[2] = String(frames[2]).replace(/\}\n\n$/, ',,"oops": }\n\n');
        for (const f of frames) ctl.enqueue(typeof f === "string" ? enc.encode(f) : f);
        ctl.close();
      };
      const srv = rawServer([bad, bad, whole(encode(plan("recovered fine")))]);
      const dirs = tempDirs();
      writeFakeModels(dirs.home, srv.url);
      writeSettings(dirs.home, RETRY);
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model] });
      const recs = await run(p, "hi");
      const ends = assistantEnds(recs);
      expect(ends.length).toBeGreaterThanOrEqual(1);
      for (const m of ends) expect([m.stopReason, typeof m.errorMessage, m.errorMessage?.length > 0]).toEqual(["error", "string", true]);
      // retried or not, the run ends settled and the next prompt gets the good reply
      srv.script.splice(0, srv.script.length - 1);
      const next = await run(p, "are you there?");
      expect(assistantEnds(next).map((m) => [m.stopReason, m.content])).toEqual([["stop", [{ type: "text", text: "recovered fine" }]]]);
      await finish(p, srv);
    });
  }

  test.concurrent("a tool call with invalid JSON arguments gets an error tool result; the run continues", async () => {
    const { fake, p } = setup();
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "toolu_bad", name: "bash", arguments: '{"command": "echo hi"', fragments: 2 }] },
      { blocks: [{ type: "text", text: "I see the error" }] },
    );
    const recs = await run(p, "run it");
    const end = ofType(recs, "tool_execution_end");
    expect(end).toMatchObject([{ toolCallId: "toolu_bad", toolName: "bash", isError: true }]);
    const resultMsg = recs.find((r) => r.type === "message_end" && r.message.role === "toolResult")!.message;
    expect(resultMsg).toMatchObject({ toolCallId: "toolu_bad", isError: true });
    expect(JSON.stringify(resultMsg.content)).toMatch(/argument|command|invalid|JSON/i);
    const sent = (fake.requests[1]!.body as { messages: { content: Rec[] | string }[] }).messages.at(-1)!.content as Rec[];
    expect(sent).toMatchObject([{ type: "tool_result", tool_use_id: "toolu_bad", is_error: true }]);
    expect(assistantEnds(recs).map((m) => m.stopReason)).toEqual(["toolUse", "stop"]);
    await stillUsable(p, (r) => fake.enqueue(r));
    await finish(p, fake);
  });
});
