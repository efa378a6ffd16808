/**
 * Load extensions with Bun's dynamic `import()` (TypeScript is transpiled by Bun, in the
 * compiled binary too) after registering the reference's package names as virtual modules.
 * Each module's default export is called with its own `pi`; async factories are awaited in
 * load order. A module that fails (import error, no default function, factory throws) is
 * reported as an `extension_error` with event "load" and on stderr, and whatever it had
 * registered is dropped; the others still load. Failures of their later asynchronous work
 * can be reported too (`reportAsyncErrors`). An inline extension (a factory, no module) is
 * called the same way, named by its path.
 */
import { existsSync } from "node:fs";
import { isAbsolute, resolve } from "node:path";
import { CLI_FOUND, sourceInfoAt, type FoundBy, type SourceInfo } from "../resources/source-info.ts";
import { watchAsyncErrors } from "./async-errors.ts";
import { setModelAuth } from "./model-calls.ts";
import { Runner } from "./runner.ts";
import { setFactoryShellGuard } from "./tool-factories.ts";
import type { ExtensionRunner, ExtensionSessionPort, ExtensionSource } from "./types.ts";
import { extensionNeedsSurface, loadReferenceModules, registerVirtualModules } from "./virtual-modules.ts";

export interface LoadOptions {
  /**
   * Report the extensions' later asynchronous failures instead of letting them end the process
   * (async-errors.ts): process-wide handlers, for the process that serves the session (not a test
   * runner or `--help`).
   */
  reportAsyncErrors?: boolean;
  /**
   * A load for an in-process session inside a process that serves its own (surface/): the
   * process-wide shell guard and model auth stay the serving session's.
   */
  nested?: boolean;
  /** Evaluate each module anew (Bun caches one per specifier), so no module state is shared with an earlier load. */
  fresh?: boolean;
}

let freshLoads = 0;

/** What to load: discovered extensions (discover.ts), or plain paths, which count as named on the command line. */
export async function loadExtensions(paths: readonly ExtensionSource[], port: ExtensionSessionPort, options: LoadOptions = {}): Promise<ExtensionRunner> {
  registerVirtualModules();
  if (!options.nested) {
    setFactoryShellGuard(port.shellGuard, port.shellSandbox);
    setModelAuth(async (provider) => port.control?.()?.apiKeyAndHeaders(provider));
  }
  const runner = new Runner(port);
  if (options.reportAsyncErrors) watchAsyncErrors(runner);
  let generation = 0;
  const tag = options.fresh ? `load=${++freshLoads}` : "";
  let query = tag ? `?${tag}` : "";
  let list = paths;
  // ctx.reload(): each module evaluated anew (a query makes it a new module to Bun), from the list
  // the settings name now. A session change: the modules already loaded (Bun's cache answers the
  // same query), their factories run again.
  runner.setReloader((modules, next) => {
    if (next) list = next;
    return loadInto(runner, list, port, modules === "fresh" ? (query = `?${tag ? `${tag}&` : ""}reload=${++generation}`) : query);
  });
  await loadInto(runner, list, port, query);
  return runner;
}

async function loadInto(runner: Runner, paths: readonly ExtensionSource[], port: ExtensionSessionPort, query: string): Promise<void> {
  for (const item of paths) {
    if (typeof item !== "string" && "factory" in item) {
      await runFactory(runner, item.path, sourceInfoAt(item.path, INLINE_FOUND), item.factory);
      continue;
    }
    const { path: raw, found } = typeof item === "string" ? { path: item, found: CLI_FOUND } : item;
    const path = isAbsolute(raw) ? raw : resolve(port.cwd, raw);
    if (!existsSync(path)) {
      runner.reportError(path, "load", "Extension file not found");
      continue;
    }
    let factory: unknown;
    runner.track(path);
    try {
      if (await extensionNeedsSurface(path)) await loadReferenceModules();
      const mod: unknown = await import(path + query);
      factory = mod && typeof mod === "object" ? (mod as { default?: unknown }).default : undefined;
    } catch (err) {
      runner.reportError(path, "load", `Failed to load extension: ${err instanceof Error ? err.message : String(err)}`);
      continue;
    }
    if (typeof factory !== "function") {
      runner.reportError(path, "load", "Extension does not export a default function");
      continue;
    }
    await runFactory(runner, path, sourceInfoAt(path, found), factory as (pi: never) => unknown);
  }
}

const INLINE_FOUND: FoundBy = { source: "inline", scope: "temporary", origin: "top-level" };

async function runFactory(runner: Runner, path: string, sourceInfo: SourceInfo, factory: (pi: never) => unknown): Promise<void> {
  runner.track(path);
  const { record, api } = runner.add(path, sourceInfo);
  try {
    await factory(api as never);
  } catch (err) {
    runner.remove(record);
    runner.reportError(path, "load", `Extension factory failed: ${err instanceof Error ? err.message : String(err)}`);
  }
}
