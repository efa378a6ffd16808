import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { bashStructured, type BashDetails, createBashTool, readClipped } from "../../../src/tools/bash.ts";
import { runShell, type ShellResult, type ShellTail } from "../../../src/tools/shell.ts";
import type { ToolResult } from "../../../src/tools/tool.ts";
import { context, run, textOf, tmp } from "./harness.ts";

/** Running, not just an unreaped zombie (containers often lack an init that reaps). */
const isAlive = (pid: number) => {
  try {
    if (!existsSync("/proc/self/stat")) return process.kill(pid, 0);
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
};

/** A SIGKILLed process may take a moment to be scheduled and die on a loaded machine. */
async function dies(pid: number): Promise<boolean> {
  for (let i = 0; i < 100 && isAlive(pid); i++) await Bun.sleep(20);
  return !isAlive(pid);
}

describe("bash", () => {
  const bash = createBashTool();

  test.concurrent("runs in the working directory", async () => {
    const dir = tmp();
    const r = await run(bash, { command: "pwd; echo hi" }, context(dir));
    expect(textOf(r)).toBe(`${dir}\nhi\n`);
    expect(r.isError).toBe(false);
    expect(r.details).toEqual({ truncation: null, fullOutputPath: null });
  });

  test.concurrent("merges stderr with stdout in arrival order", async () => {
    const r = await run(bash, { command: "echo out; sleep 0.05; echo err >&2; sleep 0.05; echo out2" }, context(tmp()));
    expect(textOf(r)).toBe("out\nerr\nout2\n");
  });

  test.concurrent("a non-zero exit is an error with the code", async () => {
    const r = await run(bash, { command: "echo partial; exit 3" }, context(tmp()));
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("partial\n\nCommand exited with code 3");
  });

  test.concurrent("no output says so", async () => {
    expect(textOf(await run(bash, { command: "true" }, context(tmp())))).toBe("(no output)");
  });

  test.concurrent("a timeout kills the whole process group", async () => {
    const dir = tmp();
    // Without the kill, `wait` would outlast the test's own timeout (the figure: bench/latency.ts).
    const r = await run(bash, { command: "sleep 30 & echo $! > bg.pid; wait", timeout: 0.3 }, context(dir));
    expect(r.isError).toBe(true);
    expect(textOf(r)).toContain("Command timed out after 0.3 seconds");
    const pid = Number(readFileSync(join(dir, "bg.pid"), "utf8"));
    expect(await dies(pid)).toBe(true);
  });

  test.concurrent("abort stops the command promptly", async () => {
    const dir = tmp();
    const controller = new AbortController();
    const ctx = context(dir, {
      signal: controller.signal,
      onUpdate: (partial) => {
        if (controller.signal.aborted || partial.content.length === 0) return;
        controller.abort();
      },
    });
    // Without the abort, `wait` would outlast the test's own timeout (the figure: bench/latency.ts).
    const r = await run(bash, { command: "sleep 30 & echo $! > bg.pid; echo started; wait" }, ctx);
    expect(r.isError).toBe(true);
    expect(textOf(r)).toBe("started\n\nCommand aborted");
    expect(await dies(Number(readFileSync(join(dir, "bg.pid"), "utf8")))).toBe(true);
  });

  test.concurrent("an already aborted signal does not run the command to completion", async () => {
    const controller = new AbortController();
    controller.abort();
    const r = await run(bash, { command: "sleep 30" }, context(tmp(), { signal: controller.signal }));
    expect(textOf(r)).toContain("Command aborted");
  });

  test.concurrent("partial results carry the output so far", async () => {
    const updates: ToolResult[] = [];
    const ctx = context(tmp(), { onUpdate: (p) => updates.push(p) });
    await run(bash, { command: "echo one; sleep 0.3; echo two" }, ctx);
    // first an empty partial (the tool is running), then the output so far, the last one complete
    expect(updates[0]).toEqual({ content: [] });
    expect(updates.length).toBeGreaterThanOrEqual(2);
    expect(textOf(updates[1])).toStartWith("one");
    expect(updates[1].details).toEqual({ truncation: null, fullOutputPath: null });
    expect(textOf(updates.at(-1)!)).toBe("one\ntwo\n");
  });

  test.concurrent("a huge output keeps only the tail and saves everything to a file", async () => {
    const line = "0123456789012345678901234567890123456789"; // 41 bytes with its newline
    const lines = 500_000;
    const r = await run(bash, { command: `yes ${line} | head -n ${lines}` }, context(tmp()));
    const details = r.details as BashDetails;
    expect(details.truncation).toMatchObject({ truncated: true, totalLines: lines, totalBytes: lines * 41, outputLines: 1248 });
    const path = details.fullOutputPath ?? "";
    expect(path).toMatch(/pion-bash-[0-9a-f]+\.log$/);
    expect(statSync(path).size).toBe(lines * 41);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    const text = textOf(r);
    expect(text).toContain(`[Showing lines ${lines - 1247}-${lines} of ${lines} (50.0KB limit). Full output: ${path}]`);
    expect(text.split("\n")[0]).toBe(line);
    unlinkSync(path);
  });

  test.concurrent("a missing working directory is an error", async () => {
    await expect(run(bash, { command: "true" }, context("/nonexistent/pion"))).rejects.toThrow("does not exist");
  });
});

describe("runShell", () => {
  test.concurrent("updates are throttled, chunks are not", async () => {
    const decoder = new TextDecoder();
    const tails: string[] = [];
    const chunks: string[] = [];
    const r = await runShell("for i in 1 2 3 4 5; do echo $i; sleep 0.02; done", {
      cwd: tmp(),
      updateIntervalMs: 60_000,
      onTail: (t) => tails.push(t.truncation.content),
      onBytes: (b) => void chunks.push(decoder.decode(b, { stream: true })),
    });
    expect(r.exitCode).toBe(0);
    // the first chunk at once, then nothing until the end, where the pending update is flushed
    expect(tails).toHaveLength(2);
    expect(tails[0]).toStartWith("1\n");
    expect(tails[1]).toBe("1\n2\n3\n4\n5\n");
    expect(chunks.join("")).toBe("1\n2\n3\n4\n5\n");
  });

  test.concurrent("line limit alone also saves the full output", async () => {
    const r = await runShell("seq 1 3000", { cwd: tmp() });
    expect(r.truncation).toMatchObject({ truncated: true, truncatedBy: "lines", totalLines: 3000, outputLines: 2000 });
    expect(r.output.split("\n")[0]).toBe("1001");
    expect(readFileSync(r.fullOutputPath ?? "", "utf8")).toBe(`${Array.from({ length: 3000 }, (_, i) => i + 1).join("\n")}\n`);
    unlinkSync(r.fullOutputPath ?? "");
  });

  test.concurrent("signal deaths report a null exit code", async () => {
    const r = await runShell("kill -9 $$", { cwd: tmp() });
    expect(r.exitCode).toBeNull();
  });
});

describe("bash with the credential guard", () => {
  test.concurrent("the environment comes from the guard; the result, partial results and the kept full-output file are masked", async () => {
    const { createCredentialGuard } = await import("../../../src/credentials/guard.ts");
    const key = `sk-unit-${crypto.randomUUID()}`;
    const guard = createCredentialGuard({
      env: { PATH: process.env.PATH, UNIT_KEY: key, KEPT: "yes" },
      credentials: () => [{ label: "UNIT_KEY", envNames: ["UNIT_KEY"], value: key }],
    });
    const tool = createBashTool({ guard });
    const dir = tmp();
    await Bun.write(join(dir, "k"), key);
    const partials: ToolResult[] = [];
    const short = await run(tool, { command: 'echo "[$UNIT_KEY][$KEPT]"; cat k' }, { ...context(dir), onUpdate: (p) => void partials.push(p) });
    expect(textOf(short)).toBe("[][yes]\n[redacted: UNIT_KEY]");
    expect(JSON.stringify(partials)).not.toContain(key);
    const long = await run(tool, { command: "seq 1 100000; cat k; echo" }, context(dir));
    const details = long.details as BashDetails;
    expect(textOf(long)).toContain("[redacted: UNIT_KEY]");
    const full = readFileSync(details.fullOutputPath!, "utf8");
    expect(full.endsWith("100000\n[redacted: UNIT_KEY]\n")).toBe(true);
    unlinkSync(details.fullOutputPath!);
  }, 30_000);
});

describe("runShell snapshots with the credential guard", () => {
  test.concurrent("while the command runs, a snapshot leaves out an end that could begin a key, truncated or not", async () => {
    const { createCredentialGuard } = await import("../../../src/credentials/guard.ts");
    const key = `sk-unit-${crypto.randomUUID()}`;
    const guard = createCredentialGuard({ env: { PATH: process.env.PATH }, credentials: () => [{ label: "UNIT_KEY", envNames: [], value: key }] });
    const dir = tmp();
    await Bun.write(join(dir, "a"), key.slice(0, 12));
    await Bun.write(join(dir, "b"), key.slice(12));
    const tails: ShellTail[] = [];
    let released = false;
    const release = () => {
      if (!released) void Bun.write(join(dir, "go"), "");
      released = true;
    };
    const command = 'seq 1 3000; printf "line %s" "$(cat a)"; while [ ! -e go ]; do sleep 0.02; done; cat b; echo';
    const r = await runShell(command, {
      cwd: dir,
      guard,
      updateIntervalMs: 0,
      onTail: (t) => {
        tails.push(t);
        if (t.truncation.content.includes("\nline ")) release();
      },
    });
    expect(released).toBe(true);
    expect(r.output.endsWith("3000\nline [redacted: UNIT_KEY]")).toBe(true);
    const held = tails.find((t) => t.truncation.content.endsWith("line "))!;
    expect(held.truncation).toMatchObject({ truncated: true, totalLines: 3001, totalBytes: r.truncation.totalBytes - "[redacted: UNIT_KEY]\n".length });
    expect(JSON.stringify(tails)).not.toContain(key.slice(0, 12));
    unlinkSync(r.fullOutputPath!);
  }, 30_000);
});

describe("runShell under a command that prints faster than pion reads", () => {
  test.concurrent("the event loop still gets turns: a timer's abort arrives and ends the command", async () => {
    // In a child process, so a starved loop cannot hang this one: a masker slower than `yes`
    // writes keeps the reader from ever reaching the file's end.
    const dir = tmp();
    const pidFile = join(dir, "pid");
    const script = `
      import { runShell } from ${JSON.stringify(join(import.meta.dir, "../../../src/tools/shell.ts"))};
      const slow = {
        childEnv: () => ({ PATH: process.env.PATH }),
        maskBytes: (b) => b,
        byteStream: () => ({ masked: 0, push: (chunk) => { for (const t = performance.now(); performance.now() - t < 2; ); return chunk; } }),
      };
      const c = new AbortController();
      setTimeout(() => c.abort(), 100);
      const r = await runShell(${JSON.stringify(`echo $$ > ${pidFile}; exec yes`)}, { cwd: ${JSON.stringify(dir)}, signal: c.signal, guard: slow });
      console.log(JSON.stringify({ cancelled: r.cancelled }));`;
    const proc = Bun.spawn([process.execPath, "-e", script], { stdout: "pipe", env: { ...process.env, TMPDIR: dir } });
    // A safety net for a regression, not a measurement: a starved child would run forever.
    const watchdog = setTimeout(() => proc.kill("SIGKILL"), 20_000);
    try {
      const out = (await new Response(proc.stdout).text()).trim();
      expect(out).toBe(JSON.stringify({ cancelled: true }));
    } finally {
      clearTimeout(watchdog);
      try {
        process.kill(-Number(readFileSync(pidFile, "utf8")), "SIGKILL");
      } catch {
        // The command's group has already gone.
      }
    }
  }, 30_000);
});

describe("bash structuredContent", () => {
  const shell = (over: Partial<ShellResult> = {}): ShellResult => ({
    output: "hi\n",
    exitCode: 0,
    cancelled: false,
    timedOut: false,
    fullOutputPath: null,
    truncation: { truncated: false } as ShellResult["truncation"],
    ...over,
  });

  test("a command that ended: its output, exit code and wall time in tenths of a second", () => {
    expect(bashStructured(shell(), 1234)).toEqual({ output: "hi\n", truncated: false, exit_code: 0, wall_time_seconds: 1.2 });
    expect(bashStructured(shell({ exitCode: 2 }), 40)).toEqual({ output: "hi\n", truncated: false, exit_code: 2, wall_time_seconds: 0 });
  });

  test("none for an abort, a timeout or a signal", () => {
    expect(bashStructured(shell({ cancelled: true, exitCode: null }), 1)).toBeUndefined();
    expect(bashStructured(shell({ timedOut: true, exitCode: null }), 1)).toBeUndefined();
    expect(bashStructured(shell({ exitCode: null }), 1)).toBeUndefined();
  });

  test("with a full-output file: all of it up to the limit, then head and tail and the file's path", () => {
    const path = join(tmp(), "out.log");
    writeFileSync(path, "0123456789");
    expect(bashStructured(shell({ fullOutputPath: path, output: "89" }), 0)).toEqual({ output: "0123456789", truncated: false, exit_code: 0, wall_time_seconds: 0 });
    expect(readClipped(path, 10)).toEqual({ text: "0123456789", clipped: false });
    expect(readClipped(path, 4)).toEqual({ text: "01\n\n[... 6 bytes omitted ...]\n\n89", clipped: true });
    expect(Object.keys(bashStructured(shell({ fullOutputPath: path }), 0)!)).toEqual(["output", "truncated", "exit_code", "wall_time_seconds"]);
  });

  test("a cut never splits a character", () => {
    const path = join(tmp(), "utf8.log");
    writeFileSync(path, "ééééé"); // 10 bytes, 2 per character
    expect(readClipped(path, 5)).toEqual({ text: "é\n\n[... 5 bytes omitted ...]\n\né", clipped: true });
  });

  test("the tool sets it; a failing command keeps it beside isError", async () => {
    const r = await run(createBashTool(), { command: "echo out; exit 4" }, context(tmp()));
    expect(r.isError).toBe(true);
    expect(r.structuredContent).toEqual({ output: "out\n", truncated: false, exit_code: 4, wall_time_seconds: expect.any(Number) });
  });
});
