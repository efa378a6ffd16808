import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

const EXT = join(import.meta.dir, "../fixtures/extensions/agent-session.ts");

test("an extension's command runs an in-process session (createAgentSession) with a tool call and reports its answer", async () => {
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "toolCall", name: "read", arguments: { path: "fact.txt" } }] }, { blocks: [{ type: "text", text: "The fact is 7." }] }] });
  const { home, cwd } = tempDirs();
  writeFakeModels(home, fake.url);
  writeFileSync(join(cwd, "fact.txt"), "fact: 7\n");
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-plain", "-e", EXT] });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "/aside what is the fact?" });
  const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  expect(note.message).toBe("The fact is 7. | read:false | system,user,assistant,toolResult,assistant");
  // The sub-session's own requests: its prompt and tool, the session's key, the tool result sent back.
  expect(fake.requests.length).toBe(2);
  const first = fake.requests[0]!.body as { system?: { text: string }[]; tools?: { name: string }[] };
  expect(first.system?.map((s) => s.text).join("")).toStartWith("You answer asides.");
  expect(first.tools?.map((t) => t.name)).toEqual(["read"]);
  expect(fake.requests[0]!.headers["x-api-key"]).toBe("test-key");
  expect(JSON.stringify(fake.requests[1]!.body)).toContain("fact: 7");
  // The main session recorded nothing of it.
  const messages = (await p.request({ type: "get_messages" })).data.messages as unknown[];
  expect(messages).toEqual([]);
  expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
  await p.close();
  await fake.stop();
});
