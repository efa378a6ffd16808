import { describe, expect, test } from "bun:test";
import { existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { BINARY, Pion, runPion, tempDirs, writeFakeModels } from "../support/pion.ts";

describe("command line", () => {
  const cases: [string, string[], RegExp][] = [
    ["unknown flag", ["--mode", "rpc", "--bogus"], /Unknown option: --bogus/],
    ["missing value", ["--mode", "rpc", "--model"], /--model needs a value/],
    ["unknown mode", ["--mode", "nope"], /unknown mode "nope"/],
    ["@file in rpc mode", ["--mode", "rpc", "@notes.md"], /@file arguments are not supported in RPC mode/],
    ["unknown model", ["--mode", "rpc", "--model", "no-such-model-anywhere"], /^pion: Model "no-such-model-anywhere" not found\. Use --list-models to see available models\.$/m],
  ];
  for (const [name, args, err] of cases) {
    test.concurrent(`${name}: one line on stderr, non-zero exit, nothing on stdout`, async () => {
      const r = await runPion(args, tempDirs());
      expect(r.code).not.toBe(0);
      expect(r.stdout).toBe("");
      expect(r.stderr).toMatch(err);
      expect(r.stderr.trim().split("\n").length).toBe(1);
    });
  }

  test.concurrent("--version and --help", async () => {
    const v = await runPion(["--version"], tempDirs());
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+\+\S+ [a-z]+-[a-z0-9]+(-musl)?\n$/);
    const h = await runPion(["--help"], tempDirs());
    expect(h.code).toBe(0);
    expect(h.stdout).toContain("--mode");
    expect(h.stdout).toContain("--models");
    // Piped, not a terminal: no colour codes.
    expect(h.stdout).not.toContain("\x1b[");
  });

  test.concurrent("a sessions directory that cannot be used is a clear startup error", async () => {
    const dirs = tempDirs();
    writeFileSync(join(dirs.home, "sessions"), "a file where the sessions folder should be\n");
    const r = await runPion(["--mode", "rpc"], { ...dirs, stdin: '{"type":"get_state"}\n' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toStartWith(`pion: Cannot use the sessions directory ${join(dirs.home, "sessions")}`);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  test.concurrent("a session store that fails during a run ends the prompt with an error, not a plain stop", async () => {
    const dirs = tempDirs();
    writeFakeModels(dirs.home, "http://127.0.0.1:9");
    const replies = join(dirs.cwd, "replies.json");
    writeFileSync(replies, JSON.stringify([{ text: "never stored" }]));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--provider", "scripted", "--model", replies] });
    await p.request({ type: "get_state" });
    // The database is opened with the first entry; take its folder away first.
    rmSync(join(dirs.home, "sessions"), { recursive: true });
    writeFileSync(join(dirs.home, "sessions"), "not a folder\n");
    await p.request({ type: "prompt", message: "hi", id: "p1" });
    const result = await p.waitFor("prompt_result");
    expect(result).toMatchObject({ id: "p1", stopReason: "error", aborted: false });
    expect(result.errorMessage).toContain("sessions");
    expect(p.records.some((r) => r.type === "agent_settled")).toBe(true);
    // The process keeps serving.
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    await p.close();
    expect(p.stderr).toContain("the run stopped on an error");
  });

  test.concurrent("an invalid models.json provider is skipped with a warning naming the file and field; pion still starts", async () => {
    const dirs = tempDirs();
    await Bun.write(`${dirs.home}/models.json`, '{"providers":{"x":{"baseUrl":"http://h","models":[{"name":"no id"}]}}}');
    const r = await runPion(["--mode", "rpc"], dirs);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/models\.json: provider "x" skipped: Invalid field "models\.0\.id"/);
  });
});

describe("compiled binary", () => {
  const built = existsSync(BINARY);
  // CI builds the binary before the tests; locally it may be missing.
  test.skipIf(!built && !process.env.CI)("dist/pion answers get_state from another directory", async () => {
    expect(built).toBe(true);
    const p = new Pion({ binary: true });
    const st = await p.request({ type: "get_state" });
    expect(st).toMatchObject({ type: "response", command: "get_state", success: true });
    expect(await p.close()).toBe(0);
    const v = await runPion(["--version"], { ...tempDirs(), binary: true });
    expect(v.stdout).toMatch(/^\d+\.\d+\.\d+\+/);
  });

  test.skipIf(!built && !process.env.CI)("dist/pion streams bash output escaped exactly (the SIMD escaper runs in the binary)", async () => {
    const p = new Pion({ binary: true });
    // Long ASCII runs, every JSON escape, and multi-byte text, printed by the command itself.
    const script = `printf 'plain text that is long enough to fill vectors\\n"quoted" back\\\\slash\\ttab\\001\\n'; printf 'héllo € 😀\\n'; seq 1 3000`;
    const r = await p.request({ type: "bash", command: script, id: "b1" });
    expect(r.success).toBe(true);
    const streamed = p.records.filter((x) => x.type === "bash_execution_update" && x.id === "b1").map((x) => x.delta as string).join("");
    const expected = `plain text that is long enough to fill vectors\n"quoted" back\\slash\ttab\u0001\nhéllo € 😀\n${Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")}\n`;
    expect(streamed).toBe(expected);
    await p.close();
  });

  test.skipIf(!built && !process.env.CI)("dist/pion ignores the project's bunfig.toml and .env", async () => {
    const dirs = tempDirs();
    writeFileSync(join(dirs.cwd, "bunfig.toml"), 'preload = ["./preload.ts"]\n');
    writeFileSync(join(dirs.cwd, "preload.ts"), 'process.stderr.write("PROJECT PRELOAD RAN\\n");\n');
    writeFileSync(join(dirs.cwd, ".env"), "PION_TEST_FROM_DOTENV=leaked\n");
    const r = await runPion(["--mode", "rpc"], { ...dirs, binary: true, stdin: `${JSON.stringify({ type: "bash", command: 'echo "dotenv=[$PION_TEST_FROM_DOTENV]"' })}\n` });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain("PROJECT PRELOAD RAN");
    expect(r.stdout).toContain("dotenv=[]");
  });

  test.skipIf(!built && !process.env.CI)("dist/pion streams replies through both SDKs (loaded on first use)", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [{ type: "text", text: ["from ", "anthropic"] }] }, { blocks: [{ type: "text", text: ["from ", "openai"] }] });
    const p = new Pion({ ...dirs, binary: true, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.request({ type: "prompt", message: "one" });
    await p.waitFor("agent_settled");
    await p.request({ type: "set_model", provider: "fake-openai", modelId: "fake-chat" });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "two" });
    await p.waitFor("agent_settled", from);
    const texts = p.records.filter((r) => r.type === "message_end" && r.message.role === "assistant").map((r) => r.message.content[0].text);
    expect(texts).toEqual(["from anthropic", "from openai"]);
    await p.close();
    await fake.stop();
  });
});
