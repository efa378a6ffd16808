/**
 * What the sandbox costs a command (issue #38): one `--mode json` run whose model asks for two
 * bash calls (`true`) in two turns, without and with `--sandbox workspace-write`; each call's
 * `durationMs` as pion reports it on tool_execution_end. The first sandboxed call includes the
 * probe (bwrap started once to check it can run here) and building the seccomp filter.
 */
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { header, iterations, MODEL_ARGS, printTable, sandbox, spawnAgent } from "./lib.ts";

const N = iterations(10);
header("sandbox", N);

async function twoCalls(args: string[]): Promise<[number, number]> {
  const fake = startFakeProvider();
  for (const id of ["toolu_1", "toolu_2"]) fake.enqueue({ blocks: [{ type: "toolCall", id, name: "bash", arguments: { command: "true" } }] });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const box = sandbox("pion", fake.url);
  const child = spawnAgent(box, ["--mode", "json", ...MODEL_ARGS, ...args, "go"], { keepLines: '"tool_execution_end"' });
  await child.finish();
  const ms = child.out.lines.map((l) => (JSON.parse(l) as { durationMs: number }).durationMs);
  box.cleanup();
  await fake.stop();
  return [ms[0] ?? NaN, ms[1] ?? NaN];
}

const res: Record<string, number[]> = { off1: [], off2: [], on1: [], on2: [] };
for (let i = 0; i < N + 1; i++) {
  const off = await twoCalls([]);
  const on = await twoCalls(["--sandbox", "workspace-write"]);
  if (i === 0) continue;
  res.off1!.push(off[0]);
  res.off2!.push(off[1]);
  res.on1!.push(on[0]);
  res.on2!.push(on[1]);
}
printTable("A bash call (`true`), durationMs, without and with --sandbox workspace-write (the reference has no sandbox)", [
  { metric: "first call, no sandbox", unit: "ms", pion: res.off1! },
  { metric: "first call, sandboxed (probe + filter + bwrap)", unit: "ms", pion: res.on1! },
  { metric: "second call, no sandbox", unit: "ms", pion: res.off2! },
  { metric: "second call, sandboxed", unit: "ms", pion: res.on2! },
]);
