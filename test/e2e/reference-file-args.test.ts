import { expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { runPion, tempDirs, writeFakeModels } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

/**
 * The first prompt pion builds from `@file` arguments, side by side with the reference's for the
 * same input: both send it to the same fake provider, which records the request. The reference
 * runs from PION_REFERENCE_PKG (.ci/run installs it outside the repo) under bun.
 */
const REFERENCE = process.env.PION_REFERENCE_PKG;
const CLI = REFERENCE ? join(REFERENCE, "dist/cli.js") : "";
const missing = !REFERENCE ? "PION_REFERENCE_PKG (the folder of @earendil-works/pi-coding-agent) is not set" : existsSync(CLI) ? undefined : `${CLI} does not exist`;

type Body = { messages: { role: string; content: string | { type: string; text?: string }[] }[] };
const firstUser = (body: unknown): string => {
  const m = (body as Body).messages.find((x) => x.role === "user")!;
  return typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? c.text : `[${c.type}]`)).join("|");
};

describeWith("@file arguments as the reference frames them", missing, () => {
  test("a text file and a message: the same first user message", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.cwd, "notes.txt"), "line one\nline two\n");
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const pion = await runPion(["-p", "--model", "fake/fake-model", "@notes.txt", "Summarize it"], dirs);
    expect(pion.code).toBe(0);
    const refDir = join(dirs.home, "ref-agent");
    mkdirSync(refDir, { recursive: true });
    writeFakeModels(refDir, fake.url);
    // async: the fake provider answers from this process's event loop
    const ref = Bun.spawn([process.execPath, CLI, "-p", "--provider", "fake", "--model", "fake-model", "@notes.txt", "Summarize it"], {
      cwd: dirs.cwd,
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home, PI_CODING_AGENT_DIR: refDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" },
      stdin: "ignore",
      stdout: "ignore",
      stderr: "pipe",
    });
    expect(await ref.exited).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const [mine, theirs] = fake.requests.map((r) => firstUser(r.body));
    expect(mine).toBe(theirs!);
    expect(mine).toContain("line two");
    await fake.stop();
  }, 60_000);
});
