import { log } from "../util/log.ts";
import { workerUrl } from "../util/worker-code.ts";
import { CHECK_STATE, type CheckRequest } from "./import-check-state.ts";

/** A check of a file's unparsed lines running on its own thread (import-check.ts). */
export interface ImportCheck {
  /**
   * Waits for the verdict: true when every line read without a parse agrees with its parse.
   * False when one does not, or the thread failed or did not start: the caller parses instead.
   */
  agreed(): boolean;
}

/**
 * Files smaller than this are confirmed on this thread, as their rows are written. Here any busy
 * second thread slows this one by a third of its own time, so the thread only pays for itself when
 * what it takes over is large: see the figures in import-check.ts's commit.
 */
export const CHECK_FROM_BYTES = 32 << 20;
/** How long a thread that has not started yet is waited for once the rows are written. */
const START_WAIT_MS = 2_000;
/** How long a running check is waited for (it parses at the pace of the import it overlaps). */
const RUN_WAIT_MS = 120_000;

export function startImportCheck(path: string, stopAt: number): ImportCheck | undefined {
  let worker: Worker;
  const verdict = new SharedArrayBuffer(8);
  try {
    worker = new Worker(workerUrl("import-check", new URL("./import-check.ts", import.meta.url)));
    worker.postMessage({ path, stopAt, verdict } satisfies CheckRequest);
  } catch (err) {
    log("store", "import check thread did not start; the file is parsed here", { error: err instanceof Error ? err.message : String(err) });
    return undefined;
  }
  worker.unref();
  const state = new Int32Array(verdict);
  return {
    agreed() {
      if (Atomics.wait(state, 0, CHECK_STATE.pending, START_WAIT_MS) !== "timed-out") Atomics.wait(state, 0, CHECK_STATE.running, RUN_WAIT_MS);
      const s = Atomics.load(state, 0);
      // A thread with a verdict has ended itself (terminating it would cost 7 ms here).
      if (s === CHECK_STATE.pending || s === CHECK_STATE.running) worker.terminate();
      if (s === CHECK_STATE.disagreed) log("store", "a line read without a parse does not say what its parse says; the file is parsed", { path, line: state[1] });
      else if (s !== CHECK_STATE.agreed) log("store", "the import check did not finish; the file is parsed", { path, state: s });
      return s === CHECK_STATE.agreed;
    },
  };
}
