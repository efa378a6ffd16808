import { createBashTool, type BashSandbox } from "./bash.ts";
import { createEditTool } from "./edit.ts";
import { createFindTool } from "./find.ts";
import { createGrepTool } from "./grep.ts";
import { createLsTool } from "./ls.ts";
import { createReadTool, type ReadToolOptions } from "./read.ts";
import type { TextFileOps } from "./file-ops.ts";
import type { FileBoundary } from "./real-path.ts";
import type { ShellExec, ShellGuard } from "./shell.ts";
import type { Tool } from "./tool.ts";
import { createWriteTool } from "./write.ts";

export { BUILTIN_TOOL_NAMES, DEFAULT_TOOLS, selectTools, type BuiltinToolName } from "./select.ts";
export { createTodoTool } from "./todo-tool.ts";

export interface BuiltinToolOptions {
  /** Pins every tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Whether the model accepts images (read returns a text note instead when false). */
  images: boolean;
  /** Whether read scales large images down before sending them (settings `images.autoResize`, default true); asked at each call when a function. */
  autoResizeImages?: ReadToolOptions["autoResizeImages"];
  /** The session's current model, whose `inputLimits` read's images are fitted to. */
  model?: ReadToolOptions["model"];
  /** The bash tool's environment and output masking. */
  guard?: ShellGuard;
  /** Where read, write and edit take text from and put it (default: the disk). */
  files?: TextFileOps;
  /** Where bash runs its commands instead of a local bash (ACP: the editor's terminal). */
  exec?: ShellExec;
  /** pion's sandbox: bash runs inside it, and read, write and edit keep its boundary. */
  sandbox?: BashSandbox & FileBoundary;
  /** bash's shell and the line put before each of its commands (settings `shellPath`, `shellCommandPrefix`). */
  shell?: LocalShell;
}

export interface LocalShell {
  path?: string;
  commandPrefix?: string;
}

export function createBuiltinTools(options: BuiltinToolOptions): Map<string, Tool> {
  const { cwd, images, autoResizeImages, model, guard, files, exec, sandbox, shell } = options;
  const boundary = sandbox;
  return new Map<string, Tool>([
    ["read", createReadTool({ cwd, images, autoResizeImages, model, files, boundary })],
    // Read at each call: a ctx.reload() may change the settings' shell.
    ["bash", createBashTool({ cwd, guard, exec, sandbox, get shellPath() { return shell?.path; }, get commandPrefix() { return shell?.commandPrefix; } })],
    ["edit", createEditTool({ cwd, files, boundary })],
    ["write", createWriteTool({ cwd, files, boundary })],
    ["grep", createGrepTool({ cwd })],
    ["find", createFindTool({ cwd })],
    ["ls", createLsTool({ cwd })],
  ]);
}
