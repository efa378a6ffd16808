import { describe, expect, test } from "bun:test";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

// The shapes the reference 1.6 gives tool_execution_end's result.structuredContent (probed by
// running it against the fake provider): bash and read fill it, the other built-ins do not, and
// the stored toolResult message never carries it.

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--tools", "read,bash,edit,write,grep,find,ls"] });
  return { fake, p, ...dirs };
}

const wall = expect.any(Number);

describe("structuredContent of built-in tool results", () => {
  test.concurrent("bash, read and the others, on success and on failure; not on the stored message", async () => {
    const { fake, p, cwd } = setup();
    writeFileSync(join(cwd, "a.txt"), "hello\nworld\n");
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "b_ok", name: "bash", arguments: { command: "echo hi; echo err >&2" } },
        { type: "toolCall", id: "b_fail", name: "bash", arguments: { command: "echo out; exit 3" } },
        { type: "toolCall", id: "b_quiet", name: "bash", arguments: { command: "true" } },
        { type: "toolCall", id: "b_timeout", name: "bash", arguments: { command: "sleep 5", timeout: 0.5 } },
        { type: "toolCall", id: "r_ok", name: "read", arguments: { path: "a.txt" } },
        { type: "toolCall", id: "r_limit", name: "read", arguments: { path: "a.txt", limit: 1 } },
        { type: "toolCall", id: "r_missing", name: "read", arguments: { path: "missing.txt" } },
        { type: "toolCall", id: "w", name: "write", arguments: { path: "b.txt", content: "x\n" } },
        { type: "toolCall", id: "e", name: "edit", arguments: { path: "b.txt", edits: [{ oldText: "nope", newText: "y" }] } },
        { type: "toolCall", id: "g", name: "grep", arguments: { pattern: "hello" } },
        { type: "toolCall", id: "f", name: "find", arguments: { pattern: "*.txt" } },
        { type: "toolCall", id: "l", name: "ls", arguments: {} },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const ends = new Map(p.records.filter((r) => r.type === "tool_execution_end").map((r) => [r.toolCallId as string, r]));
    const sc = (id: string) => (ends.get(id)!.result as Rec).structuredContent;

    expect(sc("b_ok")).toEqual({ output: "hi\nerr\n", truncated: false, exit_code: 0, wall_time_seconds: wall });
    expect(ends.get("b_fail")!.isError).toBe(true);
    expect(sc("b_fail")).toEqual({ output: "out\n", truncated: false, exit_code: 3, wall_time_seconds: wall });
    expect(sc("b_quiet")).toEqual({ output: "", truncated: false, exit_code: 0, wall_time_seconds: wall });
    const seconds = (sc("b_ok") as { wall_time_seconds: number }).wall_time_seconds;
    expect(seconds * 10).toBeCloseTo(Math.round(seconds * 10), 6);
    // a timed-out (or aborted) command has no exit code, and no structuredContent
    expect(ends.get("b_timeout")!.isError).toBe(true);
    expect(sc("b_timeout")).toBeUndefined();

    // the text as shown to the model, notices included
    const shown = (id: string) => ((ends.get(id)!.result as Rec).content as Rec[])[0]!.text;
    expect(sc("r_ok")).toBe(shown("r_ok"));
    expect(sc("r_ok")).toStartWith("hello\nworld");
    expect(sc("r_limit")).toBe(shown("r_limit"));
    expect(sc("r_limit")).toStartWith("hello\n\n[");
    expect(ends.get("r_missing")!.isError).toBe(true);
    expect(sc("r_missing")).toBeUndefined();

    for (const id of ["w", "e", "g", "f", "l"]) {
      expect(ends.get(id)!.result).not.toHaveProperty("structuredContent");
    }

    const { data } = await p.request({ type: "get_messages" });
    const results = (data.messages as Rec[]).filter((m) => m.role === "toolResult");
    expect(results.length).toBe(12);
    for (const m of results) expect(m).not.toHaveProperty("structuredContent");
    await p.close();
    await fake.stop();
  });

  test.concurrent("bash output over 1 MB: head and tail around a marker, with the full output's file", async () => {
    const { fake, p } = setup();
    fake.enqueue({
      blocks: [
        { type: "toolCall", id: "big", name: "bash", arguments: { command: "seq 1 300000" } },
        { type: "toolCall", id: "mid", name: "bash", arguments: { command: "seq 1 3000" } },
      ],
    });
    fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled");
    const ends = new Map(p.records.filter((r) => r.type === "tool_execution_end").map((r) => [r.toolCallId as string, r]));

    // over the model's limits but under 1 MB: all of it, and no path
    const mid = (ends.get("mid")!.result as Rec).structuredContent as Rec;
    let all = "";
    for (let i = 1; i <= 3000; i++) all += `${i}\n`;
    expect(mid).toEqual({ output: all, truncated: false, exit_code: 0, wall_time_seconds: wall });
    expect(((ends.get("mid")!.result as Rec).details as Rec).fullOutputPath).toBeString();

    const bigResult = ends.get("big")!.result as Rec;
    const big = bigResult.structuredContent as { output: string; truncated: boolean; full_output_path: string; exit_code: number };
    let total = 0;
    for (let i = 1; i <= 300000; i++) total += String(i).length + 1;
    const omitted = total - 1024 * 1024;
    expect(Object.keys(big)).toEqual(["output", "truncated", "full_output_path", "exit_code", "wall_time_seconds"]);
    expect(big).toMatchObject({ truncated: true, exit_code: 0, full_output_path: (bigResult.details as Rec).fullOutputPath as string });
    expect(existsSync(big.full_output_path)).toBe(true);
    expect(big.output).toStartWith("1\n2\n3\n");
    expect(big.output).toEndWith("299999\n300000\n");
    expect(big.output).toContain(`\n\n[... ${omitted} bytes omitted ...]\n\n`);
    expect(Buffer.byteLength(big.output)).toBe(1024 * 1024 + `\n\n[... ${omitted} bytes omitted ...]\n\n`.length);
    await p.close();
    await fake.stop();
  });
});
