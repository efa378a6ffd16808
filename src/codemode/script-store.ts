/**
 * `store()` / `load()` values of codemode scripts: each successful script that stored something
 * appends a `codemode-store` custom entry with its writes (`null` deletes a key), so a branch
 * sees the values written on its own path, after a reopen too.
 */
import type { Entry } from "../store/entries.ts";

export const STORE_ENTRY_TYPE = "codemode-store";

export function storeOnBranch(branch: readonly Entry[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const e of branch) {
    if (e.type !== "custom" || e.customType !== STORE_ENTRY_TYPE) continue;
    const writes = (e.data as { writes?: unknown } | undefined)?.writes;
    if (!writes || typeof writes !== "object") continue;
    for (const [k, v] of Object.entries(writes)) {
      if (v === null) delete out[k];
      else out[k] = v;
    }
  }
  return out;
}
