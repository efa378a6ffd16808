import { describe, expect, test } from "bun:test";
import { resolve } from "node:path";
import { PionClient, PionCommandError, type ClientSpawnOptions } from "pion/client";
import type { EventType } from "../../src/protocol/events.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { SOURCE_ENTRY, tempDirs, writeFakeModels } from "../support/pion.ts";

const UI = resolve(import.meta.dir, "../fixtures/extensions/ui.ts");

function setup(extra: Partial<ClientSpawnOptions> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const client = PionClient.spawn({
    command: ["bun", SOURCE_ENTRY],
    args: ["--model", "fake/fake-model", ...(extra.args ?? [])],
    cwd: dirs.cwd,
    env: { PION_HOME: dirs.home },
    validate: true,
  });
  const problems: string[] = [];
  client.onProtocolError((problem) => problems.push(problem));
  return { fake, client, problems };
}

describe("PionClient against the real pion", () => {
  test.concurrent("promptAndWait resolves with the prompt's result and the run's messages; state is typed", async () => {
    const { fake, client, problems } = setup();
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "echo from-tool" } }], usage: { input: 10, output: 5 } },
      { blocks: [{ type: "text", text: ["All ", "done."] }], usage: { input: 20, output: 7 } },
    );
    const out = await client.promptAndWait("run echo");
    expect(out.disposition).toBe("started");
    if (out.disposition === "handled") throw new Error("unreachable");
    expect(out.result).toMatchObject({ type: "prompt_result", stopReason: "stop", aborted: false, usage: { input: 30, output: 12 } });
    expect(out.messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);

    const state = await client.getState();
    expect(state.model?.id).toBe("fake-model");
    expect(state.isStreaming).toBe(false);
    expect(state.messageCount).toBe(4);
    expect((await client.getLastAssistantText()).text).toBe("All done.");
    expect((await client.getAvailableThinkingLevels()).levels).toContain("high");
    const entries = await client.getEntries({ limit: 1 });
    expect(entries.hasMore).toBe(true);

    expect(await client.close()).toBe(0);
    expect(problems).toEqual([]);
    await fake.stop();
  });

  test.concurrent("a failed command rejects with the response's error; the client keeps working", async () => {
    const { fake, client, problems } = setup();
    const err = await client.setModel("nope", "missing").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PionCommandError);
    expect((err as PionCommandError).message).toBe("Model not found: nope/missing");
    expect((err as PionCommandError).response).toMatchObject({ success: false, command: "set_model" });
    const bad = await client.exportHtml().catch((e: unknown) => e);
    expect((bad as Error).message).toContain("Nothing to export");
    expect(await client.setSessionName("still fine")).toBeUndefined();
    expect((await client.getState()).sessionName).toBe("still fine");
    expect(await client.close()).toBe(0);
    await expect(client.getState()).rejects.toThrow("exited");
    expect(problems).toEqual([]);
    await fake.stop();
  });

  test.concurrent("events arrive by type, in the order pion writes them", async () => {
    const { fake, client, problems } = setup();
    const seen: string[] = [];
    const types: EventType[] = ["agent_start", "turn_start", "message_start", "message_end", "turn_end", "agent_end", "agent_settled", "prompt_result"];
    for (const t of types) client.on(t, (e) => seen.push(e.type));
    const deltas: string[] = [];
    const off = client.on("message_update", (e) => {
      if (e.assistantMessageEvent.type === "text_delta") deltas.push(e.assistantMessageEvent.delta);
    });
    fake.enqueue({ blocks: [{ type: "text", text: ["Hel", "lo"] }] });
    await client.promptAndWait("hi");
    off();
    expect(deltas).toEqual(["Hel", "lo"]);
    expect(seen).toEqual([
      "agent_start",
      "turn_start",
      "message_start",
      "message_end",
      "message_start",
      "message_end",
      "turn_end",
      "agent_end",
      "agent_settled",
      "prompt_result",
    ]);
    await client.close();
    expect(problems).toEqual([]);
    await fake.stop();
  });

  test.concurrent("a host tool is answered by the client, with a partial update", async () => {
    const { fake, client, problems } = setup();
    await client.setHostTools([
      {
        name: "lookup",
        description: "Look a word up in the host",
        parameters: { type: "object", properties: { word: { type: "string" } }, required: ["word"] },
      },
    ]);
    const calls: unknown[] = [];
    client.onHostTool("lookup", async (args, ctx) => {
      calls.push(args);
      ctx.update({ content: [{ type: "text", text: "searching" }] });
      return { content: [{ type: "text", text: "meaning of pion: a particle" }] };
    });
    const updates: string[] = [];
    client.on("tool_execution_update", (e) => updates.push(e.toolName));
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "h1", name: "lookup", arguments: { word: "pion" } }] },
      { blocks: [{ type: "text", text: "It is a particle." }] },
    );
    const out = await client.promptAndWait("what is a pion?");
    expect(calls).toEqual([{ word: "pion" }]);
    expect(updates).toEqual(["lookup"]);
    const toolResult = out.messages.find((m) => m.role === "toolResult");
    expect(toolResult).toMatchObject({ toolName: "lookup", isError: false, content: [{ type: "text", text: "meaning of pion: a particle" }] });
    expect(await client.close()).toBe(0);
    expect(problems).toEqual([]);
    await fake.stop();
  });

  test.concurrent("onToolApproval answers tool_approval_request: allow runs the call, a throwing handler denies with its message", async () => {
    const { fake, client, problems } = setup({ args: ["--permission-mode", "ask"] });
    const asked: string[] = [];
    client.onToolApproval((req) => {
      asked.push(`${req.toolName}:${req.toolCallId}`);
      if (req.toolCallId === "t2") throw new Error("not this one");
      return { decision: "allow" };
    });
    fake.enqueue(
      { blocks: [{ type: "toolCall", id: "t1", name: "bash", arguments: { command: "echo approved" } }, { type: "toolCall", id: "t2", name: "bash", arguments: { command: "echo refused" } }] },
      { blocks: [{ type: "text", text: "ok" }] },
    );
    const out = await client.promptAndWait("run both");
    const results = out.messages.filter((m) => m.role === "toolResult");
    expect(results.map((m) => [m.toolCallId, m.isError])).toEqual([
      ["t1", false],
      ["t2", true],
    ]);
    expect(JSON.stringify(results[1])).toContain("not this one");
    expect(asked).toEqual(["bash:t1", "bash:t2"]);
    expect((await client.getState()).permissionMode).toBe("ask");
    expect(await client.close()).toBe(0);
    expect(problems).toEqual([]);
    await fake.stop();
  });

  test.concurrent("extension dialogs are answered by onUiRequest; a handled prompt resolves at once", async () => {
    const { fake, client, problems } = setup({ args: ["-e", UI] });
    const asked: string[] = [];
    client.onUiRequest((req) => {
      asked.push(req.method);
      return req.method === "confirm" ? { confirmed: true } : undefined;
    });
    expect(await client.promptAndWait("/dialog confirm")).toEqual({ disposition: "handled", result: null, messages: [] });
    expect(await client.promptAndWait("/dialog select")).toMatchObject({ disposition: "handled" });
    expect(asked).toEqual(["confirm", "select"]);
    const custom = (await client.getEntries()).entries.filter((e) => e.type === "custom");
    expect(custom.map((e) => e.data)).toEqual([
      { method: "confirm", result: true },
      { method: "select", result: "undefined" },
    ]);
    expect(await client.close()).toBe(0);
    expect(problems).toEqual([]);
    await fake.stop();
  });
});
