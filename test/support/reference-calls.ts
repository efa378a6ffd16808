/**
 * Runs functions of the reference's pi-coding-agent in a process of their own, so its imports of
 * pi-ai resolve to the reference's package and not to pion's virtual modules (which the extension
 * tests register process-wide). `referenceCalls(dir, calls)` sends `[name, ...args]` lists and
 * gets back what each returned, through JSON: Sets as sorted arrays, undefined kept.
 * Argument `{ "$reader": entries }` stands for a SessionManager over those entries (getEntry,
 * getBranch), `{ "$shared": i }` for a copy of `shared[i]` (a large value sent once);
 * `migrateSessionEntries` answers the entries it migrated. A name the package does not export is
 * looked up in its compaction module (`estimateContextTokens`, `estimateProjectedContextTokens`).
 */
import { join } from "node:path";

type Call = [string, ...unknown[]];
const UNDEFINED = { $undefined: true };

/** JSON for a comparison: Sets become sorted arrays. Apply it to pion's answers too. */
export const toJson = (x: unknown): unknown => JSON.parse(JSON.stringify(x, (_k, v) => (v instanceof Set ? [...v].sort() : v)) ?? "null");

export async function referenceCalls(referenceDir: string, calls: Call[], shared: unknown[] = []): Promise<unknown[]> {
  const sent = calls.map((c) => c.map((a) => (a === undefined ? UNDEFINED : a)));
  const child = Bun.spawn(["bun", import.meta.path, referenceDir], { stdin: new Blob([JSON.stringify({ calls: sent, shared })]), stdout: "pipe", stderr: "pipe" });
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  if (code !== 0) throw new Error(`reference calls failed: ${err}`);
  return (JSON.parse(out) as unknown[]).map((r) => (isUndefined(r) ? undefined : r));
}

type E = { id: string; parentId: string | null };
const isUndefined = (x: unknown) => JSON.stringify(x) === JSON.stringify(UNDEFINED);

/** An argument as `referenceCalls` sends it, made real: a reader, a copy of a shared value, undefined. */
export function argument(a: unknown, shared: readonly unknown[]): unknown {
  if (isUndefined(a)) return undefined;
  if (a && typeof a === "object" && "$reader" in a) return sessionReader((a as { $reader: E[] }).$reader);
  if (a && typeof a === "object" && "$shared" in a) return structuredClone(shared[(a as { $shared: number }).$shared]);
  return a;
}

/** A SessionManager's reads for collectEntriesForBranchSummary over `entries`. */
export function sessionReader(entries: E[]) {
  const byId = new Map(entries.map((e) => [e.id, e]));
  return {
    getEntry: (id: string) => byId.get(id),
    getBranch: (from: string) => {
      const out: E[] = [];
      for (let e = byId.get(from); e; e = e.parentId ? byId.get(e.parentId) : undefined) out.push(e);
      return out.reverse();
    },
  };
}

if (import.meta.main) {
  type Fns = Record<string, (...args: unknown[]) => unknown>;
  const exported = (await import(join(process.argv[2]!, "dist/index.js"))) as Fns;
  const ref: Fns = { ...((await import(join(process.argv[2]!, "dist/core/compaction/compaction.js"))) as Fns), ...exported };
  const { calls, shared } = JSON.parse(await Bun.stdin.text()) as { calls: Call[]; shared: unknown[] };
  const results: unknown[] = [];
  for (const [name, ...raw] of calls) {
    const args = raw.map((a) => argument(a, shared));
    const value = name === "DEFAULT_COMPACTION_SETTINGS" ? ref[name] : await ref[name]!(...args);
    const result = name === "migrateSessionEntries" ? args[0] : value;
    results.push(result === undefined ? UNDEFINED : toJson(result));
  }
  process.stdout.write(JSON.stringify(results));
}
