import { expect, test } from "bun:test";
import { appendFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

const fixture = (name: string) => resolve(import.meta.dir, "../fixtures/extensions", name);
const CRASH = fixture("async-crash.ts");
const THROWS = fixture("throws.ts");
const TOOLS = fixture("tools.ts");

test("an extension that fails while loading and one that fails later are reported; pion and the working extension go on", async () => {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const watched = join(dirs.cwd, "watched.txt");
  writeFileSync(watched, "");
  const p = new Pion({ ...dirs, env: { CRASH_WATCH_FILE: watched }, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", THROWS, "-e", CRASH, "-e", TOOLS] });
  const isError = (event: string, text: string) => (r: { type?: unknown; event?: unknown; error?: unknown }) =>
    r.type === "extension_error" && r.event === event && String(r.error).includes(text);

  expect(await p.waitFor(isError("load", "factory exploded"))).toEqual({
    type: "extension_error",
    extensionPath: THROWS,
    event: "load",
    error: "Extension factory failed: factory exploded",
  });
  expect(await p.waitFor(isError("unhandledRejection", "left a promise rejected"))).toEqual({
    type: "extension_error",
    extensionPath: CRASH,
    event: "unhandledRejection",
    error: "left a promise rejected",
  });
  expect(await p.waitFor(isError("uncaughtException", "timer callback threw"))).toMatchObject({ extensionPath: CRASH });
  appendFileSync(watched, "changed\n");
  expect(await p.waitFor(isError("uncaughtException", "watch callback threw"))).toMatchObject({ extensionPath: CRASH });
  expect((await p.request({ type: "prompt", message: "/later" })).data).toEqual({ disposition: "handled" });
  expect(await p.waitFor(isError("unhandledRejection", "rejected after the command"))).toMatchObject({ extensionPath: CRASH });

  // Still serving, and the other extension's tool still works.
  expect((await p.request({ type: "get_state" })).success).toBe(true);
  fake.enqueue({ blocks: [{ type: "toolCall", id: "g", name: "greet", arguments: { name: "Ada" } }] }, { blocks: [{ type: "text", text: "ok" }] });
  await p.request({ type: "prompt", message: "greet Ada" });
  await p.waitFor("agent_settled");
  const result = p.records.find((r) => r.type === "message_end" && r.message.role === "toolResult")!.message;
  expect(result.content).toEqual([{ type: "text", text: "Hello, Ada!" }]);

  // What the extension printed went to stderr: every stdout line was a record (Pion fails otherwise).
  expect(await p.close()).toBe(0);
  expect(p.stderr).toContain("printed by an extension while loading");
  expect(p.stderr).toContain("\x1b]777;notify;pion;done");
  await fake.stop();
});
