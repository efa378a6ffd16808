/**
 * Large sessions: a v3 JSONL file of N message entries (user/assistant alternating, chained by
 * parentId) opened with `--session <file>`. For pion the first open imports the file into its
 * SQLite database (fresh PION_HOME); a second process on the same home reopens it from the
 * database. The reference reads the JSONL every time. Measured per size: spawn -> get_state
 * response, get_entries (all), get_entries with `since` 10 entries before the end, get_tree,
 * peak memory. Goals at 100k: open + get_state under 50 ms, `since` flat as size grows,
 * get_tree works, under 150 MB.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type Agent,
  agents,
  copyInto,
  header,
  iterations,
  MODEL_ARGS,
  printTable,
  type Row,
  request,
  sandbox,
  spawnAgent,
} from "./lib.ts";

const SIZES = (process.env.BENCH_SESSION_SIZES ?? "1000,10000,100000").split(",").map(Number);
const N = iterations(3);
header("sessions", N);

const idOf = (i: number) => (0x10000000 + i * 7919).toString(16).slice(-8);

/** A v3 session file with `n` message entries; returns the id of the entry 10 before the end. */
export function writeSession(path: string, n: number, cwd: string): string {
  const t = Date.parse("2026-01-01T00:00:00Z");
  const usage = {
    input: 100,
    output: 20,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 120,
    cost: { input: 0.0003, output: 0.0003, cacheRead: 0, cacheWrite: 0, total: 0.0006 },
  };
  const lines = [JSON.stringify({ type: "session", version: 3, id: crypto.randomUUID(), timestamp: new Date(t).toISOString(), cwd })];
  for (let i = 0; i < n; i++) {
    const ts = t + i * 1000;
    const message =
      i % 2 === 0
        ? { role: "user", content: [{ type: "text", text: `Question ${i}: what does line ${i} of the file do?` }], timestamp: ts }
        : {
            role: "assistant",
            content: [{ type: "text", text: `Answer ${i}: it sets up the value used by the next step of the loop.` }],
            api: "anthropic-messages",
            provider: "fake",
            model: "fake-model",
            usage,
            stopReason: "stop",
            timestamp: ts,
          };
    lines.push(
      JSON.stringify({ type: "message", id: idOf(i), parentId: i === 0 ? null : idOf(i - 1), timestamp: new Date(ts).toISOString(), message }),
    );
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
  return idOf(n - 10);
}

interface Fig {
  open: number[];
  entries: number[];
  since: number[];
  tree: number[];
  peak: number[];
  open2: number[];
  since2: number[];
  peak2: number[];
  peakOpen: number[];
  treeNote?: string;
  entriesNote?: string;
  openNote?: string;
}
const newFig = (): Fig => ({ open: [], entries: [], since: [], tree: [], peak: [], open2: [], since2: [], peak2: [], peakOpen: [] });

/** full: every query; since: open and `since` only; open: nothing after get_state (the open's own memory). */
async function openAndQuery(agent: Agent, box: ReturnType<typeof sandbox>, file: string, sinceId: string, mode: "full" | "since" | "open") {
  const full = mode === "full";
  const t0 = performance.now();
  const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS, "--session", file]);
  child.send(`{"id":"s","type":"get_state"}\n`);
  const st = await child.out.line(`"id":"s"`).catch(() => undefined);
  const open = performance.now() - t0;
  const out: { open: number; entries?: number; since?: number; tree?: number; errors: string[]; peak: number } = {
    open,
    errors: [],
    peak: 0,
  };
  const count = st ? (JSON.parse(st.line).data?.messageCount as number | undefined) : undefined;
  if (!st) out.errors.push(`get_state: no response; ${(await child.stderr).slice(0, 200)}`);
  out.open = st ? open : Number.NaN;
  if (full) {
    const e = await request(child, { type: "get_entries" }, "e");
    if (e.res.success) out.entries = e.ms;
    else out.errors.push(`get_entries: ${e.res.error}`);
    const n = e.res.data?.entries?.length;
    if (n !== undefined && count !== undefined && n < count) out.errors.push(`get_entries returned ${n} entries for ${count} messages`);
  }
  if (mode !== "open") {
    const s = await request(child, { type: "get_entries", since: sinceId }, "since");
    if (s.res.success && s.res.data?.entries?.length >= 9) out.since = s.ms;
    else out.errors.push(`get_entries since: ${s.res.error ?? `${s.res.data?.entries?.length} entries`}`);
  }
  if (full) {
    const tr = await request(child, { type: "get_tree" }, "tree");
    if (tr.res.success) out.tree = tr.ms;
    else out.errors.push(`get_tree: ${tr.res.error}`);
  }
  out.peak = (await child.finish()).peak;
  if (out.errors.length) console.error(`${agent}: ${out.errors.join("; ")}`);
  return out;
}

for (const size of SIZES) {
  const figs: Record<string, Fig> = {};
  const gen = sandbox("pion");
  const src = join(gen.root, "src.jsonl");
  // The reference refuses a session whose cwd does not exist: both agents run in this folder.
  const sinceId = writeSession(src, size, gen.cwd);
  const iters = size >= 100000 ? Math.max(1, Math.min(N, 2)) : N;
  for (let i = 0; i < iters; i++) {
    for (const agent of agents()) {
      const box = sandbox(agent);
      box.cwd = gen.cwd;
      const file = copyInto(src, join(box.root, "sessions"), "bench-session.jsonl");
      const f = (figs[agent] ??= newFig());
      const a = await openAndQuery(agent, box, file, sinceId, "full");
      f.open.push(a.open);
      if (a.entries !== undefined) f.entries.push(a.entries);
      else f.entriesNote = "fails";
      f.since.push(a.since ?? Number.NaN);
      if (a.tree !== undefined) f.tree.push(a.tree);
      else f.treeNote = "fails";
      f.peak.push(a.peak);
      const b = await openAndQuery(agent, box, file, sinceId, "since");
      f.open2.push(b.open);
      f.since2.push(b.since ?? Number.NaN);
      f.peak2.push(b.peak);
      box.cleanup();
      // The first open alone (pion's import into a fresh home), for its memory without the queries.
      const fresh = sandbox(agent);
      fresh.cwd = gen.cwd;
      const c = await openAndQuery(agent, fresh, copyInto(src, join(fresh.root, "sessions"), "bench-session.jsonl"), sinceId, "open");
      f.peakOpen.push(c.peak);
      fresh.cleanup();
    }
  }
  gen.cleanup();
  const p = figs.pion!;
  const r = figs.ref;
  const k = `${size / 1000}k`;
  const rows: Row[] = [
    { metric: `${k}: open + get_state (1st open; pion imports)`, unit: "ms", pion: p.open, ref: r?.open },
    { metric: `${k}: open + get_state (2nd open)`, unit: "ms", pion: p.open2, ref: r?.open2, goal: size === 100000 ? "< 50 ms" : undefined },
    { metric: `${k}: get_entries (all)`, unit: "ms", pion: p.entries, ref: r?.entries, pionNote: p.entries.length ? undefined : "fails", refNote: r && !r.entries.length ? "fails" : undefined },
    { metric: `${k}: get_entries since (1st / 2nd process)`, unit: "ms", pion: [...p.since, ...p.since2], ref: r ? [...r.since, ...r.since2] : undefined, goal: "flat" },
    { metric: `${k}: get_tree`, unit: "ms", pion: p.tree, ref: r?.tree, pionNote: p.tree.length ? undefined : "fails", refNote: r && !r.tree.length ? "fails" : undefined, goal: size === 100000 ? "works" : undefined },
    { metric: `${k}: peak RSS (1st open alone; pion imports)`, unit: "MB", pion: p.peakOpen, ref: r?.peakOpen },
    { metric: `${k}: peak RSS (1st process: open, get_entries of everything, get_tree)`, unit: "MB", pion: p.peak, ref: r?.peak },
    { metric: `${k}: peak RSS (2nd process)`, unit: "MB", pion: p.peak2, ref: r?.peak2 },
  ];
  printTable(`Sessions: ${size.toLocaleString("en-US")} entries`, rows);
}
