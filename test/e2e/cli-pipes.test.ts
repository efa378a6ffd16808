import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import CATALOG_INDEX from "../../src/providers/catalog/builtin-index.json" with { type: "json" };
import { startFakeProvider } from "../support/fake-provider.ts";
import { entryCommand, runPion, spawnPiped, tempDirs, writeFakeModels } from "../support/pion.ts";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  return { fake, dirs };
}
const MODEL = ["--model", "fake/fake-model"];
/** The text of the first user message the fake provider was sent. */
const firstUserText = (fake: ReturnType<typeof startFakeProvider>): string => {
  const body = fake.requests[0]!.body as { messages: { role: string; content: string | { type: string; text?: string }[] }[] };
  const content = body.messages.find((m) => m.role === "user")!.content;
  return typeof content === "string" ? content : content.filter((c) => c.type === "text").map((c) => c.text).join("");
};

/** pion with stdout on a real pipe that is read only after a pause, so the pipe fills before pion exits. */
async function readSlowly(args: string[], dirs: { home: string; cwd: string }, env: Record<string, string> = {}) {
  const proc = spawnPiped(args, dirs, { env });
  await Bun.sleep(400);
  const [out, stderr, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), new Response(proc.stderr).text(), proc.exited]);
  return { bytes: new Uint8Array(out), stderr, code };
}

describe("output reaches a pipe whole", () => {
  test.concurrent("models --json over 1 MB arrives as one valid JSON document", async () => {
    const r = await readSlowly(["models", "--json"], tempDirs());
    expect(r.code).toBe(0);
    expect(r.bytes.length).toBeGreaterThan(1 << 20);
    expect(() => JSON.parse(new TextDecoder().decode(r.bytes))).not.toThrow();
  });

  test.concurrent("--list-models and sessions show --json arrive whole, as they do written to a file", async () => {
    const dirs = tempDirs();
    // a key for every provider of the catalog (names from its index): hundreds of models to list
    const keys = Object.fromEntries(Object.values(CATALOG_INDEX.env).flat().map((name, i) => [name, `test-key-${i}-abcdefgh`]));
    const toFile = async (args: string[]) => {
      const out = join(dirs.cwd, "out.txt");
      const p = Bun.spawn([...entryCommand(), ...args], { cwd: dirs.cwd, env: { ...process.env, ...keys, PION_HOME: dirs.home }, stdin: "ignore", stdout: Bun.file(out), stderr: "ignore" });
      await p.exited;
      return new Uint8Array(await Bun.file(out).arrayBuffer());
    };
    const listed = await readSlowly(["--list-models"], dirs, keys);
    expect(listed.code).toBe(0);
    expect(listed.bytes.length).toBeGreaterThan(64 * 1024); // more than a pipe holds
    expect(listed.bytes).toEqual(await toFile(["--list-models"]));
    // a session file of 2 MB, shown as JSON
    const lines = [JSON.stringify({ type: "session", version: 3, id: "01a22799-0000-7000-8000-000000000001", timestamp: "2026-11-29T13:58:47.245Z", cwd: dirs.cwd })];
    let parent: string | null = null;
    for (let i = 0; i < 2000; i++) {
      const id = i.toString(16).padStart(8, "0");
      const role = i % 2 === 0 ? "user" : "assistant";
      lines.push(JSON.stringify({ type: "message", id, parentId: parent, timestamp: "2026-11-29T13:58:47.340Z", message: { role, content: [{ type: "text", text: `${role} ${i} ${"x".repeat(1000)}` }], timestamp: 1795960727335 } }));
      parent = id;
    }
    const file = join(dirs.cwd, "big.jsonl");
    writeFileSync(file, `${lines.join("\n")}\n`);
    const shown = await readSlowly(["sessions", "show", file, "--json"], dirs);
    expect(shown.code).toBe(0);
    expect(shown.bytes.length).toBeGreaterThan(1 << 20);
    expect(() => JSON.parse(new TextDecoder().decode(shown.bytes))).not.toThrow();
  });

  test.concurrent("a reader that closes after one line ends pion quietly with status 0", async () => {
    const dirs = tempDirs();
    const proc = spawnPiped(["models", "--json"], dirs);
    const reader = proc.stdout.getReader();
    const first = await reader.read();
    expect(first.done).toBe(false);
    await reader.cancel();
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(stderr).toBe("");
    expect(code).toBe(0);
  });

  test.concurrent("JSON and RPC mode: a reader that closes after one line ends pion quietly, status 0, the run saved", async () => {
    const { fake, dirs } = setup();
    // a reply long enough that pion is still writing when the reader leaves
    fake.enqueue({ blocks: [{ type: "text", text: Array.from({ length: 2000 }, (_, i) => `word${i} `) }] });
    const json = spawnPiped(["--mode", "json", ...MODEL, "go"], dirs);
    const reader = json.stdout.getReader();
    expect((await reader.read()).done).toBe(false);
    await reader.cancel();
    const [stderr, code] = await Promise.all([new Response(json.stderr).text(), json.exited]);
    expect([code, stderr]).toEqual([0, ""]);
    const listed = await runPion(["sessions", "list", "--json"], dirs);
    expect(JSON.parse(listed.stdout).sessions.length).toBe(1);

    const rpc = spawnPiped(["--mode", "rpc", ...MODEL], dirs, { stdin: "pipe" });
    rpc.stdin.write('{"type":"get_state"}\n');
    rpc.stdin.flush();
    const r2 = rpc.stdout.getReader();
    expect((await r2.read()).done).toBe(false);
    await r2.cancel();
    for (let i = 0; i < 50; i++) rpc.stdin.write('{"type":"get_state"}\n');
    rpc.stdin.flush();
    const [stderr2, code2] = await Promise.all([new Response(rpc.stderr).text(), rpc.exited]);
    expect([code2, stderr2]).toEqual([0, ""]);
    await fake.stop();
  });
});

describe("piped stdin", () => {
  test.concurrent("goes before the message in print mode", async () => {
    const { fake, dirs } = setup();
    const r = await runPion(["-p", ...MODEL, "Review this change"], { ...dirs, stdin: "diff --git a/x b/x\n+added\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("ok\n");
    expect(firstUserText(fake)).toBe("diff --git a/x b/x\n+added\n\nReview this change");
  });

  test.concurrent("goes before the first prompt only, in json mode", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "two" }] });
    const r = await runPion(["--mode", "json", ...MODEL, "first", "second"], { ...dirs, stdin: "context" });
    expect(r.code).toBe(0);
    expect(firstUserText(fake)).toBe("context\n\nfirst");
    const second = (fake.requests[1]!.body as { messages: { role: string; content: unknown }[] }).messages.filter((m) => m.role === "user");
    expect(JSON.stringify(second.at(-1))).toContain('"second"');
    expect(JSON.stringify(second.at(-1))).not.toContain("context");
  });

  test.concurrent("is the prompt when no message is given; empty stdin adds nothing", async () => {
    const { fake, dirs } = setup();
    const r = await runPion(["--mode", "text", ...MODEL], { ...dirs, stdin: "only stdin\n" });
    expect(r.code).toBe(0);
    expect(firstUserText(fake)).toBe("only stdin");
    const other = setup();
    const e = await runPion(["-p", ...MODEL, "just this"], { ...other.dirs, stdin: "" });
    expect(e.code).toBe(0);
    expect(firstUserText(other.fake)).toBe("just this");
  });

  test.concurrent("that is not UTF-8 exits 1 naming stdin, before any request", async () => {
    const { fake, dirs } = setup();
    const proc = spawnPiped(["-p", ...MODEL, "hi"], dirs, { stdin: new Uint8Array([0x66, 0xff, 0xfe, 0x80]) });
    const [stderr, code] = await Promise.all([new Response(proc.stderr).text(), proc.exited]);
    expect(code).toBe(1);
    expect(stderr).toContain("stdin");
    expect(fake.requests.length).toBe(0);
  });
});

/** A 1x1 PNG; saved without an image extension, since the content decides. */
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64");

describe("@path arguments", () => {
  test.concurrent("a text file goes into the first prompt framed with its path, after stdin, before the message", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "notes.txt"), "line one\nline two\n");
    const r = await runPion(["-p", ...MODEL, "@notes.txt", "explain"], { ...dirs, stdin: "from stdin\n" });
    expect(r.stderr).toBe("");
    expect(r.code).toBe(0);
    expect(firstUserText(fake)).toBe(`from stdin\n\n<file name="${join(dirs.cwd, "notes.txt")}">\nline one\nline two\n\n</file>\nexplain`);
  });

  test.concurrent("an image is known by its content and sent as an image block", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "shot.dat"), PNG);
    const r = await runPion(["--mode", "json", ...MODEL, "@shot.dat", "what is this"], dirs);
    expect(r.code).toBe(0);
    const body = fake.requests[0]!.body as { messages: { role: string; content: { type: string; source?: { media_type: string; data: string } }[] }[] };
    const image = body.messages[0]!.content.find((c) => c.type === "image");
    expect(image?.source?.media_type).toBe("image/png");
    expect(image?.source?.data).toBe(PNG.toString("base64"));
    expect(firstUserText(fake)).toBe(`<file name="${join(dirs.cwd, "shot.dat")}"></file>\nwhat is this`);
  });

  test.concurrent("a large text file is cut at the read tool's limit and the cut is said", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "big.txt"), Array.from({ length: 3000 }, (_, i) => `row ${i + 1}`).join("\n"));
    const r = await runPion(["-p", ...MODEL, "@big.txt", "sum"], dirs);
    expect(r.code).toBe(0);
    const text = firstUserText(fake);
    expect(text).toContain("row 2000\n");
    expect(text).not.toContain("row 2001");
    expect(text).toContain("showing lines 1-2000 of 3000");
  });

  for (const [name, make, says] of [
    ["a missing file", (_cwd: string) => "@missing.txt", "file not found"],
    ["a folder", (cwd: string) => (mkdirSync(join(cwd, "sub")), "@sub"), "is a directory"],
    ["a binary file that is no image", (cwd: string) => (writeFileSync(join(cwd, "blob.bin"), Buffer.from([0, 1, 2, 0, 0xff, 0xfe])), "@blob.bin"), "binary file"],
  ] as const) {
    test.concurrent(`${name} exits 1 naming it before any request`, async () => {
      const { fake, dirs } = setup();
      const arg = make(dirs.cwd);
      const r = await runPion(["-p", ...MODEL, arg, "look"], dirs);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(arg);
      expect(r.stderr).toContain(says);
      expect(r.stderr).not.toContain("    at ");
      expect(fake.requests.length).toBe(0);
    });
  }

  test.concurrent("~ is the home folder", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.home, "h.txt"), "from home");
    const r = await runPion(["-p", ...MODEL, "@~/h.txt", "x"], { ...dirs, env: { HOME: dirs.home } });
    expect(r.code).toBe(0);
    expect(firstUserText(fake)).toContain("from home");
  });

  test.concurrent("RPC mode refuses @file arguments", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "notes.txt"), "x");
    const r = await runPion(["--mode", "rpc", ...MODEL, "@notes.txt"], { ...dirs, stdin: "" });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("@file arguments are not supported in RPC mode");
    expect(fake.requests.length).toBe(0);
  });
});
