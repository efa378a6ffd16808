import { describe, expect, test } from "bun:test";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { fakePort, fixture } from "./fake-port.ts";

async function load(...names: string[]) {
  const fake = fakePort();
  const runner = await loadExtensions(names.map(fixture), fake.port);
  return { ...fake, runner };
}

describe("hooks", () => {
  test("tool_call: a handler blocks with its reason", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    expect(await runner.onToolCall({ toolCallId: "c1", toolName: "bash", input: { command: "rm -rf /" } })).toEqual({
      block: true,
      reason: "rm -rf is not allowed",
    });
  });

  test("tool_call: in-place input edits chain across extensions and do not touch the caller's object", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    const input = { path: "a.txt" };
    expect(await runner.onToolCall({ toolCallId: "c1", toolName: "read", input })).toEqual({
      block: false,
      input: { path: "sandbox/a.txt", seenBy: "chain" },
    });
    expect(input).toEqual({ path: "a.txt" });
  });

  test("tool_call: a throwing handler blocks the call (fail closed) and emits extension_error", async () => {
    const { runner, errors } = await load("hooks.ts", "chain.ts");
    const decision = await runner.onToolCall({ toolCallId: "c1", toolName: "explode", input: {} });
    expect(decision.block).toBe(true);
    expect(errors()).toEqual([{ type: "extension_error", extensionPath: fixture("chain.ts"), event: "tool_call", error: "checker crashed" }]);
  });

  test("tool_call: no handlers means the input passes unchanged", async () => {
    const { runner } = await load("tools.ts");
    expect(await runner.onToolCall({ toolCallId: "c1", toolName: "bash", input: { command: "ls" } })).toEqual({ block: false, input: { command: "ls" } });
  });

  test("tool_result: partial patches chain; omitted fields keep their values", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    const call = { toolCallId: "c1", toolName: "read", input: { path: "x" } };
    const result = await runner.onToolResult(call, { content: [{ type: "text", text: "secret" }], details: { lines: 1 }, isError: false });
    expect(result).toEqual({ content: [{ type: "text", text: "[redacted]" }], details: { redacted: true, was: 1 }, isError: true });
    const other = { content: [{ type: "text", text: "ok" }], isError: false };
    expect(await runner.onToolResult({ ...call, toolName: "ls" }, other)).toEqual(other);
  });

  test("tool_result: structuredContent reaches handlers; replacing content without a new one drops it", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    const call = { toolCallId: "c1", toolName: "read", input: { path: "x" } };
    const replaced = await runner.onToolResult(call, { content: [{ type: "text", text: "secret" }], isError: false, structuredContent: "secret" });
    expect(replaced).not.toHaveProperty("structuredContent");
    const kept = { content: [{ type: "text", text: "ok" }], isError: false, structuredContent: { output: "ok" } };
    expect(await runner.onToolResult({ ...call, toolName: "ls" }, kept)).toEqual(kept);
  });

  test("input: transform chains (text and images), handled wins, source reaches handlers", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    expect(await runner.onInput("?q why", undefined, "rpc")).toEqual({
      action: "continue",
      text: "Briefly: why!",
      images: [{ type: "image", data: "AA==", mimeType: "image/png" }],
    });
    expect(await runner.onInput("ping", undefined, "rpc")).toEqual({ action: "handled" });
    expect(await runner.onInput("plain", undefined, "extension")).toEqual({ action: "continue", text: "plain" });
  });

  test("before_agent_start: system prompt chains; messages are collected", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    expect(await runner.onBeforeAgentStart("fix it", "BASE")).toEqual({
      systemPrompt: "BASE\nBe terse.\n[chain]",
      messages: [{ customType: "hooks-note", content: "prompt was: fix it", display: false, details: { n: 1 } }],
    });
    const { runner: none } = await load("tools.ts");
    expect(await none.onBeforeAgentStart("x", "BASE")).toEqual({});
  });

  test("context: each handler receives the previous result; the caller's list is not mutated", async () => {
    const { runner } = await load("hooks.ts", "chain.ts");
    const messages = [
      { role: "user", content: "one", timestamp: 1 },
      { role: "user", content: "two", timestamp: 2 },
    ];
    expect(await runner.onContext(messages)).toEqual([
      { role: "user", content: "two", timestamp: 2 },
      { role: "user", content: "from chain", timestamp: 0 },
    ]);
    expect(messages).toHaveLength(2);
    const { runner: none } = await load("tools.ts");
    expect(await none.onContext(messages)).toBe(messages);
  });

  test("session_before_switch / session_before_fork: cancel only when a handler says so", async () => {
    const { runner } = await load("hooks.ts");
    expect(await runner.beforeSessionChange("session_before_switch", { reason: "new" })).toBe(true);
    expect(await runner.beforeSessionChange("session_before_switch", { reason: "resume", targetSessionFile: "/x.jsonl" })).toBe(false);
    expect(await runner.beforeSessionChange("session_before_fork", { entryId: "abcd1234", position: "before" })).toBe(false);
  });

  test("notify: handlers see the payload; a throwing handler is reported and later handlers still run", async () => {
    const { runner, frames, entry } = await load("hooks.ts", "chain.ts");
    await runner.notify("session_start", { reason: "startup" });
    expect(frames.at(-1)).toMatchObject({ type: "extension_ui_request", method: "setStatus", statusKey: "hooks", statusText: "started:startup" });
    await runner.notify("agent_end", { messages: [] });
    expect(frames.at(-1)).toEqual({ type: "extension_error", extensionPath: fixture("hooks.ts"), event: "agent_end", error: "boom in agent_end" });
    await runner.runCommand("/seen");
    expect(entry("chain-seen")).toEqual([["agent_end"]]);
    await runner.notify("turn_start", { turnIndex: 0 }); // no handlers: nothing happens
  });
});
