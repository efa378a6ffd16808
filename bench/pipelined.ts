/**
 * Pipelined commands: after a warm-up `get_state`, 20,000 `get_state` lines are written at once;
 * time from the write to the 20,000th response line; commands/s. Goal: at least 250,000/s.
 * stdout is only counted (newlines), never parsed, so the reader is not the bottleneck.
 */
import { agents, header, iterations, MODEL_ARGS, printTable, sandbox, spawnAgent } from "./lib.ts";

const COUNT = Number(process.env.BENCH_PIPELINED ?? 20000);
const N = iterations(5);
header("pipelined", N);
const batch = Buffer.from(Array.from({ length: COUNT }, (_, i) => `{"id":"p${i}","type":"get_state"}\n`).join(""));
const res: Record<string, { ms: number[]; rate: number[]; peak: number[] }> = {};
for (let i = 0; i < N; i++) {
  for (const agent of agents()) {
    const box = sandbox(agent);
    const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS], { keepLines: false });
    child.send(`{"id":"warm","type":"get_state"}\n`);
    await child.out.until(() => child.out.newlines >= 1);
    const base = child.out.newlines;
    const t0 = performance.now();
    child.proc.stdin.write(batch);
    child.proc.stdin.flush();
    await child.out.until(() => child.out.newlines >= base + COUNT);
    const ms = performance.now() - t0;
    const got = child.out.newlines - base;
    const { peak } = await child.finish();
    if (got < COUNT) console.error(`${agent}: only ${got} of ${COUNT} responses; ${(await child.stderr).slice(0, 300)}`);
    box.cleanup();
    const r = (res[agent] ??= { ms: [], rate: [], peak: [] });
    r.ms.push(ms);
    r.rate.push((COUNT / ms) * 1000);
    r.peak.push(peak);
  }
}
printTable(`Pipelined: ${COUNT.toLocaleString("en-US")} get_state written at once`, [
  { metric: "time to last response", unit: "ms", pion: res.pion!.ms, ref: res.ref?.ms },
  { metric: "commands/s", unit: "/s", pion: res.pion!.rate, ref: res.ref?.rate, goal: "≥ 250,000/s" },
  { metric: "peak RSS", unit: "MB", pion: res.pion!.peak, ref: res.ref?.peak },
]);
