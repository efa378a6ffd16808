/**
 * Opening a large session file another tool wrote: the file is read a window at a time, never
 * whole, on both paths. Memory is measured (VmRSS of the pion process, sampled while it reads),
 * never timed.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { LeanPion, peakRss } from "../support/lean-pion.ts";
import { tempDirs, writeFakeModels } from "../support/pion.ts";

const MB = 1024 * 1024;
const TURNS = 3_000;
const TEXT = 24 * 1024;

/** A v3 file of TURNS user/assistant pairs, each message about TEXT bytes: ~150 MB. */
async function writeFile(path: string, cwd: string): Promise<number> {
  const filler = "the module reads its configuration and checks each value; ".repeat(Math.ceil(TEXT / 60)).slice(0, TEXT);
  const t = Date.parse("2026-01-01T00:00:00Z");
  const writer = Bun.file(path).writer();
  writer.write(`${JSON.stringify({ type: "session", version: 3, id: crypto.randomUUID(), timestamp: new Date(t).toISOString(), cwd })}\n`);
  let parent: string | null = null;
  for (let i = 0; i < TURNS * 2; i++) {
    const id = (0x10000000 + i).toString(16);
    const ts = t + i * 1000;
    const message =
      i % 2 === 0
        ? { role: "user", content: [{ type: "text", text: `question ${i}: ${filler}` }], timestamp: ts }
        : {
            role: "assistant",
            content: [{ type: "text", text: `answer ${i}: ${filler}` }],
            api: "anthropic-messages",
            provider: "fake",
            model: "fake-model",
            usage: { input: 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: 20, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } },
            stopReason: "stop",
            timestamp: ts,
          };
    writer.write(`${JSON.stringify({ type: "message", id, parentId: parent, timestamp: new Date(ts).toISOString(), message })}\n`);
    parent = id;
  }
  await writer.end();
  return statSync(path).size;
}

const dirs = tempDirs();
const file = join(dirs.home, "foreign.jsonl");
let size = 0;
afterAll(() => rmSync(join(dirs.home, ".."), { recursive: true, force: true }));

describe("a large session file another tool wrote", () => {
  test.each([
    ["persisted", [] as string[]],
    ["--no-session", ["--no-session"]],
  ])("%s: switch_session reads it a window at a time", async (_name, extra) => {
    if (size === 0) size = await writeFile(file, dirs.cwd);
    expect(size).toBeGreaterThan(128 * MB);
    const home = join(dirs.home, `pion-${extra.length}`);
    mkdirSync(home);
    writeFakeModels(home, "http://127.0.0.1:9");
    const p = new LeanPion({ home, cwd: dirs.cwd, args: ["--mode", "rpc", "--model", "fake/fake-model", ...extra] });
    try {
      expect((await p.request({ type: "get_state" })).success).toBe(true);
      const before = p.rss() ?? 0;
      const switched = p.request({ type: "switch_session", sessionPath: file }, 60_000);
      const peak = await peakRss(p, switched);
      expect(await switched).toMatchObject({ command: "switch_session", success: true });
      const state = await p.request({ type: "get_state" });
      expect(state.data).toMatchObject({ messageCount: TURNS * 2 });
      const grown = peak - before;
      // Persisted, the rows go to the database file: what is held is the window and a batch of
      // rows (measured: 26 MB for a 138 MB file). Without a session the rows are kept in memory,
      // as SQLite pages a quarter empty with messages of this size (1.6x the file), and the file
      // is not held beside them (that would be 2.6x).
      if (extra.length === 0) expect(grown).toBeLessThan(size / 3);
      else expect(grown).toBeLessThan(size * 2);
      expect(p.protocolError).toBeUndefined();
    } finally {
      await p.close();
    }
  }, 120_000);
});
