/**
 * One-shot JSON mode: `--mode json "hi"` answered by the test fake provider with a 10-delta
 * text reply; spawn -> exit. Goal: under 60 ms.
 */
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { agents, header, iterations, MODEL_ARGS, printTable, runToExit, sandbox } from "./lib.ts";

const N = iterations(10);
header("json-mode", N);
const fake = startFakeProvider();
const reply = { blocks: [{ type: "text" as const, text: Array.from({ length: 10 }, (_, i) => `word${i} `) }] };
const res: Record<string, { ms: number[]; peak: number[] }> = {};
for (let i = 0; i < N + 1; i++) {
  for (const agent of agents()) {
    const box = sandbox(agent, fake.url);
    if (fake.remaining === 0) fake.enqueue(reply); // a failed run may leave its reply queued
    const r = await runToExit(box, ["--mode", "json", ...MODEL_ARGS, "hi"]);
    const deltas = r.stdout.split('"text_delta"').length - 1;
    if (r.code !== 0 || deltas < 10) console.error(`${agent}: exit ${r.code}, ${deltas} deltas; stderr: ${r.stderr.slice(0, 300)}`);
    box.cleanup();
    if (i === 0) continue;
    (res[agent] ??= { ms: [], peak: [] }).ms.push(r.ms);
    res[agent].peak.push(r.peak);
  }
}
await fake.stop();
printTable('JSON mode (`--mode json "hi"`, 10-delta reply, spawn → exit)', [
  { metric: "spawn → exit", unit: "ms", pion: res.pion!.ms, ref: res.ref?.ms, goal: "< 60 ms" },
  { metric: "peak RSS", unit: "MB", pion: res.pion!.peak, ref: res.ref?.peak },
]);
