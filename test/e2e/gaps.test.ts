import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { GATED_COMMAND, Pion, releaseGate, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

function setup(extra: Record<string, unknown> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url, {
    textonly: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "k", models: [{ id: "plain-text", input: ["text"] }] },
    ...extra,
  });
  return { fake, dirs };
}

describe("images", () => {
  test.concurrent("a prompt's images reach the model; a model without image input is a clear error", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    fake.enqueue({ blocks: [{ type: "text", text: "a pixel" }] });
    const img = { type: "image", data: PNG, mimeType: "image/png" };
    await p.request({ type: "prompt", message: "what is this?", images: [img] });
    await p.waitFor("agent_settled");
    const content = (fake.requests[0]!.body as { messages: { content: Rec[] }[] }).messages[0]!.content;
    expect(content[1]).toEqual({ type: "image", source: { type: "base64", media_type: "image/png", data: PNG }, cache_control: { type: "ephemeral" } });
    const user = p.records.find((r) => r.type === "message_end" && r.message.role === "user")!.message;
    expect(user.content).toEqual([{ type: "text", text: "what is this?" }, img]);
    await p.request({ type: "set_model", provider: "textonly", modelId: "plain-text" });
    const r = await p.request({ type: "prompt", message: "and this?", images: [img] });
    expect(r).toMatchObject({ success: false, error: expect.stringContaining("does not accept images") });
    await p.close();
    await fake.stop();
  });
});

describe("steer and follow_up check their input as prompt does", () => {
  test.concurrent("images to a text-only model are an error, idle or streaming, and nothing is queued", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "textonly/plain-text"] });
    const img = { type: "image", data: PNG, mimeType: "image/png" };
    for (const type of ["steer", "follow_up"]) {
      const r = await p.request({ type, message: "look", images: [img] });
      expect(r).toMatchObject({ success: false, command: type, error: expect.stringContaining("does not accept images") });
    }
    // While a run streams (the reply stalls until aborted), the queued paths refuse them too.
    fake.enqueue({ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks: 2 });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor((r) => r.type === "message_update");
    const queued: Rec[] = [];
    for (const cmd of [
      { type: "steer", message: "look", images: [img] },
      { type: "follow_up", message: "look", images: [img] },
      { type: "prompt", message: "look", images: [img], streamingBehavior: "followUp" },
    ]) queued.push(await p.request(cmd));
    expect(queued.map((r) => [r.command, r.success])).toEqual([["steer", false], ["follow_up", false], ["prompt", false]]);
    expect(p.records.some((r) => r.type === "queue_update")).toBe(false);
    const state = await p.request({ type: "get_state" });
    expect(state.data.pendingMessageCount).toBe(0);
    // Text alone is still queued.
    expect((await p.request({ type: "follow_up", message: "later" })).data).toEqual({ disposition: "queued" });
    await p.request({ type: "abort" });
    await p.close();
    await fake.stop();
  });
});

describe("search tools and read through the loop", () => {
  test.concurrent("grep, find, ls and read see real files (.gitignore respected)", async () => {
    const { fake, dirs } = setup();
    mkdirSync(join(dirs.cwd, "src"), { recursive: true });
    writeFileSync(join(dirs.cwd, "src", "a.ts"), "export const needle = 1;\n");
    writeFileSync(join(dirs.cwd, "ignored.log"), "needle in a log\n");
    writeFileSync(join(dirs.cwd, ".gitignore"), "*.log\n");
    writeFileSync(join(dirs.cwd, "notes.md"), Array.from({ length: 3000 }, (_, i) => `line ${i + 1}`).join("\n"));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--tools", "+grep,+find,+ls"] });
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "g", name: "grep", arguments: { pattern: "needle" } },
        { type: "toolCall", id: "f", name: "find", arguments: { pattern: "**/*.ts" } },
        { type: "toolCall", id: "l", name: "ls", arguments: {} },
        { type: "toolCall", id: "r", name: "read", arguments: { path: "notes.md" } },
        { type: "toolCall", id: "r2", name: "read", arguments: { path: "notes.md", offset: 2999 } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "found" }] });
    await p.request({ type: "prompt", message: "look" });
    await p.waitFor("agent_settled");
    const text = (id: string) => p.records.find((r) => r.type === "message_end" && r.message.toolCallId === id)!.message.content[0].text as string;
    expect(text("g")).toContain("src/a.ts:1");
    expect(text("g")).not.toContain("ignored.log");
    expect(text("f")).toContain("src/a.ts");
    expect(text("l")).toContain("src/");
    expect(text("l")).toContain("notes.md");
    expect(text("r")).toContain("line 1\n");
    expect(text("r")).toContain("offset=2001");
    expect(text("r2")).toContain("line 3000");
    await p.close();
    await fake.stop();
  });
});

describe("queue modes", () => {
  test.concurrent("steering mode all delivers every queued steer in one turn", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "set_steering_mode", mode: "all" });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "t", name: "bash", arguments: { command: GATED_COMMAND } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "both seen" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("tool_execution_start");
    await p.request({ type: "steer", message: "first steer" });
    await p.request({ type: "steer", message: "second steer" });
    releaseGate(dirs.cwd);
    await p.waitFor("agent_settled");
    expect(fake.requests.length).toBe(2);
    const texts = (fake.requests[1]!.body as { messages: { content: Rec[] }[] }).messages.flatMap((m) => m.content.map((c) => c.text ?? ""));
    expect(texts).toContain("first steer");
    expect(texts).toContain("second steer");
    await p.close();
    await fake.stop();
  });
});

describe("steering queued before a run", () => {
  test.concurrent("a steer queued while idle goes with the next prompt's first model call; a follow-up after it", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    expect((await p.request({ type: "steer", message: "also consider X" })).data).toEqual({ disposition: "queued" });
    await p.request({ type: "follow_up", message: "then summarize" });
    expect((await p.request({ type: "get_state" })).data.pendingMessageCount).toBe(2);
    fake.enqueue({ blocks: [{ type: "text", text: "first" }] }, { blocks: [{ type: "text", text: "second" }] });
    await p.request({ type: "prompt", message: "main task" });
    await p.waitFor("agent_settled");
    const first = (fake.requests[0]!.body as { messages: { content: Rec[] }[] }).messages.map((m) => m.content[0]!.text);
    expect(first).toEqual(["main task", "also consider X"]);
    const second = (fake.requests[1]!.body as { messages: { content: Rec[] }[] }).messages.map((m) => m.content[0]!.text);
    expect(second.at(-1)).toBe("then summarize");
    expect(p.records.filter((r) => r.type === "agent_end").length).toBe(1);
    await p.close();
    await fake.stop();
  });
});

describe("settings", () => {
  test.concurrent("an invalid settings.json is a clear error naming the file; a trusted project's overrides the user's", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.home, "settings.json"), JSON.stringify({ steeringMode: "sometimes" }));
    const bad = await runPion(["--mode", "rpc"], dirs);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain(join(dirs.home, "settings.json"));
    expect(bad.stderr).toContain("steeringMode");
    writeFileSync(join(dirs.home, "settings.json"), JSON.stringify({ steeringMode: "all", followUpMode: "all" }));
    mkdirSync(join(dirs.cwd, ".pion"), { recursive: true });
    writeFileSync(join(dirs.cwd, ".pion", "settings.json"), JSON.stringify({ followUpMode: "one-at-a-time", defaultProvider: "fake", defaultModel: "fake-plain" }));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--approve"] });
    const st = (await p.request({ type: "get_state" })).data;
    expect(st).toMatchObject({ steeringMode: "all", followUpMode: "one-at-a-time", model: { id: "fake-plain" }, thinkingLevel: "off", projectTrust: "trusted" });
    await p.close();
    // Untrusted (the default), the project's settings are not read.
    const untrusted = new Pion({ ...dirs, args: ["--mode", "rpc"] });
    expect((await untrusted.request({ type: "get_state" })).data).toMatchObject({ followUpMode: "all", projectTrust: "untrusted" });
    await untrusted.close();
    await fake.stop();
  });
});

describe("pion sessions", () => {
  test.concurrent("list, search and show on the command line, with --json", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--name", "cli-named"] });
    fake.enqueue({ blocks: [{ type: "text", text: "the zebra answer" }] });
    await p.request({ type: "prompt", message: "tell me about zebras" });
    await p.waitFor("agent_settled");
    const id = (await p.request({ type: "get_state" })).data.sessionId;
    await p.close();
    const list = await runPion(["sessions", "list", "--json"], dirs);
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).sessions[0]).toMatchObject({ sessionId: id, name: "cli-named" });
    const text = await runPion(["sessions", "list"], dirs);
    expect(text.stdout).toContain(id);
    const hits = await runPion(["sessions", "search", "zebra", "--json"], dirs);
    expect(JSON.parse(hits.stdout).results.map((h: Rec) => h.sessionId)).toEqual([id, id]);
    const show = await runPion(["sessions", "show", id], dirs);
    expect(show.stdout).toContain("user: tell me about zebras");
    expect(show.stdout).toContain("assistant: the zebra answer");
    const showJson = JSON.parse((await runPion(["sessions", "show", id, "--json"], dirs)).stdout);
    expect(showJson.session.id).toBe(id);
    expect(showJson.entries.length).toBeGreaterThanOrEqual(4);
    expect((await runPion(["sessions", "show", "nope"], dirs)).code).toBe(1);
    expect((await runPion(["sessions", "bogus"], dirs)).code).toBe(2);
    await fake.stop();
  });
});
