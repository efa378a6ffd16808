import { readFileSync } from "node:fs";
import { PionError } from "../util/errors.ts";

/**
 * A process that may hold a session's writer lock. `start` is the kernel's start time of the
 * pid where /proc exposes it (empty elsewhere), so a recycled pid is not taken for the owner.
 */
export interface ProcessOwner {
  pid: number;
  start: string;
}

export function processOwner(pid: number = process.pid): ProcessOwner {
  return { pid, start: procStat(pid)?.start ?? "" };
}

/** True while `owner` runs: the pid exists, is not a zombie, and started when recorded. */
export function isOwnerAlive(owner: ProcessOwner): boolean {
  try {
    process.kill(owner.pid, 0);
  } catch (err) {
    // EPERM: the pid exists but belongs to another user; anything else means it is gone.
    if (!(err instanceof Error && "code" in err && err.code === "EPERM")) return false;
  }
  const stat = procStat(owner.pid);
  if (!stat) return true;
  if (stat.state === "Z" || stat.state === "X") return false;
  return owner.start === "" || stat.start === owner.start;
}

/** True when `lock` (a lock row's owner) is a live process other than `me`: the session is not `me`'s to write. */
export function heldElsewhere(lock: ProcessOwner | null | undefined, me: ProcessOwner): lock is ProcessOwner {
  return !!lock && !(lock.pid === me.pid && lock.start === me.start) && isOwnerAlive(lock);
}

/** The `session_locked` failure for a session another live process (`pid`) holds. */
export function sessionLocked(sessionId: string, pid: number): PionError {
  return new PionError(`Session ${sessionId} is open for writing in another pion process (pid ${pid})`, "session_locked");
}

/** Fields 3 (state) and 22 (starttime) of /proc/<pid>/stat; undefined without procfs. */
function procStat(pid: number): { state: string; start: string } | undefined {
  let text: string;
  try {
    text = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined; // no procfs (macOS) or the process is gone: kill(pid, 0) decides
  }
  // The command name (field 2) is parenthesised and may contain spaces or parentheses.
  const fields = text.slice(text.lastIndexOf(")") + 2).split(" ");
  const state = fields[0];
  const start = fields[19];
  return state && start ? { state, start } : undefined;
}
