/**
 * The RPC `bash` command printing 50 MB and 1 GB (`yes <64 chars> | head -c N`), timed from the
 * command to its response, against the same pipeline run by bash to /dev/null; peak memory of
 * each process (for the bare pipeline: bash plus the yes/head children it reaped).
 * Goals: time within 1.3x of the bare pipeline, peak memory under 80 MB whatever the size.
 * BENCH_BASH_SIZES=mb,mb overrides the sizes (default 50,1024). A last case prints 1 GB of base64
 * of random bytes, a producer that works for its output as real commands do (BENCH_BASH_WORK=0 skips it).
 */
import { join } from "node:path";
import { agents, header, measured, iterations, MODEL_ARGS, printTable, type Row, request, sandbox, spawnAgent } from "./lib.ts";

const SIZES_MB = (process.env.BENCH_BASH_SIZES ?? "50,1024").split(",").map(Number);
const N = iterations(3);
header("bash", N);
const LINE = "0123456789abcdef".repeat(4);
const pipeline = (bytes: number) => `yes ${LINE} | head -c ${bytes}`;

/** The pipeline alone, its output to /dev/null, or to a file as the agents must keep it (`into`). */
async function bare(command: string, into = "/dev/null") {
  const m = measured(["bash", "-c", `${command} > ${into}`]);
  const t0 = performance.now();
  const p = Bun.spawn(m.argv, { stdout: "ignore", stderr: "ignore" });
  m.attach(p.pid);
  await p.exited;
  return { ms: performance.now() - t0, peak: m.peak() };
}

/** pion answers `success:false, "... not implemented yet"` while the command is missing. */
async function implemented(agent: "pion" | "ref"): Promise<boolean> {
  const box = sandbox(agent);
  const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS]);
  const r = await request(child, { type: "bash", command: "echo hi" }, "probe");
  await child.finish();
  box.cleanup();
  return !(r.res.success === false && /not implemented/i.test(String(r.res.error)));
}

const ok: Record<string, boolean> = {};
for (const agent of agents()) ok[agent] = await implemented(agent);

/** The fastest producer there is (`yes`), then one that works for its output as real commands do. */
const CASES = [
  ...SIZES_MB.map((mb) => ({ mb, label: mb >= 1024 ? `${mb / 1024} GB` : `${mb} MB`, command: pipeline(mb * 1048576) })),
  ...(process.env.BENCH_BASH_WORK === "0"
    ? []
    : [{ mb: 1024, label: "1 GB of base64 (urandom)", command: `head -c ${768 * 1048576} /dev/urandom | base64 | head -c ${1024 * 1048576}` }]),
];

const rows: Row[] = [];
for (const { mb, label, command } of CASES) {
  const iters = mb >= 500 ? Math.min(N, 2) : N;
  const res: Record<string, { ms: number[]; peak: number[]; out?: number[] }> = { bare: { ms: [], peak: [] }, file: { ms: [], peak: [] } };
  for (let i = 0; i < iters; i++) {
    const b = await bare(command);
    res.bare!.ms.push(b.ms);
    res.bare!.peak.push(b.peak);
    const scratch = sandbox("pion");
    res.file!.ms.push((await bare(command, join(scratch.root, "full-output.log"))).ms);
    scratch.cleanup();
    for (const agent of agents()) {
      if (!ok[agent]) continue;
      const box = sandbox(agent);
      // Only response lines are kept: bash_execution_update events can carry the whole output.
      const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS], { keepLines: '"type":"response"' });
      await request(child, { type: "get_state" }, "warm");
      const bytes0 = child.out.bytes;
      const r = await request(child, { type: "bash", command }, "b", 300_000);
      const outBytes = child.out.bytes - bytes0;
      const { peak } = await child.finish();
      if (!r.res.success) console.error(`${agent}: bash failed: ${String(r.res.error).slice(0, 200)}`);
      box.cleanup();
      const x = (res[agent] ??= { ms: [], peak: [], out: [] });
      x.ms.push(r.res.success ? r.ms : Number.NaN);
      x.peak.push(peak);
      x.out!.push(outBytes);
    }
  }
  const note = (a: string) => (ok[a] === false ? "not implemented" : undefined);
  const part: Row[] = [
    { metric: `${label}: bare pipeline → /dev/null`, unit: "ms", pion: res.bare!.ms },
    { metric: `${label}: bash command → response`, unit: "ms", pion: res.pion?.ms ?? [], ref: res.ref?.ms, pionNote: note("pion"), refNote: note("ref"), goal: "≤ 1.3× bare" },
    { metric: `${label}: agent time / bare pipeline`, unit: "x", pion: ratio(res.pion?.ms, res.bare!.ms), ref: ratio(res.ref?.ms, res.bare!.ms), pionNote: note("pion"), refNote: note("ref") },
    { metric: `${label}: bare pipeline → a file (the full output the spec keeps)`, unit: "ms", pion: res.file!.ms },
    { metric: `${label}: agent time / pipeline to a file`, unit: "x", pion: ratio(res.pion?.ms, res.file!.ms), ref: ratio(res.ref?.ms, res.file!.ms), pionNote: note("pion"), refNote: note("ref") },
    { metric: `${label}: agent stdout during the command`, unit: "MB", pion: res.pion?.out ?? [], ref: res.ref?.out, pionNote: note("pion"), refNote: note("ref") },
    { metric: `${label}: bare pipeline peak RSS`, unit: "MB", pion: res.bare!.peak },
    { metric: `${label}: agent peak RSS`, unit: "MB", pion: res.pion?.peak ?? [], ref: res.ref?.peak, pionNote: note("pion"), refNote: note("ref"), goal: "< 80 MB" },
  ];
  rows.push(...part);
  printTable(`bash command printing ${label}`, part);
}

function ratio(agent: number[] | undefined, base: number[]): number[] {
  if (!agent) return [];
  const sorted = [...base].sort((a, b) => a - b);
  const med = sorted[sorted.length >> 1]!;
  return agent.map((x) => x / med);
}
