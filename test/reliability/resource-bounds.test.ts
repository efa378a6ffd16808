/**
 * Resource bounds: output that never ends, a command that ignores SIGTERM, and an abort storm.
 * Memory is measured (VmRSS of the pion process, sampled while the work runs), never timed;
 * leftover processes are found by a unique marker in their command lines.
 */
import { Database } from "bun:sqlite";
import { afterEach, describe, expect, test } from "bun:test";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { LeanPion, peakRss, processesWith, readJsonl, waitNoProcesses } from "../support/lean-pion.ts";
import { tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const RSS_LIMIT = 300 * 1024 * 1024;
const DROP = ["bash_execution_update", "message_update", "tool_execution_update"];

function setup(extraArgs: string[] = []) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { retry: { enabled: false } });
  const p = new LeanPion({ ...dirs, drop: DROP, args: ["--mode", "rpc", "--model", "fake/fake-model", ...extraArgs] });
  spawned.push(p);
  return { fake, p, ...dirs };
}

// A test that fails midway must not leave an endless command behind: `yes` writing its full
// output file would fill the disk. Every pion and every marked process is killed after each test.
const spawned: LeanPion[] = [];
const markers: string[] = [];
afterEach(() => {
  for (const p of spawned.splice(0)) {
    try {
      p.kill("SIGKILL");
    } catch {
      // already exited
    }
  }
  for (const m of markers.splice(0)) {
    for (const pid of processesWith(m)) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // already gone
      }
    }
  }
});

const marker = () => {
  const m = `pionrb${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;
  markers.push(m);
  return m;
};
const removeFile = (path: unknown) => {
  if (typeof path === "string" && existsSync(path)) rmSync(path, { force: true });
};

describe("resource bounds", () => {
  test("RPC bash printing endlessly: memory bounded while 64 MB stream through, abort_bash ends it, nothing left behind", async () => {
    const { fake, p } = setup();
    const mark = marker();
    const streamed = () => p.bytes.get("bash_execution_update") ?? 0;
    p.send({ id: "yes", type: "bash", command: `yes ${mark}` });
    const peak = await peakRss(p, p.until(() => streamed() >= 64 * 1024 * 1024, "64 MB of bash output streamed", 60_000));
    expect(processesWith(mark).length).toBeGreaterThan(0);
    await p.request({ type: "abort_bash" });
    const r = await p.waitFor((x) => x.type === "response" && x.id === "yes", 0, 15_000);
    removeFile(r.data?.fullOutputPath);
    expect(r).toMatchObject({ command: "bash", success: true, data: { cancelled: true, truncated: true } });
    expect(peak).toBeLessThan(RSS_LIMIT);
    expect(await waitNoProcesses(mark)).toEqual([]);
    expect((await p.request({ type: "get_state" })).success).toBe(true);
    expect(p.protocolError).toBeUndefined();
    expect(await p.close()).toBe(0);
    await fake.stop();
  }, 90_000);

  test("bash tool printing endlessly: memory bounded across tool updates, abort ends the run, nothing left behind", async () => {
    const { fake, p } = setup();
    const mark = marker();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_yes", name: "bash", arguments: { command: `yes ${mark}` } }] });
    const r = await p.request({ type: "prompt", message: "print forever" });
    expect(r.success).toBe(true);
    // a few throttled tool updates mean the command has been printing for a while
    const peak = await peakRss(p, p.until(() => p.count("tool_execution_update") >= 5, "5 tool_execution_update records", 60_000));
    expect(processesWith(mark).length).toBeGreaterThan(0);
    await p.request({ type: "abort" });
    const end = await p.waitFor("tool_execution_end", 0, 15_000);
    await p.waitFor("agent_settled", 0, 15_000);
    removeFile(end.result?.details?.fullOutputPath);
    expect(end).toMatchObject({ toolCallId: "toolu_yes", isError: true });
    expect(peak).toBeLessThan(RSS_LIMIT);
    expect(await waitNoProcesses(mark)).toEqual([]);
    expect(await p.close()).toBe(0);
    await fake.stop();
  }, 90_000);

  test("a command that ignores SIGTERM is still killed: by abort_bash and by abort of a bash tool call", async () => {
    const { fake, p } = setup();
    const m1 = marker();
    p.send({ id: "stubborn", type: "bash", command: `trap '' TERM; echo started; sleep 1000.${m1.length}1; : ${m1}` });
    await p.until(() => p.count("bash_execution_update") > 0, "the stubborn command to start");
    await p.until(() => processesWith(m1).length > 0, "the stubborn command to show in /proc");
    await p.request({ type: "abort_bash" });
    const r = await p.waitFor((x) => x.type === "response" && x.id === "stubborn", 0, 15_000);
    expect(r.data).toMatchObject({ cancelled: true });
    expect(await waitNoProcesses(m1)).toEqual([]);
    // the sleep child carries no marker of its own: none may outlive its group either
    expect(await waitNoProcesses(`sleep\u00001000.${m1.length}1`)).toEqual([]);

    const m2 = marker();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_trap", name: "bash", arguments: { command: `trap '' TERM; sleep 1000.2; : ${m2}` } }] });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "run the stubborn one" });
    await p.waitFor("tool_execution_start", from);
    await p.until(() => processesWith(m2).length > 0, "the stubborn tool command to show in /proc");
    await p.request({ type: "abort" });
    const end = await p.waitFor("tool_execution_end", from, 15_000);
    expect(end.isError).toBe(true);
    await p.waitFor("agent_settled", from, 15_000);
    expect(await waitNoProcesses(m2)).toEqual([]);
    expect(await waitNoProcesses("sleep\u00001000.2\u0000")).toEqual([]);
    expect(await p.close()).toBe(0);
    await fake.stop();
  }, 60_000);

  test("abort storm: 1,000 pipelined prompt/abort pairs, then 1,000 back-to-back runs each aborted", async () => {
    const PAIRS = 1000;
    const { fake, p, home } = setup();
    for (let i = 0; i < 2 * PAIRS + 10; i++) fake.enqueue({ blocks: [{ type: "text", text: ["stall", "ing", "forever"] }], stallAfterChunks: 2 });
    const answered = () => p.count("response");
    const storm = (async () => {
      // all at once: aborts bypass the queue, so most prompts find the first run still busy
      const lines: string[] = [];
      for (let i = 0; i < PAIRS; i++) {
        lines.push(JSON.stringify({ id: `p${i}`, type: "prompt", message: `storm ${i}` }));
        lines.push(JSON.stringify({ id: `a${i}`, type: "abort" }));
      }
      await p.writeAll(`${lines.join("\n")}\n`);
      await p.until(() => answered() >= 2 * PAIRS, `${2 * PAIRS} responses`, 60_000, 20);
      await p.request({ type: "abort" });
      // then each pair written as one batch once the previous pair is answered: every prompt starts a
      // run (its stalled reply may or may not have been requested yet) and its abort ends it
      // (every fourth abort waits until the fake has the request, so those abort a live request)
      for (let i = 0; i < PAIRS; i++) {
        const done = p.waitFor((r) => r.type === "response" && r.id === `b${i}`, p.records.length);
        const prompt = `${JSON.stringify({ id: `q${i}`, type: "prompt", message: `run ${i}` })}\n`;
        const abort = `${JSON.stringify({ id: `b${i}`, type: "abort" })}\n`;
        if (i % 4 === 0) {
          const n = fake.requests.length + 1;
          p.write(prompt);
          await fake.waitForRequests(n, 15_000);
          p.write(abort);
        } else {
          p.write(prompt + abort);
        }
        await done;
      }
    })();
    const peak = await peakRss(p, storm);
    expect(peak).toBeLessThan(RSS_LIMIT);
    expect(fake.requests.length).toBeGreaterThanOrEqual(PAIRS / 4);

    // still responsive; a last abort stops whatever prompt is still running
    await p.request({ type: "abort" });
    await p.until(() => {
      const starts = p.count("agent_start");
      return starts === p.count("agent_settled");
    }, "every started run to settle");
    const st = (await p.request({ type: "get_state" })).data;
    expect(st.isStreaming).toBe(false);

    const responses = p.records.filter((r) => r.type === "response");
    const byId = new Map<string, number>();
    for (const r of responses) byId.set(r.id, (byId.get(r.id) ?? 0) + 1);
    const unanswered: string[] = [];
    for (let i = 0; i < PAIRS; i++) {
      for (const id of [`p${i}`, `a${i}`, `q${i}`, `b${i}`]) if (byId.get(id) !== 1) unanswered.push(`${id}:${byId.get(id) ?? 0}`);
    }
    expect(unanswered).toEqual([]);
    // after an abort is answered the agent is idle: the next prompt starts a run
    const refused = responses.filter((r) => /^q\d+$/.test(r.id) && !r.success).map((r) => `${r.id}: ${r.error}`);
    expect(refused).toEqual([]);
    expect(responses.filter((r) => r.command === "abort").every((r) => r.success === true)).toBe(true);

    // the session is consistent: parent chain intact, JSONL equals the database
    const { entries, leafId } = (await p.request({ type: "get_entries" }, 30_000)).data as { entries: Rec[]; leafId: string };
    expect(entries.length).toBeGreaterThan(0);
    const seen = new Set<string>();
    for (const e of entries) {
      expect(e.parentId === null || seen.has(e.parentId)).toBe(true);
      expect(seen.has(e.id)).toBe(false);
      seen.add(e.id);
    }
    expect(seen.has(leafId)).toBe(true);
    const started = p.records.filter((r) => r.type === "response" && r.command === "prompt" && r.success).length;
    expect(entries.filter((e) => e.type === "message" && e.message.role === "user").length).toBe(started);
    const file: string | undefined = st.sessionFile;
    if (process.env.PION_RB_VERBOSE) console.log({ peak, started, requests: fake.requests.length, entries: entries.length, agentStarts: p.count("agent_start"), failedPrompts: responses.filter((r) => r.command === "prompt" && !r.success).slice(0, 3) });
    expect(p.protocolError).toBeUndefined();
    expect(await p.close()).toBe(0);
    expect(p.stderr).not.toMatch(/Unhandled|unhandledRejection/);
    expect(file).toBeString();
    const jsonl = readJsonl(file!);
    expect(jsonl[0]).toMatchObject({ type: "session", id: st.sessionId });
    expect(jsonl.slice(1)).toEqual(entries);
    const db = new Database(join(home, "sessions", "pion.db"), { readonly: true });
    const bodies = db.query<{ body: string }, [string]>("SELECT body FROM entry WHERE session_id = ?1 ORDER BY seq").all(st.sessionId);
    db.close();
    expect(bodies.map((b) => JSON.parse(b.body))).toEqual(entries);
    await fake.stop();
  }, 120_000);
});
