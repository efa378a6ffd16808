/**
 * Cleanups for what a provider keeps per session (an open connection, a cache), run when the
 * session ends: its host switches to another session, forks, starts a new one or exits.
 * Extensions register theirs through pi-ai's `registerSessionResourceCleanup`.
 */
type Cleanup = (sessionId?: string) => void;
const cleanups = new Set<Cleanup>();

/** Run `cleanup` whenever a session's resources are released; the returned function unregisters it. */
export function registerSessionResourceCleanup(cleanup: Cleanup): () => void {
  cleanups.add(cleanup);
  return () => {
    cleanups.delete(cleanup);
  };
}

/** Every registered cleanup, each even when another throws; their errors together as one AggregateError. */
export function cleanupSessionResources(sessionId?: string): void {
  const errors: unknown[] = [];
  for (const cleanup of cleanups) {
    try {
      cleanup(sessionId);
    } catch (err) {
      errors.push(err);
    }
  }
  if (errors.length > 0) throw new AggregateError(errors, "Failed to cleanup session resources");
}
