/**
 * What the model catalog costs (issue #15): spawn -> `get_state` response with a models.json
 * provider (the start-up bench's case: no catalog data read), with a catalog provider
 * (`--provider anthropic`: one provider's line parsed), and `pion models --json` (the whole
 * catalog), with peak memory. PION_BENCH_BASE=<binary> runs an older pion interleaved with
 * this one, for a before/after on the same machine state (copy both binaries at the same time:
 * a freshly written executable reads ~4 MB higher than one that has sat in the page cache).
 */
import { iterations, MODEL_ARGS, measured, PION_BIN, sandbox, spawnAgent, type Sandbox } from "./lib.ts";

const N = iterations(10);
const BASE = process.env.PION_BENCH_BASE;
console.log(`\n## catalog: ${N} iteration(s), pion ${PION_BIN}${BASE ? `, baseline ${BASE}` : ""} (the reference has no equivalent)`);

const bins: [string, string][] = [["pion", PION_BIN], ...(BASE ? [["baseline", BASE] as [string, string]] : [])];
type Case = { name: string; args: string[]; rpc: boolean; baseline: boolean };
const CASES: Case[] = [
  { name: "get_state, models.json provider", args: ["--mode", "rpc", ...MODEL_ARGS], rpc: true, baseline: true },
  { name: "get_state, --provider anthropic", args: ["--mode", "rpc", "--provider", "anthropic"], rpc: true, baseline: true },
  { name: "pion models --json (whole catalog), spawn → exit", args: ["models", "--json"], rpc: false, baseline: false },
];
const res = new Map<string, { ms: number[]; peak: number[] }>();

async function once(bin: string, c: Case): Promise<{ ms: number; peak: number } | undefined> {
  const base = sandbox("pion");
  const box: Sandbox = { ...base, env: { ...base.env, ANTHROPIC_API_KEY: "bench-key" }, cmd: (a) => [bin, ...a] };
  try {
    const t0 = performance.now();
    if (c.rpc) {
      const child = spawnAgent(box, c.args);
      child.send(`${JSON.stringify({ id: "s1", type: "get_state" })}\n`);
      const r = await child.out.line(`"id":"s1"`).catch(() => undefined);
      const ms = performance.now() - t0;
      const { peak } = await child.finish();
      if (!r?.line.includes('"success":true')) return void console.error(`${bin} ${c.name}: failed: ${r?.line ?? (await child.stderr)}`);
      return { ms, peak };
    }
    const m = measured(box.cmd(c.args));
    const proc = Bun.spawn(m.argv, { cwd: box.cwd, env: box.env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
    m.attach(proc.pid);
    const [, code] = await Promise.all([new Response(proc.stdout).arrayBuffer(), proc.exited]);
    const ms = performance.now() - t0;
    if (code !== 0) return void console.error(`${bin} ${c.name}: exit ${code}`);
    return { ms, peak: m.peak() };
  } finally {
    box.cleanup();
  }
}

for (let i = 0; i < N + 1; i++) {
  for (const c of CASES) {
    for (const [label, bin] of i % 2 ? [...bins].reverse() : bins) {
      if (label === "baseline" && !c.baseline) continue;
      const r = await once(bin, c);
      if (!r || i === 0) continue; // the first round warms the page cache
      const key = `${label}|${c.name}`;
      if (!res.has(key)) res.set(key, { ms: [], peak: [] });
      res.get(key)!.ms.push(r.ms);
      res.get(key)!.peak.push(r.peak);
    }
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] ?? Number.NaN;
const show = (label: string, c: Case) => {
  const r = res.get(`${label}|${c.name}`);
  return r ? `${median(r.ms).toFixed(1)} ms, ${(median(r.peak) / 1024 / 1024).toFixed(1)} MB` : "-";
};
console.log(`\n### Model catalog: spawn → response, peak RSS (medians)\n`);
console.log(`| case | pion |${BASE ? " baseline |" : ""}`);
console.log(`|---|---|${BASE ? "---|" : ""}`);
for (const c of CASES) console.log(`| ${c.name} | ${show("pion", c)} |${BASE ? ` ${show("baseline", c)} |` : ""}`);
