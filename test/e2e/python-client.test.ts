import { expect, test } from "bun:test";
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SOURCE_ENTRY, tempDirs } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

const ROOT = resolve(import.meta.dir, "../..");
const CLIENT = join(ROOT, "docs/examples/client.py");
const HELLO = join(ROOT, "docs/examples/scripted-hello.json");
const UI = join(ROOT, "test/fixtures/extensions/ui.ts");
const PYTHON = Bun.which("python3");

async function runExample(prompt: string, pionArgs: string[], dirs: { home: string; cwd: string }) {
  const proc = Bun.spawn(["python3", CLIENT, "--pion", `bun ${SOURCE_ENTRY}`, prompt, "--", ...pionArgs], {
    cwd: dirs.cwd,
    env: { ...process.env, PION_HOME: dirs.home },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([new Response(proc.stdout).text(), new Response(proc.stderr).text(), proc.exited]);
  return { stdout, stderr, code };
}

function jsonlFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".jsonl")).map((f) => join(dir, f));
}

describeWith("docs/examples/client.py (python3, standard library only)", PYTHON ? undefined : "python3 on PATH", () => {
  test.concurrent("streams the scripted reply's text and reports the prompt's result", async () => {
    const dirs = tempDirs();
    const r = await runExample("Say hello", ["--provider", "scripted", "--model", HELLO], dirs);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("Let me look around first.\nHello! The folder says hello back.\n[done] stopReason=stop input=300 output=42 cost=0\n");
    expect(r.stderr).toContain("[tool] bash");
  });

  test.concurrent("denies a tool approval under --permission-mode ask, and the run goes on", async () => {
    const dirs = tempDirs();
    const r = await runExample("Say hello", ["--provider", "scripted", "--model", HELLO, "--permission-mode", "ask"], dirs);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("[denied] bash: ask mode");
    expect(r.stdout).toContain("[done] stopReason=stop");
    const recorded = jsonlFiles(dirs.home).map((f) => readFileSync(f, "utf8")).join("");
    expect(recorded).toContain("Tool call denied by the user: the example client approves nothing");
  });

  test.concurrent("a U+2028 inside a reply stays in one record", async () => {
    const dirs = tempDirs();
    const script = join(dirs.cwd, "sep.json");
    writeFileSync(script, JSON.stringify([{ text: "before\u2028after\u2029end", chunkSize: 100 }]));
    const r = await runExample("go", ["--provider", "scripted", "--model", script], dirs);
    expect(r.code).toBe(0);
    expect(r.stdout.split("\n")[0]).toBe("before\u2028after\u2029end");
  });

  test.concurrent("answers an extension dialog with its default (the first option)", async () => {
    const dirs = tempDirs();
    const r = await runExample("/dialog select", ["--provider", "scripted", "--model", HELLO, "-e", UI], dirs);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain("[handled by an extension]");
    const recorded = jsonlFiles(dirs.home).map((f) => readFileSync(f, "utf8")).join("");
    expect(recorded).toContain('"data":{"method":"select","result":"Allow"}');
  });
});
