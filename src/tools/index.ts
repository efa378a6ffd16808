import { createBashTool } from "./bash.ts";
import { createEditTool } from "./edit.ts";
import { createFindTool } from "./find.ts";
import { createGrepTool } from "./grep.ts";
import { createLsTool } from "./ls.ts";
import { createReadTool } from "./read.ts";
import type { Tool } from "./tool.ts";
import { createWriteTool } from "./write.ts";

export const BUILTIN_TOOL_NAMES = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export const DEFAULT_TOOLS: readonly BuiltinToolName[] = ["read", "bash", "edit", "write"];

export interface BuiltinToolOptions {
  /** Pins every tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Whether the model accepts images (read returns a text note instead when false). */
  images: boolean;
}

export function createBuiltinTools(options: BuiltinToolOptions): Map<string, Tool> {
  const { cwd, images } = options;
  return new Map<string, Tool>([
    ["read", createReadTool({ cwd, images })],
    ["bash", createBashTool({ cwd })],
    ["edit", createEditTool({ cwd })],
    ["write", createWriteTool({ cwd })],
    ["grep", createGrepTool({ cwd })],
    ["find", createFindTool({ cwd })],
    ["ls", createLsTool({ cwd })],
  ]);
}

/**
 * Applies a `--tools` spec to `defaults`. Items are comma-separated (an array joins
 * repeated flags): plain names replace the set, `+name` adds, `-name` removes, applied
 * in order. `undefined` keeps the defaults; an empty string selects no tools.
 * Throws naming every unknown tool.
 */
export function selectTools(
  spec: string | readonly string[] | undefined,
  defaults: readonly string[],
  available: Iterable<string> = BUILTIN_TOOL_NAMES,
): string[] {
  if (spec === undefined || (typeof spec !== "string" && spec.length === 0)) return [...defaults];
  const items = (typeof spec === "string" ? [spec] : spec)
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const known = new Set(available);
  const unknown = [...new Set(items.filter((s) => !known.has(s.replace(/^[+-]/, ""))))];
  if (unknown.length > 0) {
    const list = unknown.map((s) => JSON.stringify(s)).join(", ");
    throw new Error(`Unknown tool${unknown.length > 1 ? "s" : ""} ${list}. Available tools: ${[...known].join(", ")}`);
  }
  const replaces = items.some((s) => !s.startsWith("+") && !s.startsWith("-"));
  const selected = new Set<string>(replaces || items.length === 0 ? [] : defaults);
  for (const item of items) {
    if (item.startsWith("-")) selected.delete(item.slice(1));
    else selected.add(item.replace(/^\+/, ""));
  }
  return [...selected];
}
