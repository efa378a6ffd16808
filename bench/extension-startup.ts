/**
 * Start-up with and without one small extension (a command and an `import` of the reference's
 * package), for dist/pion and, interleaved, a baseline binary (PION_BENCH_BASE, e.g. one built
 * from an earlier commit): spawn -> first `get_state` response. Median of BENCH_ITER runs (20).
 * Goal: without extensions unchanged; with one, within 10% of the baseline.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { iterations, PION_BIN } from "./lib.ts";

const N = iterations(20);
const BASE = process.env.PION_BENCH_BASE;
const root = mkdtempSync(join(tmpdir(), "pion-bench-ext-"));
const ext = join(root, "small.ts");
writeFileSync(ext, 'import { defineTool } from "@earendil-works/pi-coding-agent";\nexport default function (pi: any) {\n  defineTool({});\n  pi.registerCommand("hello", { description: "say hello", handler: async (_a: string, ctx: any) => ctx.ui.notify("hello", "info") });\n}\n');

async function once(bin: string, extra: string[]): Promise<number> {
  const home = join(root, `home-${Math.random().toString(36).slice(2)}`);
  mkdirSync(home);
  const t0 = performance.now();
  const proc = Bun.spawn([bin, "--mode", "rpc", "--no-session", ...extra], { cwd: root, env: { PATH: process.env.PATH ?? "", HOME: home, PION_HOME: home }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  proc.stdin.write(`${JSON.stringify({ id: "s1", type: "get_state" })}\n`);
  const reader = proc.stdout.getReader();
  let text = "";
  while (!text.includes('"id":"s1"')) {
    const { value, done } = await reader.read();
    if (done) break;
    text += new TextDecoder().decode(value);
  }
  const ms = performance.now() - t0;
  proc.stdin.end();
  await proc.exited;
  rmSync(home, { recursive: true, force: true });
  return ms;
}

const pct = (xs: number[], p: number) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * p)]!;
const median = (xs: number[]) => pct(xs, 0.5);
const bins = { pion: PION_BIN, ...(BASE ? { base: BASE } : {}) };
const cases = { "no extension": [] as string[], "one small extension": ["-e", ext] };
const times: Record<string, number[]> = {};
for (let i = 0; i <= N; i++) {
  for (const [name, bin] of Object.entries(bins)) {
    for (const [label, args] of Object.entries(cases)) {
      const ms = await once(bin, args);
      if (i > 0) (times[`${name} | ${label}`] ??= []).push(ms); // the first round warms the page cache
    }
  }
}
for (const [key, xs] of Object.entries(times)) console.log(`${key.padEnd(36)} median ${median(xs).toFixed(1)} ms  (p25 ${pct(xs, 0.25).toFixed(1)}, min ${Math.min(...xs).toFixed(1)}, n=${xs.length})`);
rmSync(root, { recursive: true, force: true });
