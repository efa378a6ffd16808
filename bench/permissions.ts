/**
 * What the permission gate costs a run (issue #33; start-up with a rule is in startup.ts): one
 * `--mode json` prompt whose reply is a bash call (`echo hi`), timed from its `tool_execution_start`
 * line to its `tool_execution_end` line as the reader sees them: without a rule, with
 * `--deny 'bash(rm *)'` (the first line a rule judges: tree-sitter's bash grammar starts loading
 * when the run starts, beside the first model request), and for the reference (no gate).
 */
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { agents, header, iterations, MODEL_ARGS, printTable, sandbox, spawnAgent, type Agent } from "./lib.ts";

const N = iterations(10);
header("permissions", N);
const RULE = ["--deny", "bash(rm *)"];

/** spawn, one bash call, exit: the call's time from start to end line, and the whole run's. */
async function firstBash(agent: Agent, args: string[]) {
  const fake = startFakeProvider();
  fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_b1", name: "bash", arguments: { command: "echo hi" } }] });
  fake.enqueue({ blocks: [{ type: "text", text: "done" }] });
  const box = sandbox(agent, fake.url);
  const t0 = performance.now();
  const child = spawnAgent(box, ["--mode", "json", ...MODEL_ARGS, ...args, "run it"], { keepLines: false });
  const [start, end] = [child.out.marker(`"type":"tool_execution_start"`), child.out.marker(`"type":"tool_execution_end"`)];
  await child.finish();
  const total = performance.now() - t0;
  box.cleanup();
  await fake.stop();
  return { call: (await end) - (await start), total };
}

const calls: Record<string, { call: number[]; total: number[] }> = {};
for (let i = 0; i < N + 1; i++) {
  for (const agent of agents()) {
    const runs = agent === "pion" ? [["none", []] as const, ["rule", RULE] as const] : [["ref", []] as const];
    const timed = [];
    for (const [label, args] of runs) timed.push([label, await firstBash(agent, [...args])] as const);
    if (i === 0) continue; // warm-up (page cache)
    for (const [label, t] of timed) {
      const c = (calls[label] ??= { call: [], total: [] });
      c.call.push(t.call);
      c.total.push(t.total);
    }
  }
}

printTable("One bash call (`echo hi`) in --mode json: tool_execution_start → tool_execution_end", [
  { metric: "no rule", unit: "ms", pion: calls.none!.call, ref: calls.ref?.call },
  { metric: "first call a rule judges (loads the parser)", unit: "ms", pion: calls.rule!.call, ref: calls.ref?.call },
  { metric: "whole run, no rule", unit: "ms", pion: calls.none!.total, ref: calls.ref?.total },
  { metric: "whole run, with the rule", unit: "ms", pion: calls.rule!.total, ref: calls.ref?.total },
]);
