/**
 * Token streaming: a 100,000-text-delta reply from bench/sse-server.ts (precomputed Anthropic SSE),
 * RPC `prompt` -> `agent_settled`: deltas/s, stdout bytes per delta (all of stdout between the
 * prompt and agent_settled, divided by the delta count), peak memory of the process.
 * Goals: at least 200,000 deltas/s, at most 130 bytes/delta, under 80 MB.
 * A bare in-process SSE reader (fetch + split + JSON.parse of each delta) is printed as the ceiling.
 */
import { agents, header, iterations, MODEL_ARGS, printTable, sandbox, spawnAgent } from "./lib.ts";
import { startSseServer } from "./sse-server.ts";

const DELTAS = Number(process.env.BENCH_DELTAS ?? 100000);
const N = iterations(3);
header("streaming", N);
const server = startSseServer(DELTAS);

async function bareReader(): Promise<number> {
  const t0 = performance.now();
  const r = await fetch(`${server.url}/v1/messages`, { method: "POST", body: "{}" });
  const dec = new TextDecoder();
  let tail = "";
  let n = 0;
  for await (const c of r.body!) {
    const parts = (tail + dec.decode(c, { stream: true })).split("\n\n");
    tail = parts.pop()!;
    for (const p of parts) {
      if (p.startsWith("event: content_block_delta")) {
        JSON.parse(p.slice(p.indexOf("data: ") + 6));
        n++;
      }
    }
  }
  return (n / (performance.now() - t0)) * 1000;
}

const bare: number[] = [];
const res: Record<string, { rate: number[]; bpd: number[]; peak: number[]; ms: number[] }> = {};
for (let i = 0; i < N; i++) {
  bare.push(await bareReader());
  for (const agent of agents()) {
    const box = sandbox(agent, server.url);
    const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS], { keepLines: false });
    child.send(`{"id":"warm","type":"get_state"}\n`);
    await child.out.until(() => child.out.newlines >= 1);
    const bytes0 = child.out.bytes;
    const settled = child.out.marker('"type":"agent_settled"');
    const t0 = performance.now();
    child.send(`${JSON.stringify({ id: "p1", type: "prompt", message: "stream please" })}\n`);
    let timer: Timer | undefined;
    const timeout = new Promise<number>((r) => (timer = setTimeout(() => r(Number.NaN), 120_000)));
    const t1 = await Promise.race([settled, timeout]);
    clearTimeout(timer);
    const ms = t1 - t0;
    const bytes = child.out.bytes - bytes0;
    const { peak } = await child.finish();
    if (!Number.isFinite(ms)) console.error(`${agent}: no agent_settled; ${(await child.stderr).slice(0, 300)}`);
    box.cleanup();
    const r = (res[agent] ??= { rate: [], bpd: [], peak: [], ms: [] });
    r.ms.push(ms);
    r.rate.push((DELTAS / ms) * 1000);
    r.bpd.push(bytes / DELTAS);
    r.peak.push(peak);
  }
}
await server.stop();
printTable(`Streaming: ${DELTAS.toLocaleString("en-US")} text deltas, prompt → agent_settled`, [
  { metric: "prompt → agent_settled", unit: "ms", pion: res.pion!.ms, ref: res.ref?.ms },
  { metric: "deltas/s", unit: "/s", pion: res.pion!.rate, ref: res.ref?.rate, goal: "≥ 200,000/s" },
  { metric: "stdout bytes/delta", unit: "B", pion: res.pion!.bpd, ref: res.ref?.bpd, goal: "≤ 130 B" },
  { metric: "peak RSS", unit: "MB", pion: res.pion!.peak, ref: res.ref?.peak, goal: "< 80 MB" },
  { metric: "bare SSE reader (in-process, ceiling)", unit: "/s", pion: bare, pionNote: undefined },
]);
