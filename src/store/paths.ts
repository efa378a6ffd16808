import { mkdirSync } from "node:fs";
import { join, resolve } from "node:path";

/*
 * Layout under a sessions base directory (`--session-dir`, or `$PION_HOME/sessions`):
 *
 *   <base>/pion.db                                  every session of every cwd
 *   <base>/--home-user-project--/<ts>_<id>.jsonl    one v3 export per session, grouped by cwd
 *
 * One database for the whole base directory, not one per cwd folder: listing the sessions
 * of all cwds and full-text search across them are then single indexed queries, and a
 * session's row never has to move when its cwd is unknown or changes. The per-cwd JSONL
 * folders keep the reference's naming, so its tools find pion's files where they look.
 */

export const DATABASE_FILE = "pion.db";

export function databasePath(sessionsBaseDir: string): string {
  return join(sessionsBaseDir, DATABASE_FILE);
}

/** `<base>/--<cwd without its leading separator, with / \ and : turned into ->--`, as the reference names it. */
export function sessionDirFor(sessionsBaseDir: string, cwd: string): string {
  const safe = resolve(cwd).replace(/^[/\\]/, "").replace(/[/\\:]/g, "-");
  return join(sessionsBaseDir, `--${safe}--`);
}

/** `2026-11-29T13-58-47-245Z_<id>.jsonl` for header timestamp `2026-11-29T13:58:47.245Z`. */
export function sessionFileName(timestamp: string, sessionId: string): string {
  return `${timestamp.replace(/[:.]/g, "-")}_${sessionId}.jsonl`;
}

export function sessionFilePath(sessionsBaseDir: string, cwd: string, timestamp: string, sessionId: string): string {
  return join(sessionDirFor(sessionsBaseDir, cwd), sessionFileName(timestamp, sessionId));
}

/** Creates `dir` and its missing parents as 0700; existing folders keep their mode. */
export function ensurePrivateDir(dir: string): void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
}
