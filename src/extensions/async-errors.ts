/**
 * Failures of an extension's own asynchronous work: a promise it left rejected, a throw in a
 * timer, watcher or other callback it registered. The process-wide handlers find the extension
 * by its file in the error's stack (for a folder extension, any file in that folder) and report
 * it through each runner that loaded it, as an `extension_error` with event
 * "unhandledRejection" or "uncaughtException"; pion keeps serving. A failure no loaded
 * extension's file explains is pion's own: it is rethrown, and the process ends as it would
 * without these handlers.
 */
import { basename, dirname, sep } from "node:path";

export interface ErrorSink {
  /** The extensions this sink speaks for (their entry files). */
  paths(): readonly string[];
  reportError(extensionPath: string, event: string, err: unknown): void;
}

const sinks = new Set<WeakRef<ErrorSink>>();
let installed = false;

/** Report `sink`'s extensions' async failures from now on (the handlers are installed once per process). */
export function watchAsyncErrors(sink: ErrorSink): void {
  sinks.add(new WeakRef(sink));
  if (installed) return;
  installed = true;
  process.on("unhandledRejection", (reason) => route("unhandledRejection", reason));
  process.on("uncaughtException", (err) => route("uncaughtException", err));
}

function route(event: string, err: unknown): void {
  const stack = err instanceof Error ? (err.stack ?? "") : "";
  let reported = false;
  for (const ref of sinks) {
    const sink = ref.deref();
    if (!sink) {
      sinks.delete(ref);
      continue;
    }
    const path = sink.paths().find((p) => explains(stack, p));
    if (path) {
      sink.reportError(path, event, err);
      reported = true;
    }
  }
  if (!reported) throw err;
}

/** Whether a stack has a frame in the extension's file (or, for `…/index.ts`, in its folder). */
function explains(stack: string, path: string): boolean {
  if (stack.includes(`${path}:`)) return true;
  return /^index\.[cm]?[jt]s$/.test(basename(path)) && stack.includes(`${dirname(path)}${sep}`);
}
