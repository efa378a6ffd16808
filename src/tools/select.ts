/** Tool names and the `--tools` selection: light enough to load at start-up (the tools themselves load with the first run). */
import { wildcardMatch } from "../util/wildcard.ts";

export const BUILTIN_TOOL_NAMES = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
export type BuiltinToolName = (typeof BUILTIN_TOOL_NAMES)[number];

export const DEFAULT_TOOLS: readonly BuiltinToolName[] = ["read", "bash", "edit", "write"];

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

/**
 * The built-in selection a process starts with: `--tools` applied to the defaults
 * (settings' `defaultTools`, else DEFAULT_TOOLS). `--no-tools` and `--no-builtin-tools` empty
 * the defaults and ignore `defaultTools`, so only what `--tools` names is selected.
 */
export function startingTools(
  o: { tools?: string | readonly string[]; noTools?: boolean; noBuiltinTools?: boolean },
  defaultTools: string | readonly string[] | undefined,
  available: Iterable<string> = BUILTIN_TOOL_NAMES,
): string[] {
  if (o.noTools || o.noBuiltinTools) return selectTools(o.tools, [], available);
  return selectTools(o.tools ?? defaultTools, DEFAULT_TOOLS, available);
}

/** `--exclude-tools a,mcp__*`: whether a tool name is excluded; `*` matches any run of characters. */
export function toolMatcher(patterns: string): (name: string) => boolean {
  const list = patterns
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean);
  return (name) => list.some((p) => wildcardMatch(p, name));
}
