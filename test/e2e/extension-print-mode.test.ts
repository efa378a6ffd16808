/**
 * An extension's command that answers a question with runPrintMode on an in-process runtime of its
 * own: the output goes to pion's stderr (an extension's stdout is), pion's stdout keeps carrying
 * only its own records, and the command gets the exit code.
 */
import { afterAll, expect, setDefaultTimeout, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const EXT = join(import.meta.dir, "../fixtures/extensions/print-mode.ts");

setDefaultTimeout(60_000);
const stops: (() => Promise<unknown>)[] = [];
afterAll(async () => void (await Promise.all(stops.map((s) => s()))));

/** pion with the extension, its model replies `replies`; `/printmode MODE QUESTION` run, its notified exit code returned. */
async function printMode(mode: "text" | "json", replies: FakeReply[]) {
  const fake = startFakeProvider({ replies });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-plain", "-e", EXT] });
  stops.push(() => fake.stop());
  const from = p.records.length;
  expect((await p.request({ type: "prompt", message: `/printmode ${mode} what is the answer?` })).success).toBe(true);
  const note = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
  // The main session recorded nothing of it.
  expect((await p.request({ type: "get_messages" })).data.messages).toEqual([]);
  // close() fails on a stdout line that is not JSON or is outside pion's wire schemas.
  expect(await p.close()).toBe(0);
  return { note: String(note.message), records: p.records, stderr: p.stderr, requests: fake.requests.length };
}

/** pion's stdout held only its own records (the command's answer, its notification), none from the in-process session. */
const noneFromTheRuntime = (records: Rec[]) => {
  expect(records.map((r) => `${r.type}:${r.command ?? r.method}`).sort()).toEqual(["extension_ui_request:notify", "response:get_messages", "response:prompt"]);
  expect(records.filter((r) => /The answer|what is the answer/.test(JSON.stringify(r)))).toEqual([]);
};

test.concurrent("text mode: the answer on pion's stderr, its stdout protocol-only, exit code 0 reported", async () => {
  const { note, records, stderr, requests } = await printMode("text", [{ blocks: [{ type: "text", text: "The answer is 42." }] }]);
  expect(note).toBe("print mode exited 0");
  expect(requests).toBe(1);
  expect(stderr).toContain("The answer is 42.\n");
  noneFromTheRuntime(records);
});

test.concurrent("json mode: the header and the session's events as JSON lines on pion's stderr, none on its stdout", async () => {
  const { note, records, stderr } = await printMode("json", [{ blocks: [{ type: "text", text: ["The answer ", "is 42."] }] }]);
  expect(note).toBe("print mode exited 0");
  const lines = stderr.split("\n").filter((l) => l.startsWith("{")).map((l) => JSON.parse(l) as Rec);
  expect(lines[0]).toMatchObject({ type: "session", version: 3 });
  const types = lines.slice(1).map((l) => l.type);
  expect([types[0], types.at(-1)]).toEqual(["agent_start", "agent_settled"]);
  const deltas = lines.filter((l) => l.type === "message_update" && l.assistantMessageEvent.type === "text_delta");
  expect(deltas.map((l) => l.assistantMessageEvent.delta)).toEqual(["The answer ", "is 42."]);
  expect(deltas.every((l) => l.usage && !("partial" in l.assistantMessageEvent))).toBe(true);
  noneFromTheRuntime(records);
});

test.concurrent("a failed reply: its error on stderr, exit code 1 reported", async () => {
  const { note, records, stderr } = await printMode("text", [{ kind: "http_error", status: 400, message: "no such question" }]);
  expect(note).toBe("print mode exited 1");
  expect(stderr).toContain("no such question");
  noneFromTheRuntime(records);
});
