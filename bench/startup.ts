/**
 * Start-up: spawn -> first `get_state` response (written to stdin at spawn), then stdin closed;
 * peak memory of that process. Goals: under 20 ms, under 45 MB.
 */
import { agents, header, iterations, MODEL_ARGS, printTable, sandbox, spawnAgent } from "./lib.ts";

const N = iterations(10);
header("startup", N);
const res: Record<string, { ms: number[]; peak: number[] }> = {};
for (let i = 0; i < N + 1; i++) {
  for (const agent of agents()) {
    const box = sandbox(agent);
    const t0 = performance.now();
    const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS]);
    child.send(`${JSON.stringify({ id: "s1", type: "get_state" })}\n`);
    const r = await child.out.line(`"id":"s1"`).catch(() => undefined);
    const ms = performance.now() - t0;
    const { peak } = await child.finish();
    if (!r || !r.line.includes('"success":true')) console.error(`${agent}: get_state failed: ${r?.line ?? (await child.stderr)}`);
    box.cleanup();
    if (i === 0) continue; // warm-up (page cache)
    (res[agent] ??= { ms: [], peak: [] }).ms.push(ms);
    res[agent].peak.push(peak);
  }
}
printTable("Start-up (spawn → get_state response)", [
  { metric: "spawn → get_state", unit: "ms", pion: res.pion!.ms, ref: res.ref?.ms, goal: "< 20 ms" },
  { metric: "peak RSS", unit: "MB", pion: res.pion!.peak, ref: res.ref?.peak, goal: "< 45 MB" },
]);
