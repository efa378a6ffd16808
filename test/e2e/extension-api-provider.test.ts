import { expect, test } from "bun:test";
import { resolve } from "node:path";
import { runPion, tempDirs } from "../support/pion.ts";

const EXT = resolve(import.meta.dir, "../fixtures/extensions/api-provider.ts");

test("a model on an API an extension registered is the session's: print mode streams it through the extension", async () => {
  const dirs = tempDirs();
  const r = await runPion(["-p", "hello there", "--model", "extfaux/m1", "-e", EXT, "--no-session"], dirs);
  expect(r.stderr).not.toContain("does not implement");
  // The reference's transcript reaches the extension: system prompt first, then the user's prompt.
  expect(r.stdout.trim()).toBe("lead=system prompt=hello there");
  expect(r.code).toBe(0);
});
