import { expect, test } from "bun:test";
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { gradientPng, imageSize } from "../support/images.ts";
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

/** The reference's `-p` run of `args` in `dirs.cwd` against the fake provider at `url` (its agent folder beside pion's home); its exit code. */
async function referencePrint(args: string[], dirs: { home: string; cwd: string }, url: string): Promise<number> {
  const refDir = join(dirs.home, "ref-agent");
  mkdirSync(refDir, { recursive: true });
  writeFakeModels(refDir, url);
  // async: the fake provider answers from this process's event loop
  const ref = Bun.spawn([process.execPath, CLI, "-p", "--provider", "fake", "--model", "fake-model", ...args], {
    cwd: dirs.cwd,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dirs.home, PI_CODING_AGENT_DIR: refDir, PI_OFFLINE: "1", PI_SKIP_VERSION_CHECK: "1", PI_TELEMETRY: "0" },
    stdin: "ignore",
    stdout: "ignore",
    stderr: "pipe",
  });
  return ref.exited;
}

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
    expect(await referencePrint(["@notes.txt", "Summarize it"], dirs, fake.url)).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const [mine, theirs] = fake.requests.map((r) => firstUser(r.body));
    expect(mine).toBe(theirs!);
    expect(mine).toContain("line two");
    await fake.stop();
  }, 60_000);

  test("a large image and a small one: the same text (empty frames, the note after the message), the same image sizes", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.cwd, "big.png"), gradientPng(3000, 2000));
    writeFileSync(join(dirs.cwd, "small.png"), gradientPng(40, 30));
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] }, { blocks: [{ type: "text", text: "ok" }] });
    const args = ["@big.png", "@small.png", "What is in them?"];
    const pion = await runPion(["-p", "--model", "fake/fake-model", ...args], dirs);
    expect(pion.code).toBe(0);
    expect(await referencePrint(args, dirs, fake.url)).toBe(0);
    expect(fake.requests).toHaveLength(2);
    const [mine, theirs] = fake.requests.map((r) => firstUser(r.body));
    expect(mine).toBe(theirs!);
    expect(mine).toContain(`<file name="${join(dirs.cwd, "big.png")}"></file>`);
    expect(mine).toContain("What is in them?\n\n[Image: original 3000x2000, displayed at 2000x1333.");
    type Img = { type: string; source?: { data: string } };
    const sizes = fake.requests.map((r) => ((r.body as { messages: { role: string; content: Img[] }[] }).messages.find((m) => m.role === "user")!.content).filter((c) => c.type === "image").map((c) => imageSize(c.source!.data)));
    expect(sizes[0]).toEqual([[2000, 1333], [40, 30]]);
    expect(sizes[0]).toEqual(sizes[1]!);
    await fake.stop();
  }, 60_000);
});
