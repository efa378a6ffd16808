import { expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const EXT = join(import.meta.dir, "../fixtures/extensions/session-members.ts");

test("ctx.sessionManager, context usage, system prompt, tools, thinking level, setModel, registerProvider, newSession and their events", async () => {
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] }, { blocks: [{ type: "text", text: "answer" }] }, { blocks: [{ type: "text", text: "x" }] }, { blocks: [{ type: "toolCall", name: "echo", arguments: { text: "hey" } }] }, { blocks: [{ type: "text", text: "done" }] }] });
  const { home, cwd } = tempDirs();
  writeFakeModels(home, fake.url);
  mkdirSync(join(cwd, "ext-prompts"));
  writeFileSync(join(cwd, "ext-prompts", "greet.md"), "---\ndescription: from resources_discover\n---\nSay hello");
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-model", "--thinking", "high", "-e", EXT] });
  const note = (from: number) => p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  const commands = (await p.request({ type: "get_commands" })).data.commands as Rec[];
  expect(commands.find((c) => c.name === "greet")).toMatchObject({ source: "prompt", description: "from resources_discover" });
  await p.request({ type: "prompt", message: "hi" });
  await p.waitFor("agent_settled");
  const state = (await p.request({ type: "get_state" })).data;
  // The provider hooks: a header added, the payload replaced, the response seen.
  expect(fake.requests[0]!.headers["x-from-extension"]).toBe("yes");
  expect((fake.requests[0]!.body as { metadata?: unknown }).metadata).toEqual({ user_id: "from-extension" });
  let from = p.records.length;
  await p.request({ type: "prompt", message: "/probe" });
  expect(JSON.parse((await note(from)).message)).toEqual({
    sessionId: state.sessionId,
    file: "string",
    branch: ["model_change", "thinking_level_change", "message", "message"],
    leaf: true,
    header: "session",
    usage: "number",
    prompt: true,
    tools: true,
    level: "high",
    switched: true,
  });
  const after = (await p.request({ type: "get_state" })).data;
  expect([after.model.id, after.thinkingLevel, after.sessionName]).toEqual(["fake-plain", "off", "probed"]);
  const models = (await p.request({ type: "get_available_models" })).data.models as Rec[];
  expect(models.some((m) => m.provider === "ext-prov" && m.id === "ext-model")).toBe(true);
  await p.request({ type: "prompt", message: "again" });
  await p.waitFor("agent_settled", from);
  expect(((fake.requests.at(-1)!.body as { tools?: { name: string }[] }).tools ?? []).map((t) => t.name)).toEqual(["read"]);
  from = p.records.length;
  await p.request({ type: "prompt", message: "/seen" });
  expect((await note(from)).message).toBe("after_provider_response:200 thinking_level_select:low thinking_level_select:off model_select:fake-plain session_info_changed:probed after_provider_response:200");
  from = p.records.length;
  await p.request({ type: "prompt", message: "/back" });
  expect(JSON.parse((await note(from)).message)).toEqual({ cancelled: false, leaf: true, seen: ["session_tree:false"] });
  from = p.records.length;
  await p.request({ type: "prompt", message: "/fresh" });
  const fresh = JSON.parse((await note(from)).message);
  expect(fresh.cancelled).toBe(false);
  expect(fresh.id).not.toBe(state.sessionId);
  from = p.records.length;
  await p.request({ type: "prompt", message: "/ask" });
  expect((await note(from)).message).toBe("answer | start,text_start,text_delta,text_end,done");
  expect(JSON.stringify(fake.requests.at(-2)!.body)).toContain("question?");
  from = p.records.length;
  await p.request({ type: "prompt", message: "/agent" });
  expect((await note(from)).message).toBe("system,user,assistant,toolResult,assistant echo:hey true");
  expect((fake.requests.at(-1)!.body as { system?: unknown }).system).toEqual([expect.objectContaining({ text: "sub" })]);
  expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
  await p.close();
  await fake.stop();
});
