/** Run limits for unattended runs (CI): how many model calls and how much money one run may use. */

export interface RunLimits {
  /** Model calls per run: every request to the model counts, retries and compaction summaries included. */
  maxTurns?: number;
  /** Dollars per run, priced from the model's costs, over the same calls. */
  maxCostUsd?: number;
}

/** Per-run values win over the session's, field by field. */
export function mergeLimits(base: RunLimits, run: RunLimits | undefined): RunLimits {
  const out: RunLimits = {};
  const maxTurns = run?.maxTurns ?? base.maxTurns;
  const maxCostUsd = run?.maxCostUsd ?? base.maxCostUsd;
  if (maxTurns !== undefined) out.maxTurns = maxTurns;
  if (maxCostUsd !== undefined) out.maxCostUsd = maxCostUsd;
  return out;
}

/**
 * Why the run must not make another model call, or undefined while it may. Checked between
 * turns (after the tool results are committed) and before a retry, so a run stops cleanly.
 */
export function limitReached(limits: RunLimits, calls: number, costUsd: number): string | undefined {
  if (limits.maxTurns !== undefined && calls >= limits.maxTurns) {
    return `Run limit reached: max turns ${limits.maxTurns} (${calls} model call${calls === 1 ? "" : "s"} made)`;
  }
  if (limits.maxCostUsd !== undefined && costUsd >= limits.maxCostUsd) {
    return `Run limit reached: max cost $${limits.maxCostUsd} (spent $${formatUsd(costUsd)})`;
  }
  return undefined;
}

/** A checked limit value from a flag or setting: a positive integer for turns, a positive number for cost. */
export function parseLimit(kind: "maxTurns" | "maxCostUsd", raw: string | number): number {
  const n = typeof raw === "number" ? raw : Number(kind === "maxCostUsd" ? raw.trim().replace(/^\$/, "") : raw.trim());
  const ok = kind === "maxTurns" ? Number.isInteger(n) && n >= 1 : Number.isFinite(n) && n > 0;
  if (typeof raw === "string" && raw.trim() === "") throw new Error(`${label(kind)} needs a value`);
  if (!ok) throw new Error(`${label(kind)} must be ${kind === "maxTurns" ? "a whole number of at least 1" : "a positive number of dollars"}, got "${raw}"`);
  return n;
}

const label = (kind: "maxTurns" | "maxCostUsd") => (kind === "maxTurns" ? "--max-turns" : "--max-cost");

function formatUsd(n: number): string {
  return n >= 0.01 ? n.toFixed(4).replace(/0+$/, "").replace(/\.$/, "") : n.toPrecision(3);
}
