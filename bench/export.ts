/**
 * The session page for a large session: a 10k-entry v3 file in the reference's format (about 1 KB
 * a line, tool calls and results), exported with `--export <file> <out>` by each agent, side by
 * side. Figures: the export's wall time (spawn to exit), the page's size, and, opened from file://
 * in headless Chromium (playwright-core), the time to first contentful paint and until the page's
 * script is done (pion: `body.drawn`; the reference: its load event).
 * Goal (issue #42): export under 2 s; the page size and first paint are reported beside the reference's.
 * BENCH_EXPORT_SIZE changes the size, BENCH_ITER (default 3) the iterations.
 */
import { statSync } from "node:fs";
import { join } from "node:path";
import { type Agent, agents, copyInto, header, iterations, printTable, type Row, runToExit, sandbox } from "./lib.ts";
import { writeSession } from "./session-file.ts";

const SIZE = Number(process.env.BENCH_EXPORT_SIZE ?? 10_000);
const CHROMIUM = process.env.PION_TEST_CHROMIUM ?? "/usr/bin/chromium";
const N = iterations(3);
header(`export (${SIZE.toLocaleString("en-US")} entries)`, N);

const gen = sandbox("pion");
const src = join(gen.root, "big.jsonl");
writeSession(src, SIZE, gen.cwd);

const { chromium } = await import("playwright-core");
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] });

interface Figures {
  exportMs: number[];
  bytes: number[];
  paintMs: number[];
  readyMs: number[];
}
const figures: Record<Agent, Figures> = {
  pion: { exportMs: [], bytes: [], paintMs: [], readyMs: [] },
  ref: { exportMs: [], bytes: [], paintMs: [], readyMs: [] },
};

for (let i = 0; i < N; i++) {
  for (const agent of agents()) {
    const box = sandbox(agent);
    const file = copyInto(src, box.cwd, "big.jsonl");
    const out = join(box.cwd, "big.html");
    const r = await runToExit(box, ["--export", file, out]);
    if (r.code !== 0) throw new Error(`${agent} --export failed (${r.code}): ${r.stderr.slice(-500)}`);
    const f = figures[agent];
    f.exportMs.push(r.ms);
    f.bytes.push(statSync(out).size);
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const t0 = performance.now();
    await page.goto(`file://${out}`, { waitUntil: "load", timeout: 120_000 });
    if (agent === "pion") await page.waitForSelector("body.drawn", { timeout: 120_000 });
    f.readyMs.push(performance.now() - t0);
    const fcp = await page.evaluate(() => performance.getEntriesByName("first-contentful-paint")[0]?.startTime ?? -1);
    f.paintMs.push(fcp);
    await page.close();
    box.cleanup();
  }
}
await browser.close();
gen.cleanup();

const row = (metric: string, unit: Row["unit"], pick: (f: Figures) => number[], goal?: string, goalMet?: (p: number[]) => boolean): Row => ({
  metric,
  unit,
  pion: pick(figures.pion),
  ref: figures.ref.exportMs.length > 0 ? pick(figures.ref) : undefined,
  goal,
  goalMet,
});
printTable(
  `export_html of a ${SIZE.toLocaleString("en-US")}-entry session`,
  [
    row("export (--export, spawn to exit)", "ms", (f) => f.exportMs, "< 2000 ms", (p) => Math.max(...p) < 2000),
    row("page size", "B", (f) => f.bytes),
    row("first contentful paint (Chromium)", "ms", (f) => f.paintMs),
    row("page ready (script done / load)", "ms", (f) => f.readyMs),
  ],
  { verdicts: true },
);
