import { expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { badSyntaxExtension, fixture } from "./fake-port.ts";

const LOADER = join(import.meta.dir, "../../../src/extensions/loader.ts");

/**
 * The loader inside a `bun build --compile` binary, run from an unrelated directory: dynamic
 * import of TypeScript files and the virtual package names must work without node_modules.
 */
const ENTRY = `
import { loadExtensions } from ${JSON.stringify(LOADER)};
const frames = [];
const port = {
  cwd: process.cwd(), mode: "rpc", hasUI: true, projectTrusted: false,
  model: () => undefined, isIdle: () => true, hasPendingMessages: () => false, abort() {}, shutdown() {},
  sendMessage() {}, sendUserMessage() {}, appendEntry() {}, setSessionName() {}, getSessionName: () => undefined, setLabel() {},
  writeFrame: (f) => frames.push(f),
};
const runner = await loadExtensions(process.argv.slice(2), port);
await runner.notify("session_start", { reason: "startup" });
const greet = runner.tools().find((t) => t.name === "greet");
const result = await greet.execute(await greet.parse({ name: "bin" }), { signal: new AbortController().signal, callId: "c", cwd: port.cwd });
console.log(JSON.stringify({
  loaded: runner.loaded.map((l) => l.path),
  tools: runner.tools().map((t) => t.name),
  commands: runner.commands().map((c) => c.name),
  greet: result.content,
  frames: frames.map((f) => [f.type, f.method ?? f.event]),
}));
`;

test("extensions load in a compiled binary", async () => {
  const dir = mkdtempSync(join(tmpdir(), "pion-compiled-"));
  writeFileSync(join(dir, "entry.ts"), ENTRY);
  const outfile = join(dir, "ext-host");
  // build.ts resolves `pion-worker:` (the store's session-file reader reaches worker-code.ts); a plain build leaves it out, as nothing here starts a worker.
  const build = Bun.spawnSync(["bun", "build", "--compile", "--external", "pion-worker:codemode", join(dir, "entry.ts"), "--outfile", outfile], { stderr: "pipe", stdout: "pipe" });
  expect(build.stderr.toString()).not.toContain("error");
  expect(build.exitCode).toBe(0);

  const run = Bun.spawnSync([outfile, fixture("tools.ts"), fixture("hooks.ts"), badSyntaxExtension(), fixture("async-factory.js")], {
    cwd: tmpdir(),
    stderr: "pipe",
    stdout: "pipe",
  });
  expect(run.exitCode).toBe(0);
  expect(JSON.parse(run.stdout.toString())).toEqual({
    loaded: [fixture("tools.ts"), fixture("hooks.ts"), fixture("async-factory.js")],
    tools: ["greet", "sum", "fail"],
    commands: ["add-echo", "async-ready"],
    greet: [{ type: "text", text: "Hello, bin!" }],
    frames: [
      ["extension_error", "load"],
      ["extension_ui_request", "setStatus"],
    ],
  });
  expect(run.stderr.toString()).toContain("bad-syntax.ts (load)");
}, 120_000);
