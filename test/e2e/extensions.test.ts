import { describe, expect, test } from "bun:test";
import { copyFileSync, mkdirSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { GATED_COMMAND, Pion, releaseGate, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const GUARD = resolve(import.meta.dir, "../fixtures/extensions/e2e-guard.ts");
const UI = resolve(import.meta.dir, "../fixtures/extensions/ui.ts");
const BROKEN = resolve(import.meta.dir, "../fixtures/extensions/e2e-broken.ts");

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", GUARD, "--extension", BROKEN] });
  return { fake, p };
}

describe("extensions through the binary", () => {
  test.concurrent("a broken extension is reported and the rest load; hooks shape the run; errors don't stop it", async () => {
    const { fake, p } = setup();
    const load = await p.waitFor((r) => r.type === "extension_error" && r.event === "load");
    expect(load).toMatchObject({ extensionPath: BROKEN, error: expect.stringContaining("fails on purpose") });
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "a", name: "bash", arguments: { command: "echo rewrite-me" } },
        { type: "toolCall", id: "b", name: "greet", arguments: { name: "Ada" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    const r = await p.request({ type: "prompt", message: "shout hello" });
    expect(r.data).toEqual({ disposition: "started" });
    await p.waitFor("agent_settled");
    const body = fake.requests[0]!.body as { system: { text: string }[]; messages: { content: Rec[] }[]; tools: Rec[] };
    expect(body.system[0]!.text).toContain("EXT-SYSTEM-LINE");
    expect(JSON.stringify(body.messages)).toContain("note from the extension");
    expect(body.messages.at(-1)!.content[0]!.text).toBe("HELLO!");
    expect(body.tools.map((t) => t.name)).toContain("greet");
    const results = p.records.filter((x) => x.type === "message_end" && x.message.role === "toolResult").map((x) => x.message);
    expect(results[0].content[0].text).toBe("rewritten\n[checked]");
    expect(results[1].content[0].text).toBe("Hello, Ada!");
    expect(p.records.some((x) => x.type === "tool_execution_update" && x.toolName === "greet")).toBe(true);
    const err = p.records.find((x) => x.type === "extension_error" && x.event === "turn_end");
    expect(err).toMatchObject({ extensionPath: GUARD, error: expect.stringContaining("exploded") });
    const swallowed = await p.request({ type: "prompt", message: "swallow me" });
    expect(swallowed.data).toEqual({ disposition: "handled" });
    expect(fake.requests.length).toBe(2);
    await p.close();
    await fake.stop();
  });

  test.concurrent("tool_call asks the host with select; Block stops the command", async () => {
    const { fake, p } = setup();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "d", name: "bash", arguments: { command: "rm -rf /tmp/nothing-here" } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "clean up" });
    const ask = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "select");
    expect(ask).toEqual({ type: "extension_ui_request", id: expect.any(String), method: "select", title: expect.stringContaining("Allow dangerous command?"), options: ["Allow", "Block"] });
    p.send({ type: "extension_ui_response", id: "not-a-real-id", value: "Allow" });
    p.send({ type: "extension_ui_response", id: ask.id, value: "Block" });
    await p.waitFor("agent_settled");
    const result = p.records.find((x) => x.type === "message_end" && x.message.role === "toolResult")!.message;
    expect(result).toMatchObject({ isError: true, content: [{ type: "text", text: "Blocked by the user" }] });
    await p.close();
    await fake.stop();
  });

  test.concurrent("commands run at once and use dialogs; get_commands lists them; session_before_switch can cancel", async () => {
    const { fake, p } = setup();
    const cmds = (await p.request({ type: "get_commands" })).data.commands;
    expect(cmds.find((c: Rec) => c.name === "status")).toMatchObject({ source: "extension", description: "Report the session name", path: GUARD });
    p.send({ id: "s", type: "prompt", message: "/status" });
    const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify");
    expect(note).toMatchObject({ message: "name is unset", notifyType: "info" });
    const input = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "input");
    expect(input).toMatchObject({ title: "Rename the session", placeholder: "new name" });
    // the queue keeps moving while the command waits for the host
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    p.send({ type: "extension_ui_response", id: input.id, value: "renamed-by-ext" });
    expect(await p.waitFor((r) => r.type === "response" && r.id === "s")).toMatchObject({ success: true, data: { disposition: "handled" } });
    expect((await p.request({ type: "get_state" })).data.sessionName).toBe("renamed-by-ext");

    p.send({ id: "n", type: "new_session" });
    const confirm = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm");
    p.send({ type: "extension_ui_response", id: confirm.id, confirmed: false });
    expect((await p.waitFor((r) => r.type === "response" && r.id === "n")).data).toEqual({ cancelled: true });
    expect((await p.request({ type: "get_state" })).data.sessionName).toBe("renamed-by-ext");
    p.send({ id: "n2", type: "new_session" });
    const c2 = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "confirm" && r.id !== confirm.id);
    p.send({ type: "extension_ui_response", id: c2.id, confirmed: true });
    expect((await p.waitFor((r) => r.type === "response" && r.id === "n2")).data).toEqual({ cancelled: false });
    expect((await p.request({ type: "get_state" })).data.sessionName).toBeUndefined();
    await p.close();
    await fake.stop();
  });

  test.concurrent("ctx.hasPendingMessages() reports the session's real queues", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const ext = join(dirs.home, "pending.ts");
    writeFileSync(ext, `export default function (pi) {
      pi.registerCommand("pending", { handler: async (_args, ctx) => pi.appendEntry("pending", { pending: ctx.hasPendingMessages() }) });
    }\n`);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", ext] });
    const pending = async () => {
      await p.request({ type: "prompt", message: "/pending" });
      const entries = (await p.request({ type: "get_entries" })).data.entries as Rec[];
      return entries.filter((e) => e.type === "custom" && e.customType === "pending").at(-1)?.data;
    };
    expect(await pending()).toEqual({ pending: false });
    fake.enqueue({ blocks: [{ type: "toolCall", id: "g", name: "bash", arguments: { command: GATED_COMMAND } }] });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] }, { blocks: [{ type: "text", text: "later done" }] });
    await p.request({ type: "prompt", message: "work" });
    await p.waitFor("tool_execution_start");
    await p.request({ type: "follow_up", message: "later" });
    expect(await pending()).toEqual({ pending: true });
    releaseGate(dirs.cwd);
    await p.waitFor((r) => r.type === "agent_settled");
    expect(await pending()).toEqual({ pending: false });
    await p.close();
    await fake.stop();
  });

  test.concurrent("--no-extensions skips discovery; explicit -e paths still load", async () => {
    const dirs = tempDirs();
    // A discoverable extension in the user's folder: without the flag its commands are there.
    mkdirSync(join(dirs.home, "extensions"));
    copyFileSync(UI, join(dirs.home, "extensions", "ui.ts"));
    const names = async (args: string[]) => {
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", ...args] });
      const commands = (await p.request({ type: "get_commands" })).data.commands as Rec[];
      await p.close();
      return commands.filter((c) => c.source === "extension").map((c) => c.name);
    };
    expect(await names([])).toContain("dialog");
    expect(await names(["--no-extensions"])).toEqual([]);
    expect(await names(["--no-extensions", "-e", GUARD])).not.toContain("dialog");
    expect((await names(["--no-extensions", "-e", GUARD])).length).toBeGreaterThan(0);
  });
});
