import { describe, expect, test } from "bun:test";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";

function setup(settings: Record<string, unknown> = { retry: { maxRetries: 2, baseDelayMs: 20 } }) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, settings);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  return { fake, p };
}

const noUpdates = (t: string) => !t.startsWith("message_update");

describe("automatic retry", () => {
  test.concurrent("a 529 is retried with backoff and the retry succeeds", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 529 });
    fake.enqueue({ blocks: [{ type: "text", text: "ok now" }] });
    const r = await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    expect(p.types(p.records.indexOf(r) + 1).filter(noUpdates)).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "auto_retry_start",
      "entry_appended",
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "auto_retry_end",
      "turn_end",
      "agent_end",
      "agent_settled",
    ]);
    const start = p.records.find((x) => x.type === "auto_retry_start");
    expect(start).toEqual({ type: "auto_retry_start", attempt: 1, maxAttempts: 2, delayMs: 20, errorMessage: expect.stringContaining("529") });
    expect(start!.errorMessage).toContain("overloaded_error");
    expect(p.records.filter((x) => x.type === "agent_end").map((x) => x.willRetry)).toEqual([true, false]);
    expect(p.records.find((x) => x.type === "auto_retry_end")).toEqual({ type: "auto_retry_end", success: true, attempt: 1 });
    // the failed attempt is not part of the retried request
    const roles = (fake.requests[1]!.body as { messages: { role: string }[] }).messages.map((m) => m.role);
    expect(roles).toEqual(["user"]);
    const failedId = p.records.find((x) => x.type === "message_end" && x.message.stopReason === "error")!.entryId;
    expect(p.records.find((x) => x.type === "entry_appended")!.entry).toMatchObject({ type: "context_edit", targetId: failedId, replacement: null });
    const msgs = (await p.request({ type: "get_messages" })).data.messages;
    expect(msgs.map((m: { role: string; stopReason?: string }) => [m.role, m.stopReason])).toEqual([
      ["user", undefined],
      ["assistant", "stop"],
    ]);
    const stats = (await p.request({ type: "get_session_stats" })).data;
    expect(stats.assistantMessages).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("after a retry that worked, the run's later calls announce no retry of their own", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 529 });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "l1", name: "ls", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "l2", name: "ls", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    expect(p.records.filter((x) => x.type === "auto_retry_end")).toEqual([{ type: "auto_retry_end", success: true, attempt: 1 }]);
    expect(p.records.filter((x) => x.type === "message_end" && x.message.role === "assistant").map((x) => x.message.stopReason)).toEqual(["error", "toolUse", "toolUse", "stop"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("retries run out: auto_retry_end with the final error, after agent_end", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 500 }, { kind: "http_error", status: 503 }, { kind: "http_error", status: 500, message: "still broken" });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    const tail = p.types().filter(noUpdates).slice(-3);
    expect(tail).toEqual(["agent_end", "auto_retry_end", "agent_settled"]);
    const end = p.records.find((x) => x.type === "auto_retry_end");
    expect(end).toMatchObject({ success: false, attempt: 2 });
    expect(end!.finalError).toContain("still broken");
    expect(p.records.filter((x) => x.type === "auto_retry_start").map((x) => [x.attempt, x.delayMs])).toEqual([
      [1, 20],
      [2, 40],
    ]);
    expect(fake.requests.length).toBe(3);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 400 is not retried, nor anything with auto retry off", async () => {
    const { fake, p } = setup();
    fake.enqueue({ kind: "http_error", status: 400 });
    await p.request({ type: "prompt", message: "hi" });
    const settled = await p.waitFor("agent_settled");
    expect(p.records.some((x) => x.type === "auto_retry_start")).toBe(false);
    await p.request({ type: "set_auto_retry", enabled: false });
    fake.enqueue({ kind: "http_error", status: 529 });
    await p.request({ type: "prompt", message: "again" });
    await p.waitFor("agent_settled", p.records.indexOf(settled) + 1);
    expect(p.records.some((x) => x.type === "auto_retry_start")).toBe(false);
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a mid-stream disconnect is retried", async () => {
    const { fake, p } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["par", "tial", "more"] }], disconnectAfterChunks: 3 });
    fake.enqueue({ blocks: [{ type: "text", text: "whole" }] });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("agent_settled");
    const ends = p.records.filter((x) => x.type === "message_end" && x.message.role === "assistant").map((x) => x.message.stopReason);
    expect(ends).toEqual(["error", "stop"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort_retry cancels the delay and the run ends with the last error", async () => {
    const { fake, p } = setup({ retry: { maxRetries: 3, baseDelayMs: 10000 } });
    fake.enqueue({ kind: "http_error", status: 529 });
    await p.request({ type: "prompt", message: "hi" });
    await p.waitFor("auto_retry_start");
    const r = await p.request({ type: "abort_retry" });
    expect(r.success).toBe(true);
    const end = await p.waitFor("auto_retry_end");
    expect(end).toEqual({ type: "auto_retry_end", success: false, attempt: 1, finalError: "Retry cancelled" });
    expect(await p.waitFor("agent_settled")).toMatchObject({ type: "agent_settled", aborted: false });
    expect(fake.requests.length).toBe(1);
    await p.close();
    await fake.stop();
  });
});
