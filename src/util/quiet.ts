/**
 * Work that can wait for a quiet moment. On a machine with few cores a busy second thread slows
 * the one answering commands (here by about a third of its own time), so a thread that only tidies
 * up (the checkpoint after an import) starts once no command has been in hand for QUIET_MS, or
 * LATEST_MS after it was asked for at the latest. The wire layer says when a command arrives and
 * when it is answered (`busy`); where none does (a one-shot mode), the work starts QUIET_MS after it
 * was asked for.
 */
const QUIET_MS = 100;
/** Work waits no longer than this: a host that polls without a pause still gets it done. */
const LATEST_MS = 2_000;

let inHand = 0;
let lastBusy = 0;

/** A command arrived; call the returned function once it is answered. */
export function busy(): () => void {
  inHand++;
  lastBusy = performance.now();
  let done = false;
  return () => {
    if (done) return;
    done = true;
    inHand--;
    lastBusy = performance.now();
  };
}

/**
 * Runs `work` once nothing has been in hand for QUIET_MS, or LATEST_MS after it was asked for,
 * whichever comes first (the wait keeps no process alive).
 */
export function whenQuiet(work: () => void): void {
  const latest = performance.now() + LATEST_MS;
  const check = () => {
    const now = performance.now();
    const wait = lastBusy + QUIET_MS - now;
    if ((inHand === 0 && wait <= 0) || now >= latest) work();
    else setTimeout(check, Math.min(Math.max(wait, QUIET_MS / 4), latest - now)).unref();
  };
  setTimeout(check, QUIET_MS).unref();
}
