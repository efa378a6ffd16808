/**
 * A lock on a file shared with the reference agent, which locks auth.json with
 * proper-lockfile: the lock is a directory `<real path>.lock` made with mkdir (atomic), kept
 * fresh by touching its mtime while held, and taken over when its mtime is older than the
 * stale limit (its holder died). Writes under it replace the file by rename, so a reader never
 * sees half a file.
 */
import { mkdirSync, realpathSync, renameSync, rmdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";

/** A lock whose mtime is older than this is abandoned (the reference's own limit for auth.json). */
const STALE_MS = 30_000;
/** How often a held lock's mtime is refreshed. */
const TOUCH_MS = 5_000;
/** How long to wait for another holder before giving up. */
const WAIT_MS = 30_000;

/** The file a symlink points at (a link to auth.json shares its lock and is not replaced by the write). */
const realPath = (file: string): string => {
  try {
    return realpathSync(file);
  } catch {
    return file;
  }
};
const lockPathOf = (file: string): string => `${realPath(file)}.lock`;

function tryMkdir(lock: string): boolean {
  try {
    mkdirSync(lock);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
  }
  try {
    if (Date.now() - statSync(lock).mtimeMs > STALE_MS) rmdirSync(lock);
  } catch {
    // released meanwhile: the next attempt takes it
  }
  return false;
}

/** Run `fn` holding the lock on `file`; throws when another holder keeps it past the wait. */
export async function withFileLock<T>(file: string, fn: () => Promise<T> | T): Promise<T> {
  const lock = lockPathOf(file);
  const deadline = Date.now() + WAIT_MS;
  for (let attempt = 0; !tryMkdir(lock); attempt++) {
    if (Date.now() > deadline) throw new Error(`${file} is locked by another process (${lock})`);
    await Bun.sleep(Math.min(10 * 2 ** attempt, 1000) * (1 + Math.random()));
  }
  const touch = setInterval(() => {
    try {
      const now = new Date();
      utimesSync(lock, now, now);
    } catch {
      // taken over or removed: the write below still replaces the file whole
    }
  }, TOUCH_MS);
  try {
    return await fn();
  } finally {
    clearInterval(touch);
    try {
      rmdirSync(lock);
    } catch {
      // already gone
    }
  }
}

/** Replace `file` with `text`: a temp file beside it (mode 0600), then a rename over it. */
export function writeFileAtomic(path: string, text: string): void {
  const file = realPath(path);
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.${Date.now()}.tmp`);
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, file);
}
