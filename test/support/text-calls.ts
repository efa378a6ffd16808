/**
 * Runs text helpers (`[name, ...args]` calls) in a process of their own with a time limit, so a
 * helper that never returns fails a test instead of hanging it. `textCalls("pion", calls)` calls
 * pion's exports (through the module map extensions import), `textCalls(referenceDir, calls)` the
 * reference's pi-tui and pi-coding-agent. Answers come back one JSON line per call, so a call that
 * stalls is named. `fuzzyFilter` is called with the identity as its getText.
 */
import { writeSync } from "node:fs";
import { join } from "node:path";

export type TextCall = [string, ...unknown[]];

export interface TextAnswers {
  results: unknown[];
  /** The call that did not answer within the limit, if one did not. */
  stalled?: TextCall;
}

export async function textCalls(side: string, calls: TextCall[], timeoutMs = 20_000): Promise<TextAnswers> {
  const child = Bun.spawn(["bun", import.meta.path, side], { stdin: new Blob([JSON.stringify(calls)]), stdout: "pipe", stderr: "pipe" });
  const timer = setTimeout(() => child.kill(9), timeoutMs);
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  const results = out.split("\n").filter(Boolean).map((l) => JSON.parse(l) as unknown);
  if (results.length < calls.length) return { results, stalled: calls[results.length] };
  if (code !== 0) throw new Error(`text calls failed: ${err}`);
  return { results };
}

async function helpers(side: string): Promise<Record<string, (...args: unknown[]) => unknown>> {
  if (side === "pion") {
    const { referenceModules } = await import("../../src/extensions/surface/modules.ts");
    const m = referenceModules();
    return { ...m["pi-coding-agent"], ...m["pi-tui"] } as Record<string, (...args: unknown[]) => unknown>;
  }
  const tui = await import(join(side, "../pi-tui/dist/index.js"));
  const agent = await import(join(side, "dist/index.js"));
  return { ...agent, ...tui };
}

if (import.meta.main) {
  const fns = await helpers(process.argv[2]!);
  const calls = JSON.parse(await Bun.stdin.text()) as TextCall[];
  for (const [name, ...args] of calls) {
    const result = name === "fuzzyFilter" ? fns[name]!(args[0], args[1], (s: unknown) => s) : fns[name]!(...args);
    writeSync(1, `${JSON.stringify(result ?? null)}\n`); // unbuffered: what was answered survives a kill
  }
}
