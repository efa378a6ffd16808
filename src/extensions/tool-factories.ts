/**
 * The reference's built-in tool factories (`createReadTool(cwd, options)`, `createBashToolDefinition`
 * ...), as extensions import them: each returns pion's own built-in tool, with the same name,
 * schema, description and result shape the model sees from the built-in, in the reference's
 * tool shape (`execute(toolCallId, params, signal, onUpdate)`). Options are the reference's:
 * a folder, `operations` that reach files or run commands elsewhere (e.g. over ssh), and for
 * bash a `spawnHook` and a `commandPrefix`. The bash tools run with the process's credential
 * guard (pion's environment minus its credentials), set by the loader before extensions load.
 */
import { dirname } from "node:path";
import type { BashSpawn } from "../tools/bash.ts";
import type { TextFileOps } from "../tools/file-ops.ts";
import type { FindOperations } from "../tools/find.ts";
import type { GrepOperations } from "../tools/grep.ts";
import type { LsOperations } from "../tools/ls.ts";
import type { ReadOperations } from "../tools/read.ts";
import { definedEnv, startLocalShell, type ShellExec, type ShellGuard } from "../tools/shell.ts";
import { currentEditForm } from "../tools/edit.ts";
import type { Tool, ToolResult } from "../tools/tool.ts";
import type { BashSandbox } from "../tools/bash.ts";

// The tools' code loads when an extension first calls a factory (the factories are synchronous,
// hence require): most extensions never do, and their start-up does not pay for it.
const tools = {
  read: () => require("../tools/read.ts") as typeof import("../tools/read.ts"),
  write: () => require("../tools/write.ts") as typeof import("../tools/write.ts"),
  edit: () => require("../tools/edit.ts") as typeof import("../tools/edit.ts"),
  bash: () => require("../tools/bash.ts") as typeof import("../tools/bash.ts"),
  grep: () => require("../tools/grep.ts") as typeof import("../tools/grep.ts"),
  find: () => require("../tools/find.ts") as typeof import("../tools/find.ts"),
  ls: () => require("../tools/ls.ts") as typeof import("../tools/ls.ts"),
};

/** The reference's `BashOperations`: output goes to `onData`; resolves with the exit code. */
export interface BashOperations {
  exec(
    command: string,
    cwd: string,
    o: { onData: (data: Uint8Array) => void; signal?: AbortSignal; timeout?: number; env?: Record<string, string | undefined> },
  ): Promise<{ exitCode: number | null }>;
}

export interface WriteOperations {
  writeFile(abs: string, content: string): Promise<void>;
  mkdir(dir: string): Promise<void>;
}

export interface EditOperations {
  readFile(abs: string): Promise<Uint8Array>;
  writeFile(abs: string, content: string): Promise<void>;
  access(abs: string): Promise<void>;
}

export interface BashFactoryOptions {
  operations?: BashOperations;
  commandPrefix?: string;
  spawnHook?: (spawn: BashSpawn) => BashSpawn;
}

/** A tool in the reference's shape, as `pi.registerTool({...tool, execute})` spreads it. */
export interface FactoryTool {
  name: string;
  label?: string;
  description: string;
  parameters: Record<string, unknown>;
  annotations?: Tool["annotations"];
  promptSnippet?: string;
  prepareArguments?(args: unknown): unknown;
  execute(toolCallId: string, params: unknown, signal?: AbortSignal, onUpdate?: (partial: ToolResult) => void): Promise<ToolResult>;
}

let guard: ShellGuard | undefined;
let sandbox: BashSandbox | undefined;

/**
 * The guard factory-made bash tools run with, and pion's sandbox their local commands run in (the
 * loader sets both; one per process, as the virtual modules are).
 */
export function setFactoryShellGuard(g: ShellGuard | undefined, s?: BashSandbox): void {
  guard = g;
  sandbox = s;
}

/** Resolved at each call, as the guard is. */
const currentSandbox: BashSandbox = {
  probe: () => (sandbox ? sandbox.probe() : Promise.resolve({ ok: true as const })),
  note: () => sandbox?.note() ?? "",
  wrap: (argv, env) => (sandbox ? sandbox.wrap(argv, env) : { argv, env, fds: [], release: () => {} }),
  rerunOutside: (callId, command, signal) => sandbox?.rerunOutside?.(callId, command, signal) ?? Promise.resolve(false),
};

/** Resolved at each call, so tools made before the loader set the guard still get it. */
const currentGuard: ShellGuard = {
  childEnv: () => guard?.childEnv() ?? definedEnv(),
  maskBytes: (bytes) => guard?.maskBytes(bytes) ?? bytes,
  byteStream: () => guard?.byteStream(),
};

function asFactoryTool(tool: Tool, cwd: string, definition: boolean): FactoryTool {
  const out: FactoryTool = {
    name: tool.name,
    label: tool.label,
    description: tool.description,
    parameters: tool.parameters,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
    async execute(toolCallId, params, signal, onUpdate) {
      const args = await tool.parse(params);
      return tool.execute(args, { signal: signal ?? new AbortController().signal, callId: toolCallId, cwd, onUpdate });
    },
  };
  // Arguments in an older form (edit's single oldText/newText) become the current one before the schema check.
  if (tool.name === "edit") {
    out.prepareArguments = currentEditForm; // what it cannot convert, the schema check reports
  }
  if (definition) out.promptSnippet = tool.description.split("\n")[0];
  return out;
}

function editFiles(ops: EditOperations): TextFileOps {
  return {
    async readText(abs) {
      await ops.access(abs);
      return Buffer.from(await ops.readFile(abs)).toString("utf8");
    },
    writeText: (abs, content) => ops.writeFile(abs, content),
  };
}

function writeFiles(ops: WriteOperations): TextFileOps {
  return {
    readText: () => Promise.reject(new Error("the write tool does not read files")),
    async writeText(abs, content) {
      await ops.mkdir(dirname(abs));
      await ops.writeFile(abs, content);
    },
  };
}

/** The reference's BashOperations as pion's shell runner (the bash factory's and `user_bash`'s). */
export const execThrough =
  (ops: BashOperations): ShellExec =>
  async (command, cwd, o) =>
    (await ops.exec(command, cwd, { onData: o.onData, signal: o.signal, env: o.env })).exitCode;

const builders = {
  read: (cwd: string, o: { operations?: ReadOperations; autoResizeImages?: boolean } = {}) =>
    tools.read().createReadTool({ cwd, operations: o.operations, autoResizeImages: o.autoResizeImages }),
  write: (cwd: string, o: { operations?: WriteOperations } = {}) => tools.write().createWriteTool({ cwd, files: o.operations && writeFiles(o.operations) }),
  edit: (cwd: string, o: { operations?: EditOperations } = {}) => tools.edit().createEditTool({ cwd, files: o.operations && editFiles(o.operations) }),
  bash: (cwd: string, o: BashFactoryOptions = {}) =>
    tools.bash().createBashTool({
      cwd,
      guard: currentGuard,
      commandPrefix: o.commandPrefix,
      spawnHook: o.spawnHook,
      exec: o.operations && execThrough(o.operations),
      sandbox: currentSandbox,
    }),
  grep: (cwd: string, o: { operations?: GrepOperations } = {}) => tools.grep().createGrepTool({ cwd, operations: o.operations }),
  find: (cwd: string, o: { operations?: FindOperations } = {}) => tools.find().createFindTool({ cwd, operations: o.operations }),
  ls: (cwd: string, o: { operations?: LsOperations } = {}) => tools.ls().createLsTool({ cwd, operations: o.operations }),
};

/**
 * The reference's local shell backend for `user_bash` handlers and wrappers: pion's own
 * `bash -c` in a process group, output streamed to `onData`, the group killed on abort or
 * after `timeout` seconds (then the promise rejects with "aborted" / "timeout:N", as there).
 */
function createLocalBashOperations(): BashOperations {
  return {
    async exec(command, cwd, o) {
      const env = o.env ? definedEnv(o.env) : currentGuard.childEnv();
      const proc = startLocalShell(command, cwd, env, "pipe");
      let stopped: "aborted" | "timeout" | undefined;
      const stop = (why: "aborted" | "timeout") => {
        stopped ??= why;
        proc.kill();
      };
      const onAbort = () => stop("aborted");
      o.signal?.addEventListener("abort", onAbort, { once: true });
      if (o.signal?.aborted) onAbort();
      const timer = o.timeout ? setTimeout(() => stop("timeout"), o.timeout * 1000) : undefined;
      try {
        const pump = async (s: ReadableStream<Uint8Array> | undefined) => {
          if (s) for await (const chunk of s) o.onData(Buffer.from(chunk));
        };
        const [exitCode] = await Promise.all([proc.exited, pump(proc.stdout), pump(proc.stderr)]);
        if (stopped === "aborted") throw new Error("aborted");
        if (stopped === "timeout") throw new Error(`timeout:${o.timeout}`);
        return { exitCode };
      } finally {
        clearTimeout(timer);
        o.signal?.removeEventListener("abort", onAbort);
      }
    },
  };
}

type Builder = (cwd: string, options?: never) => Tool;

/** The exports the virtual `@earendil-works/pi-coding-agent` module adds. */
export function toolFactoryExports(): Record<string, unknown> {
  const out: Record<string, unknown> = { createLocalBashOperations };
  for (const [name, build] of Object.entries(builders) as [string, Builder][]) {
    const Name = name[0]!.toUpperCase() + name.slice(1);
    out[`create${Name}Tool`] = (cwd: string, options?: never) => asFactoryTool(build(cwd, options), cwd, false);
    out[`create${Name}ToolDefinition`] = (cwd: string, options?: never) => asFactoryTool(build(cwd, options), cwd, true);
  }
  return out;
}
