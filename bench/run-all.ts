/**
 * Runs every bench in turn and prints their tables (markdown), with the machine and date first.
 * `bun bench/run-all.ts [name...]` runs only the named ones. BENCH_ITER applies to all.
 */
import { cpus, totalmem } from "node:os";
import { join } from "node:path";
import { PEAK_METHOD, PION_BIN, REF_CLI } from "./lib.ts";

const ALL = ["startup", "json-mode", "pipelined", "streaming", "sessions", "bash", "latency", "masking", "catalog", "prompt-cache", "permissions", "sandbox", "export"];
const pick = process.argv.slice(2);
const names = pick.length ? ALL.filter((n) => pick.includes(n)) : ALL;

const commit = (await Bun.$`git -C ${join(import.meta.dir, "..")} rev-parse --short HEAD`.nothrow().quiet().text()).trim();
console.log(`# pion benchmarks, ${new Date().toISOString()}`);
console.log(`machine: ${cpus().length} × ${cpus()[0]?.model ?? "cpu"}, ${(totalmem() / 2 ** 30).toFixed(0)} GB RAM; bun ${Bun.version}; pion ${PION_BIN} (commit ${commit || "?"})`);
console.log(`reference: ${REF_CLI ?? "not found (set PION_BENCH_REF=<path to cli.js>)"}`);
console.log(`peak memory: ${PEAK_METHOD}`);
const t0 = performance.now();
for (const name of names) {
  const t = performance.now();
  const p = Bun.spawn([process.execPath, join(import.meta.dir, `${name}.ts`)], { stdout: "inherit", stderr: "inherit", env: process.env });
  const code = await p.exited;
  console.log(`\n_${name}: ${((performance.now() - t) / 1000).toFixed(1)} s${code ? `, exit ${code}` : ""}_`);
}
console.log(`\n_total: ${((performance.now() - t0) / 1000).toFixed(1)} s_`);
