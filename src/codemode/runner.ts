/**
 * Runs one codemode script in a worker (worker.ts) and answers its calls. At most
 * PION_CODEMODE_MAX_WORKERS (2) workers are alive in the process; a script waits for a free one
 * in arrival order, for 60 s or its deadline at most. Abort and the deadline end the worker
 * at once, whatever the script is doing.
 */
import { lazyWorkerUrl } from "../util/worker-code.ts";
import type { CallMessage, DoneMessage, FromWorker, OutputItem, ToWorker } from "./protocol.ts";

export const DEFAULT_MEMORY_BYTES = 256 * 1024 * 1024;
const WORKER_WAIT_MS = 60_000;

export interface ScriptRun {
  code: string;
  store: Record<string, unknown>;
  allTools: { name: string; description: string }[];
  /** Answers one call of the script: the value (JSON-able) or a thrown Error for the script. */
  answer: (method: CallMessage["method"], payload: unknown) => Promise<unknown>;
  signal: AbortSignal;
  timeoutMs?: number;
  memoryBytes?: number;
}

export interface ScriptOutcome {
  ok: boolean;
  error?: string;
  items: OutputItem[];
  console: string[];
  writes: Record<string, unknown>;
}

let alive = 0;
const queue: (() => void)[] = [];
const maxWorkers = () => Math.max(1, Number(process.env.PION_CODEMODE_MAX_WORKERS) || 2);

/** A worker slot; rejects when none frees up before `deadline` or the abort. */
function acquire(signal: AbortSignal, deadline: number): Promise<() => void> {
  const release = () => {
    alive--;
    queue.shift()?.();
  };
  if (alive < maxWorkers()) {
    alive++;
    return Promise.resolve(release);
  }
  return new Promise((resolve, reject) => {
    const go = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", stop);
      alive++;
      resolve(release);
    };
    const stop = () => {
      clearTimeout(timer);
      queue.splice(queue.indexOf(go), 1);
      reject(new Error(signal.aborted ? "aborted" : "no codemode worker became free in time; the script did not run"));
    };
    const timer = setTimeout(stop, Math.max(0, Math.min(WORKER_WAIT_MS, deadline - Date.now())));
    signal.addEventListener("abort", stop, { once: true });
    queue.push(go);
  });
}

export async function runScript(o: ScriptRun): Promise<ScriptOutcome> {
  const deadline = o.timeoutMs !== undefined ? Date.now() + o.timeoutMs : Number.POSITIVE_INFINITY;
  const release = await acquire(o.signal, deadline);
  let worker: Worker;
  try {
    worker = new Worker(await lazyWorkerUrl("codemode", new URL("./worker.ts", import.meta.url)));
  } catch (err) {
    release();
    throw err;
  }
  const partial: ScriptOutcome = { ok: false, items: [], console: [], writes: {} };
  try {
    return await new Promise<ScriptOutcome>((resolve) => {
      const end = (error: string) => resolve({ ...partial, ok: false, error });
      const onAbort = () => end("the script was aborted");
      o.signal.addEventListener("abort", onAbort, { once: true });
      const timer = Number.isFinite(deadline) ? setTimeout(() => end(`the script passed its deadline of ${o.timeoutMs} ms`), Math.max(0, deadline - Date.now())) : undefined;
      const finish = (r: ScriptOutcome) => {
        clearTimeout(timer);
        o.signal.removeEventListener("abort", onAbort);
        resolve(r);
      };
      worker.onerror = (e) => finish({ ...partial, ok: false, error: `the script's worker failed: ${e.message}` });
      worker.onmessage = (e: MessageEvent<FromWorker>) => {
        const m = e.data;
        if (m.type === "done") return finish(m as DoneMessage);
        void o.answer(m.method, m.payload).then(
          (value) => post({ type: "reply", id: m.id, ok: true, json: value === undefined ? undefined : JSON.stringify(value) }),
          (err) => post({ type: "reply", id: m.id, ok: false, error: err instanceof Error ? err.message : String(err) }),
        );
      };
      const post = (m: ToWorker) => {
        try {
          worker.postMessage(m);
        } catch {
          // the worker was ended (abort, deadline): the reply has no one to go to
        }
      };
      post({ type: "run", code: o.code, store: o.store, allTools: o.allTools, memoryBytes: o.memoryBytes ?? DEFAULT_MEMORY_BYTES });
    });
  } finally {
    worker.terminate();
    release();
  }
}
