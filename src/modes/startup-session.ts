import { locateSession } from "../session/navigation.ts";
import type { AgentSession } from "../session/session.ts";
import type { SessionHeader } from "../store/entries.ts";
import type { SessionStore } from "../store/store.ts";
import { PionError } from "../util/errors.ts";

export interface StartupChoice {
  cwd: string;
  /** `--session <path|id>` */
  session?: string;
  /** `--continue`: the most recent session of `cwd`. */
  continue?: boolean;
  /** `--session-id <id>`: this folder's session with that id, created when there is none. */
  sessionId?: string;
  /** `--fork <path|id>`: a copy of that session, in a new session of `cwd` (id from `sessionId` if given). */
  fork?: string;
}

/**
 * Put `session` in the session the command line asks for. The flags' combinations were checked
 * by the parser (`--fork` excludes `--session` and `--continue`, `--session-id` excludes both).
 * Returns whether an existing session was opened or forked, so the caller restores its settings.
 */
export function openStartupSession(
  session: AgentSession,
  store: SessionStore,
  o: StartupChoice,
  fileFor: (h: SessionHeader) => string | undefined,
): boolean {
  if (o.fork) {
    if (o.sessionId && store.getSession(o.sessionId)) throw new PionError(`Session already exists with id '${o.sessionId}'`, "invalid_argument");
    session.openStored(locateSession(store, byPrefix(store, o.fork, o.cwd), o.cwd, fileFor));
    session.restoreSettings();
    // Every entry, the tree included, as the reference copies the file; the new header names the source.
    session.branchInto(session.entries(), o.sessionId);
    return true;
  }
  let resume = o.session === undefined ? undefined : byPrefix(store, o.session, o.cwd);
  if (!resume && o.continue) resume = store.listSessions({ cwd: o.cwd, limit: 1 }).sessions[0]?.sessionId;
  if (!resume && o.sessionId) {
    const existing = store.getSession(o.sessionId);
    if (existing && existing.header.cwd !== o.cwd) {
      // Ids are unique in a sessions directory, so another folder's session cannot be shadowed.
      throw new PionError(
        `Session '${o.sessionId}' belongs to ${existing.header.cwd}, not this folder; open it with --session ${o.sessionId}`,
        "invalid_argument",
      );
    }
    if (existing) resume = o.sessionId;
    else session.startNew(undefined, o.sessionId);
  }
  if (!resume) return false;
  session.openStored(locateSession(store, resume, o.cwd, fileFor));
  session.restoreSettings();
  return true;
}

/**
 * A `--session` / `--fork` argument that is neither a path nor a full id may be the start of one,
 * as in the reference: the newest session of this folder whose id starts with it, else the newest
 * anywhere in the sessions directory. Anything else is returned as given (and then not found).
 */
export function byPrefix(store: SessionStore, arg: string, cwd: string): string {
  if (arg.includes("/") || arg.endsWith(".jsonl") || store.getSession(arg)) return arg;
  for (const scope of [cwd, undefined]) {
    let cursor: string | undefined;
    do {
      const page = store.listSessions({ cwd: scope, limit: 500, cursor });
      const hit = page.sessions.find((x) => x.sessionId.startsWith(arg));
      if (hit) return hit.sessionId;
      cursor = page.nextCursor;
    } while (cursor);
  }
  return arg;
}
