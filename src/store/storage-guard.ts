import { writeFileSync } from "node:fs";
import { PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { asStorageError, damagedMarker } from "./storage-error.ts";
import type { SessionStore } from "./store.ts";

/**
 * `inner` with every failure the disk caused (full, I/O error) turned into a storage PionError
 * naming the disk and `path` (storage-error.ts); every other error as it was.
 */
export function withStorageErrors(inner: SessionStore, path: string): SessionStore {
  return new Proxy(inner, {
    get(target, key, receiver) {
      const value = Reflect.get(target, key, receiver);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        try {
          return value.apply(target, args);
        } catch (err) {
          const named = asStorageError(err, path);
          if (named instanceof PionError && named.code === "storage_corrupt") markDamaged(path);
          // Letting go never fails: a lock left behind lapses with this process.
          if (key === "releaseSession" || key === "close") {
            log("store", `${String(key)} failed; the session's lock lapses when this process exits`, { error: named instanceof Error ? named.message : String(named) });
            return undefined;
          }
          throw named;
        }
      };
    },
  });
}

function markDamaged(dbPath: string): void {
  try {
    writeFileSync(damagedMarker(dbPath), `${new Date().toISOString()}\n`, { mode: 0o600 });
  } catch (err) {
    log("store", "the session database is damaged and the mark saying so could not be written", { path: dbPath, error: err instanceof Error ? err.message : String(err) });
  }
}
