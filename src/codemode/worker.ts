/**
 * A codemode script in QuickJS, in a worker thread: no Node APIs, file system, network or
 * timers; the world is reached only through the calls relayed to pion (tools, tool search).
 * The VM has a memory limit; pion ends the worker to stop a script (abort, deadline).
 */
import variant from "@jitl/quickjs-singlefile-mjs-release-sync";
import { newQuickJSWASMModuleFromVariant, type QuickJSContext, type QuickJSDeferredPromise } from "quickjs-emscripten-core";
import type { CallMessage, DoneMessage, FromWorker, OutputItem, RunMessage, ToWorker } from "./protocol.ts";

declare const self: { onmessage: ((e: MessageEvent<ToWorker>) => void) | null; postMessage(m: FromWorker): void };

const MAX_OUTPUT_CHARS = 16_777_216;
const MAX_OUTPUT_CALLS = 100_000;
const MAX_VALUE_CHARS = 262_144;
const MAX_STORE_CHARS = 1_048_576;

const PRELUDE = `(() => {
  const call = (method, payload) => __pion_call(method, JSON.stringify(payload === undefined ? null : payload)).then((s) => (s === undefined ? undefined : JSON.parse(s)));
  const show = (v) => (typeof v === "string" ? v : (JSON.stringify(v, null, 2) ?? String(v)));
  globalThis.text = (v) => void __pion_out("text", show(v));
  globalThis.image = (v) => void __pion_out("image", JSON.stringify(v));
  const log = (...a) => void __pion_out("console", a.map((x) => (typeof x === "string" ? x : (JSON.stringify(x) ?? String(x)))).join(" "));
  globalThis.console = { log, info: log, warn: log, error: log, debug: log };
  const EXIT = { exit: true };
  globalThis.exit = () => { throw EXIT; };
  globalThis.__pion_exit = EXIT;
  const stored = JSON.parse(__pion_store_json);
  globalThis.store = (key, value) => {
    if (typeof key !== "string") throw new TypeError("store() needs a string key");
    if (value === undefined) { delete stored[key]; __pion_store(key); return; }
    const json = JSON.stringify(value);
    if (json === undefined) throw new TypeError("store() takes JSON values");
    __pion_store(key, json);
    stored[key] = JSON.parse(json);
  };
  globalThis.load = (key) => (stored[key] === undefined ? undefined : JSON.parse(JSON.stringify(stored[key])));
  globalThis.tools = new Proxy({}, { get: (_, name) => (typeof name === "string" ? (args) => call("tool", { name, args }) : undefined) });
  globalThis.ALL_TOOLS = JSON.parse(__pion_all_tools);
  globalThis.searchTools = (query, options) => call("searchTools", { query, ...(options ?? {}) });
  globalThis.describeTool = (name) => call("describeTool", { name });
  globalThis.describeNamespace = (name) => call("describeNamespace", { name });
})();`;

const wrap = (code: string) =>
  `(async () => { try { const __r = await (async () => {\n${code}\n})(); if (__r !== undefined) text(__r); } catch (e) { if (e !== __pion_exit) throw e; } })()`;

let nextId = 0;
const pending = new Map<number, QuickJSDeferredPromise>();
let wake: (() => void) | undefined;

self.onmessage = (e) => {
  const m = e.data;
  if (m.type === "run") void run(m);
  else if (m.type === "reply") settle(m);
};

let vm: QuickJSContext | undefined;

function settle(m: Extract<ToWorker, { type: "reply" }>): void {
  const d = pending.get(m.id);
  if (!d || !vm) return;
  pending.delete(m.id);
  if (m.ok) {
    const h = m.json === undefined ? vm.undefined : vm.newString(m.json);
    d.resolve(h);
    if (m.json !== undefined) h.dispose();
  } else {
    const err = vm.newError(m.error);
    d.reject(err);
    err.dispose();
  }
  d.dispose();
  wake?.();
}

function describeError(value: unknown): string {
  if (value && typeof value === "object") {
    const e = value as { name?: string; message?: string };
    if (e.message !== undefined) return `${e.name ?? "Error"}: ${e.message}`;
  }
  return typeof value === "string" ? value : JSON.stringify(value);
}

async function run(m: RunMessage): Promise<void> {
  const items: OutputItem[] = [];
  const consoleLines: string[] = [];
  const writes: Record<string, unknown> = {};
  const storeSizes = new Map(Object.entries(m.store).map(([k, v]) => [k, JSON.stringify(v).length]));
  let chars = 0;
  let calls = 0;
  const done = (ok: boolean, error?: string) => {
    const msg: DoneMessage = { type: "done", ok, items, console: consoleLines, writes, ...(error !== undefined ? { error } : {}) };
    self.postMessage(msg);
  };
  const QuickJS = await newQuickJSWASMModuleFromVariant(variant);
  const runtime = QuickJS.newRuntime();
  runtime.setMemoryLimit(m.memoryBytes);
  runtime.setMaxStackSize(1024 * 1024);
  const ctx = (vm = runtime.newContext());
  const fn = (name: string, f: (...args: string[]) => unknown) => {
    const h = ctx.newFunction(name, (...hs) => {
      const r = f(...hs.map((x) => ctx.dump(x) as string));
      return r === undefined ? undefined : (r as never);
    });
    ctx.setProp(ctx.global, name, h);
    h.dispose();
  };
  const str = (name: string, value: string) => {
    const h = ctx.newString(value);
    ctx.setProp(ctx.global, name, h);
    h.dispose();
  };
  const bounded = (n: number) => {
    chars += n;
    if (++calls > MAX_OUTPUT_CALLS) throw new Error(`the script made more than ${MAX_OUTPUT_CALLS} output calls`);
    if (chars > MAX_OUTPUT_CHARS) throw new Error(`the script's output passed ${MAX_OUTPUT_CHARS} characters; write large data to a file with a tool`);
  };
  // Host functions: what they return goes back as a handle; a thrown Error becomes the script's exception.
  const callHandle = ctx.newFunction("__pion_call", (methodH, payloadH) => {
    const id = ++nextId;
    const d = ctx.newPromise();
    pending.set(id, d);
    const call: CallMessage = { type: "call", id, method: ctx.getString(methodH) as CallMessage["method"], payload: JSON.parse(ctx.getString(payloadH)) };
    self.postMessage(call);
    return d.handle;
  });
  ctx.setProp(ctx.global, "__pion_call", callHandle);
  callHandle.dispose();
  fn("__pion_out", (kind, json) => {
    bounded(json.length);
    if (kind === "text") items.push({ kind: "text", text: json });
    else if (kind === "image") items.push({ kind: "image", value: JSON.parse(json) });
    else consoleLines.push(json);
  });
  fn("__pion_store", (key, json) => {
    const size = json === undefined ? 0 : json.length;
    if (size > MAX_VALUE_CHARS) throw new Error(`store(): the value of "${key}" has ${size} characters of JSON (at most ${MAX_VALUE_CHARS})`);
    storeSizes.set(key, size);
    const total = [...storeSizes.values()].reduce((a, b) => a + b, 0);
    if (total > MAX_STORE_CHARS) throw new Error(`store(): all values together would pass ${MAX_STORE_CHARS} characters of JSON`);
    writes[key] = json === undefined ? null : JSON.parse(json);
  });
  str("__pion_store_json", JSON.stringify(m.store));
  str("__pion_all_tools", JSON.stringify(m.allTools));
  try {
    ctx.unwrapResult(ctx.evalCode(PRELUDE)).dispose();
    const started = ctx.evalCode(wrap(m.code), "script.js");
    if (started.error) {
      const err = ctx.dump(started.error);
      started.error.dispose();
      return done(false, describeError(err));
    }
    const promise = started.value;
    for (;;) {
      const jobs = runtime.executePendingJobs();
      if (jobs.error) {
        const err = ctx.dump(jobs.error);
        jobs.error.dispose();
        return done(false, describeError(err));
      }
      const state = ctx.getPromiseState(promise);
      if (state.type === "fulfilled") {
        state.value.dispose();
        return done(true);
      }
      if (state.type === "rejected") {
        const err = ctx.dump(state.error);
        state.error.dispose();
        return done(false, describeError(err));
      }
      if (pending.size === 0) return done(false, "the script waits on a promise that can never settle (no tool call is pending, and there are no timers)");
      await new Promise<void>((r) => (wake = r));
    }
  } catch (err) {
    done(false, describeError(err instanceof Error ? { name: err.name, message: err.message } : err));
  }
}
