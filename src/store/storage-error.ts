import { readFileSync, statfsSync } from "node:fs";
import { dirname } from "node:path";
import { PionError } from "../util/errors.ts";

/*
 * A write the disk refused (full, out of quota, read-only, an I/O error), from SQLite or from a
 * file write, as one PionError whose message names the disk and the path: the run that met it
 * stops before another model request (nothing more is spent on a conversation that is not
 * saved), and the wire layers answer with it.
 */

/**
 * `storage_full`: no space (or quota) left; `storage_io`: the disk failed or is read-only;
 * `storage_corrupt`: SQLite found the database damaged (it is set aside on the next open).
 */
export const STORAGE_CODES: ReadonlySet<string> = new Set(["storage_full", "storage_io", "storage_corrupt"]);

/** Beside a database SQLite reported damaged while in use: the next open moves it aside (db-recovery.ts). */
export const damagedMarker = (dbPath: string): string => `${dbPath}.damaged`;

export const isStorageError = (err: unknown): err is PionError => err instanceof PionError && STORAGE_CODES.has(err.code);

const FULL = new Set(["SQLITE_FULL", "ENOSPC", "EDQUOT"]);
const IO = new Set(["SQLITE_IOERR", "SQLITE_READONLY", "EIO", "EROFS"]);

/** The kind of a disk failure in `err`, or undefined for any other error. */
function kind(err: unknown): "full" | "io" | "corrupt" | undefined {
  const code = (err as { code?: unknown })?.code;
  if (typeof code !== "string") return undefined;
  const base = code.startsWith("SQLITE_") ? code.replace(/^(SQLITE_[A-Z]+?)(_[A-Z_]+)?$/, "$1") : code;
  if (FULL.has(base) || code === "SQLITE_IOERR_WRITE" && /full|space/i.test(String((err as Error).message))) return "full";
  if (IO.has(base)) return "io";
  if (base === "SQLITE_CORRUPT" || base === "SQLITE_NOTADB") return "corrupt";
  return undefined;
}

/** `err` as a storage PionError naming `path`'s disk, or `err` unchanged when it is no disk failure. */
export function asStorageError(err: unknown, path: string): unknown {
  if (err instanceof PionError) return err;
  let k = kind(err);
  if (!k) return err;
  if (k === "corrupt") {
    const detail = err instanceof Error ? err.message : String(err);
    return new PionError(`The session database ${path} is damaged (${detail}); the next pion to open it moves it aside and rebuilds it from the session files`, "storage_corrupt");
  }
  const free = freeBytes(path);
  // SQLite says "disk I/O error" when it cannot even make its shared-memory file on a full disk.
  if (k === "io" && free !== undefined && free < LOW_BYTES) k = "full";
  const disk = `the disk mounted at ${mountPointOf(path) ?? "?"}${free === undefined ? "" : ` (${formatBytes(free)} free)`}`;
  const detail = err instanceof Error ? err.message : String(err);
  return k === "full"
    ? new PionError(`No space left on ${disk}: ${path} could not be written (${detail}); free some space and try again`, "storage_full")
    : new PionError(`I/O error on ${disk}: ${path} could not be written (${detail})`, "storage_io");
}

const LOW_BYTES = 64 * 1024;

function freeBytes(path: string): number | undefined {
  try {
    const s = statfsSync(dirname(path));
    return Number(s.bavail) * Number(s.bsize);
  } catch {
    return undefined; // the folder itself may be what failed
  }
}

function mountPointOf(path: string): string | undefined {
  try {
    let best: string | undefined;
    for (const line of readFileSync("/proc/self/mounts", "utf8").split("\n")) {
      const at = line.split(" ")[1]?.replace(/\\040/g, " ");
      if (at && (path === at || path.startsWith(at.endsWith("/") ? at : `${at}/`)) && (!best || at.length > best.length)) best = at;
    }
    return best;
  } catch {
    return undefined; // not Linux: the path is named all the same
  }
}

function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1 << 20) return `${Math.round(n / 1024)} KB`;
  return `${(n / (1 << 20)).toFixed(1)} MB`;
}
