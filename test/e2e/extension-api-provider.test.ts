import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels } from "../support/pion.ts";

const EXT = resolve(import.meta.dir, "../fixtures/extensions/api-provider.ts");
const PROVIDER_STREAM = resolve(import.meta.dir, "../fixtures/extensions/provider-stream.ts");

test("a model on an API an extension registered is the session's: print mode streams it through the extension", async () => {
  const dirs = tempDirs();
  const r = await runPion(["-p", "hello there", "--model", "extfaux/m1", "-e", EXT, "--no-session"], dirs);
  expect(r.stderr).not.toContain("does not implement");
  // The reference's transcript reaches the extension: system prompt first, then the user's prompt.
  expect(r.stdout.trim()).toBe("lead=system prompt=hello there");
  expect(r.code).toBe(0);
});

test("pi.registerProvider with its own streamSimple: that provider's models stream through it, another provider's models on the same API do not", async () => {
  const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "from the fake provider" }] }] });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const legacy = await runPion(["-p", "hello there", "--model", "legacy/l1", "-e", PROVIDER_STREAM, "--no-session"], dirs);
  expect(legacy.stdout.trim()).toBe('via streamSimple: legacy/l1 saw "hello there" (system prompt set)');
  expect(fake.requests.length).toBe(0);
  const other = await runPion(["-p", "hi", "--model", "fake-openai/fake-chat", "-e", PROVIDER_STREAM, "--no-session"], dirs);
  expect(other.stdout.trim()).toBe("from the fake provider");
  expect(fake.requests.length).toBe(1);
  await fake.stop();
});
