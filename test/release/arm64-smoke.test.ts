import { expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import pkg from "../../package.json" with { type: "json" };
import { tempDirs, type Rec } from "../support/pion.ts";
import { describeWith } from "../support/requires.ts";

// The linux-arm64 release binary under qemu-aarch64 with Debian's arm64 libraries: the one
// cross-built target this machine can run. `bun run build --release` makes the binary (.ci/run
// does, before the tests); qemu-user, libc6-arm64-cross and libstdc++6-arm64-cross run it.
const ROOT = resolve(import.meta.dir, "../..");
const BINARY = join(ROOT, `dist/release/pion-${pkg.version}-linux-arm64`);
const SYSROOT = "/usr/aarch64-linux-gnu";
const QEMU = Bun.which("qemu-aarch64");
const HELLO = join(ROOT, "docs/examples/scripted-hello.json");

const missing = !QEMU
  ? "qemu-aarch64 (Debian's qemu-user)"
  : !existsSync(join(SYSROOT, "lib/ld-linux-aarch64.so.1"))
    ? `${SYSROOT} (Debian's libc6-arm64-cross, libstdc++6-arm64-cross)`
    : !existsSync(BINARY)
      ? `${BINARY} (bun run build --release)`
      : undefined;

const lines = (out: string): Rec[] => out.split("\n").filter(Boolean).map((l) => JSON.parse(l));

/** Runs the arm64 binary through `sh -c` so a test can pipe its output (`{pion}` stands for it). */
async function arm64(script: string, dirs: { home: string; cwd: string }, stdin = "") {
  const pion = `${QEMU} -L ${SYSROOT} ${BINARY}`;
  const proc = Bun.spawn(["sh", "-c", script.replaceAll("{pion}", pion)], {
    cwd: dirs.cwd,
    env: { ...process.env, PION_HOME: dirs.home },
    stdin: new TextEncoder().encode(stdin),
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([proc.stdout.text(), proc.stderr.text(), proc.exited]);
  return { stdout, stderr, code };
}

describeWith("linux-arm64 release binary under qemu", missing, () => {
  test.concurrent("--version names the target; get_state answers in RPC mode", async () => {
    const dirs = tempDirs();
    const v = await arm64("{pion} --version", dirs);
    expect(v.stdout).toMatch(new RegExp(`^${pkg.version.replaceAll(".", "\\.")}\\+\\S+ linux-arm64\\n$`));
    const r = await arm64("{pion} --mode rpc", dirs, '{"id":"s","type":"get_state"}\n');
    expect(r.code).toBe(0);
    expect(lines(r.stdout)).toEqual([expect.objectContaining({ id: "s", type: "response", command: "get_state", success: true })]);
  });

  test.concurrent("a scripted prompt runs bash, persists, and the session reopens and exports", async () => {
    const dirs = tempDirs();
    const run = await arm64(`{pion} --mode json --provider scripted --model ${HELLO} "Say hello"`, dirs);
    expect(run.code).toBe(0);
    const recs = lines(run.stdout);
    const bash = recs.find((r) => r.type === "tool_execution_end");
    expect(bash).toMatchObject({ toolName: "bash", result: { content: [{ type: "text", text: "hello from project\n" }] } });
    expect(recs.at(-1)).toMatchObject({ type: "agent_settled", aborted: false });
    const id = recs[0]!.id as string;

    // Reopened from the SQLite database by id, in a second process.
    const reopened = await arm64(`{pion} --mode rpc --session ${id}`, dirs, '{"id":"m","type":"get_messages"}\n');
    expect(reopened.code).toBe(0);
    const messages = lines(reopened.stdout)[0]!.data.messages as Rec[];
    expect(messages.map((m) => m.role)).toEqual(["user", "assistant", "toolResult", "assistant"]);
    expect(messages.at(-1)!.content).toEqual([{ type: "text", text: "Hello! The folder says hello back." }]);

    const folder = join(dirs.home, "sessions", readdirSync(join(dirs.home, "sessions")).find((f) => f.startsWith("--"))!);
    const jsonl = join(folder, readdirSync(folder)[0]!);
    const exported = await arm64(`{pion} --export ${jsonl} out.html`, dirs);
    expect(exported.code).toBe(0);
    expect(readFileSync(join(dirs.cwd, "out.html"), "utf8")).toContain("hello from project");
  });

  test.concurrent("models --json through a pipe, and JSON mode's exit codes", async () => {
    const dirs = tempDirs();
    const models = await arm64("{pion} models --json | cat", dirs);
    expect(models.code).toBe(0);
    expect(JSON.parse(models.stdout).models.length).toBeGreaterThan(10); // the whole document arrived

    const none = await arm64(`{pion} --mode json --provider scripted --model ${HELLO}`, dirs);
    expect(none.code).toBe(2);
    writeFileSync(join(dirs.cwd, "empty.json"), "[]");
    const failed = await arm64("{pion} --mode json --provider scripted --model empty.json hi", dirs);
    expect(failed.code).toBe(1);
    expect(lines(failed.stdout).find((r) => r.type === "message_end" && r.message.role === "assistant")!.message.stopReason).toBe("error");
  });

  test.concurrent("a deny rule finds a command inside a substitution: the embedded tree-sitter WASM parses", async () => {
    const dirs = tempDirs();
    const r = await arm64(`{pion} --mode json --provider scripted --model ${HELLO} --deny 'bash(basename *)' hi`, dirs);
    expect(r.code).toBe(0);
    expect(lines(r.stdout).find((x) => x.type === "tool_execution_end")).toMatchObject({
      isError: true,
      result: { content: [{ type: "text", text: expect.stringContaining('denied by the permission rule "deny bash(basename *)"') }] },
    });
  });
});
