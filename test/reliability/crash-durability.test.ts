/**
 * Crash durability: pion is SIGKILLed at random moments while it streams a reply, runs a
 * bash tool, compacts or renames, again and again on the same session. After every kill:
 * the database passes `PRAGMA integrity_check`, every entry announced on stdout before the
 * kill is in the `entry` table, and a restart with `--session <file>` resumes the session
 * with a JSONL file that equals the database (header + `get_entries`).
 *
 * Several workers run side by side, each with its own PION_HOME reused across its kills.
 */
import { Database } from "bun:sqlite";
import { describe, expect, test } from "bun:test";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startFakeProvider, type FakeProvider, type FakeReply } from "../support/fake-provider.ts";
import { LeanPion, readJsonl } from "../support/lean-pion.ts";
import { tempDirs, writeFakeModels, writeSettings, type Rec } from "../support/pion.ts";

const WORKERS = 4;
const KILLS_PER_WORKER = 26;
const SEED = Number(process.env.PION_CRASH_SEED ?? Math.floor(Math.random() * 2 ** 31));

function mulberry32(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ids of the entries announced in these records. */
function announced(records: Rec[]): string[] {
  const ids: string[] = [];
  for (const r of records) {
    if (r.type === "message_end" && typeof r.entryId === "string") ids.push(r.entryId);
    if (r.type === "entry_appended" && typeof r.entry?.id === "string") ids.push(r.entry.id);
    if (r.type === "session_info_changed" && typeof r.entryId === "string") ids.push(r.entryId);
  }
  return ids;
}

/**
 * Checks a copy of the database as the kill left it (the -wal and -shm files with it), so
 * that recovering the WAL is left to the next pion, not done by this check.
 */
function checkDatabase(sessionsDir: string): { integrity: string; ids: Set<string> } {
  const snap = mkdtempSync(join(tmpdir(), "pion-crash-db-"));
  try {
    for (const suffix of ["", "-wal", "-shm"]) {
      const src = join(sessionsDir, `pion.db${suffix}`);
      if (existsSync(src)) copyFileSync(src, join(snap, `pion.db${suffix}`));
    }
    const db = new Database(join(snap, "pion.db"));
    try {
      const integrity = db
        .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
        .all()
        .map((r) => r.integrity_check)
        .join("; ");
      const ids = new Set(db.query<{ id: string }, []>("SELECT id FROM entry").all().map((r) => r.id));
      return { integrity, ids };
    } finally {
      db.close();
    }
  } finally {
    rmSync(snap, { recursive: true, force: true });
  }
}

const text = (t: string, deltas: number): FakeReply => ({
  blocks: [{ type: "text", text: Array.from({ length: deltas }, (_, i) => `${t}-${i} `) }],
  usage: { input: 100, output: 20 },
  chunkDelayMs: 3,
});

type Scenario = "stream" | "tool" | "compact" | "rename" | "idle";
const SCENARIOS: Scenario[] = ["stream", "stream", "tool", "tool", "compact", "compact", "rename", "idle"];

/** Starts one kind of work; returns the record types that mark interesting kill points. */
function start(p: LeanPion, fake: FakeProvider, s: Scenario, n: number): string[] {
  switch (s) {
    case "stream":
      fake.enqueue(text(`reply${n}`, 40));
      p.send({ id: `w${n}`, type: "prompt", message: `stream please ${n} `.repeat(5) });
      return ["message_start", "message_update", "message_end"];
    case "tool":
      fake.enqueue(
        {
          blocks: [
            { type: "text", text: ["running", " tools"] },
            { type: "toolCall", name: "bash", arguments: { command: `echo out-${n}; sleep 0.02; echo done-${n}` }, fragments: 3 },
            { type: "toolCall", name: "bash", arguments: { command: `printf 'x%.0s' $(seq 1 2000)` } },
          ],
          usage: { input: 120, output: 30 },
          chunkDelayMs: 2,
        },
        text(`after-tools${n}`, 15),
      );
      p.send({ id: `w${n}`, type: "prompt", message: `use bash ${n} `.repeat(5) });
      return ["tool_execution_start", "tool_execution_end", "message_end", "turn_end"];
    case "compact":
      // a cut inside the last turn asks for a history and a split-turn summary: the second is
      // quick, so a compaction takes about as long as one summary did
      fake.enqueue({ ...(text(`## Goal\nsummary-${n}`, 30) as Extract<FakeReply, { blocks: unknown }>), chunkDelayMs: 4 }, text(`## Request\nturn-${n}`, 3));
      p.send({ id: `w${n}`, type: "compact" });
      return ["compaction_start", "compaction_end", "entry_appended"];
    case "rename":
      p.send({ id: `w${n}`, type: "set_session_name", name: `name ${n}` });
      return ["session_info_changed", "response"];
    case "idle":
      p.send({ id: `w${n}`, type: "get_state" });
      return ["response"];
  }
}

interface WorkerResult {
  kills: number;
  /** Kills that landed before the work they interrupted had finished. */
  midWork: number;
  toolRuns: number;
  compactions: { done: number; failed: number };
  scenarios: Record<string, number>;
  problems: string[];
}

async function worker(w: number, rand: () => number): Promise<WorkerResult> {
  const int = (n: number) => Math.floor(rand() * n);
  const dirs = tempDirs();
  const sessions = join(dirs.home, "sessions");
  writeSettings(dirs.home, { retry: { enabled: false }, compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
  const problems: string[] = [];
  const scenarios: Record<string, number> = {};
  const allAnnounced = new Set<string>();
  const args = (file?: string) => ["--mode", "rpc", "--model", "fake/fake-model", ...(file ? ["--session", file] : [])];

  // a few finished turns first, so compaction has something to cut
  let fake = startFakeProvider();
  writeFakeModels(dirs.home, fake.url);
  const first = new LeanPion({ ...dirs, args: args() });
  for (let t = 0; t < 3; t++) {
    fake.enqueue(text(`warmup${t}`, 3));
    const from = first.records.length;
    await first.request({ type: "prompt", message: `warm up ${t} `.repeat(10) });
    await first.waitFor("agent_settled", from);
  }
  const state = (await first.request({ type: "get_state" })).data;
  const file: string = state.sessionFile;
  const sessionId: string = state.sessionId;
  for (const id of announced(first.records)) allAnnounced.add(id);
  expect(await first.close()).toBe(0);
  await fake.stop();

  let kills = 0;
  let midWork = 0;
  let toolRuns = 0;
  const compactions = { done: 0, failed: 0 };
  for (let n = 0; n < KILLS_PER_WORKER; n++) {
    fake = startFakeProvider();
    writeFakeModels(dirs.home, fake.url);
    const p = new LeanPion({ ...dirs, args: args(file) });
    const scenario = SCENARIOS[int(SCENARIOS.length)]!;
    scenarios[scenario] = (scenarios[scenario] ?? 0) + 1;
    const where = `worker ${w} kill ${n} (${scenario}, seed ${SEED})`;
    try {
      // the restart resumes the session and its JSONL equals the database
      if (rand() < 0.85) {
        const st = (await p.request({ type: "get_state" })).data;
        if (st.sessionId !== sessionId) problems.push(`${where}: resumed session ${st.sessionId}, expected ${sessionId}`);
        const { entries } = (await p.request({ type: "get_entries" })).data as { entries: Rec[] };
        const lines = readJsonl(file);
        if (lines[0]?.type !== "session" || lines[0]?.id !== sessionId) problems.push(`${where}: JSONL header ${JSON.stringify(lines[0])}`);
        if (JSON.stringify(lines.slice(1)) !== JSON.stringify(entries)) {
          const inFile = new Set(lines.slice(1).map((l) => l.id));
          const absent = entries.filter((e) => !inFile.has(e.id)).map((e) => `${e.type}${e.message ? `/${e.message.role}` : ""} ${e.id}`);
          // does the file catch up a little later (a lagging append) or never (a lost line)?
          let caughtUp = false;
          for (let t = 0; t < 100 && !caughtUp; t++) {
            await Bun.sleep(20);
            caughtUp = JSON.stringify(readJsonl(file).slice(1)) === JSON.stringify(entries);
          }
          problems.push(`${where}: after restart the JSONL has ${lines.length - 1} entries, get_entries ${entries.length}; missing from the file: ${absent.join(", ")}; ${caughtUp ? "the file caught up within 2 s" : "still missing after 2 s"}`);
        }
        const have = new Set(entries.map((e) => e.id));
        const lost = [...allAnnounced].filter((id) => !have.has(id));
        if (lost.length > 0) problems.push(`${where}: get_entries lacks announced entries ${lost.join(",")}`);
      }

      // start work, then kill at a random moment: after a random time or right on a chosen event
      const from = p.records.length;
      const marks = start(p, fake, scenario, n);
      if (rand() < 0.5) {
        await Bun.sleep(int(scenario === "idle" ? 30 : 250));
      } else {
        const mark = marks[int(marks.length)]!;
        const nth = 1 + int(3);
        let seen = 0;
        await p
          .waitFor((r) => r.type === mark && ++seen >= nth, from, 1500)
          .catch(() => undefined); // the mark may never come (e.g. nothing to compact): kill anyway
      }
      p.kill("SIGKILL");
      kills++;
      await p.exited;
      if (p.protocolError) problems.push(`${where}: ${p.protocolError}`);

      const after = p.records.slice(from);
      const done = after.some((r) => r.type === "agent_settled" || r.type === "compaction_end" || (r.type === "response" && r.id === `w${n}` && scenario !== "stream" && scenario !== "tool" && scenario !== "compact"));
      if (!done) midWork++;
      for (const r of after) {
        if (r.type === "compaction_end") compactions[r.errorMessage ? "failed" : "done"]++;
        if (r.type === "tool_execution_start") toolRuns++;
      }
      const ids = announced(p.records);
      for (const id of ids) allAnnounced.add(id);
      const db = checkDatabase(sessions);
      if (db.integrity !== "ok") problems.push(`${where}: integrity_check: ${db.integrity}`);
      const missing = [...allAnnounced].filter((id) => !db.ids.has(id));
      if (missing.length > 0) problems.push(`${where}: announced but not in the entry table: ${missing.join(",")}`);
    } finally {
      p.kill("SIGKILL");
      await fake.stop();
    }
  }

  // a last clean restart: JSONL equals the database, and the session still works
  fake = startFakeProvider();
  writeFakeModels(dirs.home, fake.url);
  const last = new LeanPion({ ...dirs, args: args(file) });
  const { entries } = (await last.request({ type: "get_entries" })).data as { entries: Rec[] };
  expect(readJsonl(file).slice(1)).toEqual(entries);
  fake.enqueue(text("final", 2));
  const from = last.records.length;
  await last.request({ type: "prompt", message: "still there?" });
  const end = await last.waitFor("agent_settled", from);
  expect(end).toMatchObject({ type: "agent_settled" });
  expect(last.records.slice(from).find((r) => r.type === "message_end" && r.message.role === "assistant")?.message.stopReason).toBe("stop");
  expect(await last.close()).toBe(0);
  const after = readJsonl(file);
  const dbIds = checkDatabase(sessions).ids;
  expect(allAnnounced.size).toBeGreaterThan(0);
  expect(after.length).toBeGreaterThan(1);
  expect(after.slice(1).every((e) => dbIds.has(e.id))).toBe(true);
  await fake.stop();
  return { kills, midWork, toolRuns, compactions, scenarios, problems };
}

describe("crash durability", () => {
  test(`${WORKERS * KILLS_PER_WORKER} SIGKILLs during streaming, tool runs and compaction lose no announced entry (seed ${SEED})`, async () => {
    const rand = mulberry32(SEED);
    const results = await Promise.all(Array.from({ length: WORKERS }, (_, w) => worker(w, mulberry32(Math.floor(rand() * 2 ** 31)))));
    const kills = results.reduce((a, r) => a + r.kills, 0);
    expect(kills).toBeGreaterThanOrEqual(100);
    const midWork = results.reduce((a, r) => a + r.midWork, 0);
    if (process.env.PION_CRASH_VERBOSE) console.log({ kills, midWork, results: results.map(({ problems: _, ...r }) => r) });
    // the kills hit real work: tools ran and compactions got through
    expect(results.reduce((a, r) => a + r.toolRuns, 0)).toBeGreaterThan(0);
    expect(results.reduce((a, r) => a + r.compactions.done, 0)).toBeGreaterThan(0);
    expect(midWork).toBeGreaterThanOrEqual(kills / 4);
    const seen = new Set(results.flatMap((r) => Object.keys(r.scenarios)));
    expect([...seen].sort()).toEqual(["compact", "idle", "rename", "stream", "tool"]);
    expect(results.flatMap((r) => r.problems)).toEqual([]);
  }, 150_000);
});
