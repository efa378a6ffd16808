import { describe, expect, test } from "bun:test";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, spawnPiped, tempDirs, writeFakeModels } from "../support/pion.ts";

/** The exit-code table of README, one row at a time, through real pipes. */
const MODEL = ["--model", "fake/fake-model"];

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  return { fake, dirs };
}

describe("exit codes of the one-shot modes", () => {
  test.concurrent("0 when the run succeeds, 1 when it fails, 2 for a usage error", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    expect((await runPion(["-p", ...MODEL, "hi"], dirs)).code).toBe(0);
    fake.enqueue({ kind: "http_error", status: 400, message: "bad request" });
    const failed = await runPion(["-p", ...MODEL, "hi"], dirs);
    expect(failed.code).toBe(1);
    expect(failed.stderr).toContain("bad request");
    fake.enqueue({ kind: "http_error", status: 400, message: "bad request" });
    expect((await runPion(["--mode", "json", ...MODEL, "hi"], dirs)).code).toBe(1);
    const usage = await runPion(["-p", "--no-such-flag", "hi"], dirs);
    expect(usage.code).toBe(2);
    expect(usage.stderr.split("\n").filter(Boolean)).toHaveLength(1);
    expect((await runPion(["-p", ...MODEL], dirs)).code).toBe(2); // no prompt
    await fake.stop();
  });

  for (const [signal, status] of [
    ["SIGINT", 130],
    ["SIGTERM", 143],
  ] as const) {
    test.concurrent(`${signal} aborts the run, which persists, and exits ${status}`, async () => {
      const { fake, dirs } = setup();
      fake.enqueue({ blocks: [{ type: "text", text: ["partial", " more"] }], stallAfterChunks: 4 });
      const proc = spawnPiped(["--mode", "json", ...MODEL, "go"], dirs);
      const reader = proc.stdout.getReader();
      let out = "";
      while (!out.includes('"message_update"')) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      proc.kill(signal);
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        out += new TextDecoder().decode(value);
      }
      expect(await proc.exited).toBe(status);
      expect(await new Response(proc.stderr).text()).toContain("interrupted");
      const lines = out.split("\n").filter(Boolean).map((l) => JSON.parse(l));
      // the aborted reply was committed and announced before exit
      expect(lines.some((r) => r.type === "message_end" && r.message.role === "assistant" && r.message.stopReason === "aborted")).toBe(true);
      await fake.stop();
    });
  }
});
