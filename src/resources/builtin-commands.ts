/**
 * The commands of the reference's built-in extensions that every client sees: `/llama`
 * (`builtin:llama.cpp`) and `/mcp` (`builtin:mcp`). pion has no such extensions; it answers
 * the two commands itself (modes/builtin-commands.ts), and lists them where the reference would:
 *
 * - on by default, after the extensions' own commands; `-e builtin:<name>` brings one back
 *   under `--no-extensions` and lists it with the command-line extensions, before the others;
 * - settings `extensions` switch them off as the reference's do: a user's `-builtin:mcp` or
 *   `!builtin:*`, overridden by a project's entry that names it (`+`, `-`, `!` or plain);
 * - `--no-mcp` drops `/mcp` whatever the rest says;
 * - an extension's own `/mcp` takes the built-in's place (the reference's MCP steps aside for
 *   an MCP extension); an extension's `/llama` does too (the reference lists both, numbered).
 */
import { basename } from "node:path";
import type { ListedEntry } from "../settings-files.ts";
import { builtinSource, type SourceInfo } from "./source-info.ts";

export type BuiltinCommandName = "llama" | "mcp";

/** A built-in command as get_commands lists it (the shape of an extension's command). */
export interface BuiltinCommandInfo {
  name: BuiltinCommandName;
  description: string;
  source: "extension";
  path: string;
  sourceInfo: SourceInfo;
}

/** The reference's built-in extensions, in its order; `command` is the one pion answers. */
const BUILTINS: readonly { extension: string; command?: { name: BuiltinCommandName; description: string } }[] = [
  // The descriptions are the reference's record values, which clients may show or match.
  { extension: "llama.cpp", command: { name: "llama", description: "Manage llama.cpp router models" } },
  { extension: "codemode" },
  { extension: "tool-search" },
  { extension: "mcp", command: { name: "mcp", description: "Manage MCP servers: sign in, reconnect, enable or disable, and change exposure" } },
];

export const BUILTIN_PREFIX = "builtin:";

export interface BuiltinCommandOptions {
  /** `-e` entries, in order (only the `builtin:` ones matter here). */
  cliExtensions?: readonly string[];
  noExtensions?: boolean;
  noMcp?: boolean;
  /** None of them unless `-e` names it: a session of the reference's SDK, which has no built-in extensions (`pion run`'s `runRpcMode`). */
  noBuiltinExtensions?: boolean;
  /** Settings `extensions` entries of every level, in file order. */
  listed?: readonly ListedEntry[];
}

export interface BuiltinCommandSet {
  /** Named with `-e builtin:<name>`: listed before the extensions' commands. */
  first: BuiltinCommandInfo[];
  /** On by default: listed after them. */
  last: BuiltinCommandInfo[];
  /** `-e builtin:<name>` entries that name no built-in extension. */
  unknown: string[];
}

/** Which built-in commands are on, and where they go in the list. */
export function builtinCommands(o: BuiltinCommandOptions): BuiltinCommandSet {
  const named = (o.cliExtensions ?? []).filter((e) => e.startsWith(BUILTIN_PREFIX)).map((e) => e.slice(BUILTIN_PREFIX.length));
  const unknown = named.filter((n) => !BUILTINS.some((b) => b.extension === n)).map((n) => `${BUILTIN_PREFIX}${n}`);
  const allowed = (extension: string) => !(o.noMcp && extension === "mcp");
  const info = (b: (typeof BUILTINS)[number]): BuiltinCommandInfo[] =>
    b.command && allowed(b.extension) ? [{ ...b.command, source: "extension", path: `${BUILTIN_PREFIX}${b.extension}`, sourceInfo: builtinSource(b.extension) }] : [];
  const first = [...new Set(named)].flatMap((n) => BUILTINS.filter((b) => b.extension === n).flatMap(info));
  const last = o.noExtensions || o.noBuiltinExtensions ? [] : BUILTINS.filter((b) => !named.includes(b.extension) && enabledBySettings(b.extension, o.listed ?? [])).flatMap(info);
  return { first, last, unknown };
}

/**
 * A built-in extension is on unless the user's settings switch it off; a project entry that
 * matches it decides instead (the last one that matches).
 */
export function enabledBySettings(extension: string, listed: readonly ListedEntry[]): boolean {
  const path = `${BUILTIN_PREFIX}${extension}`;
  const project = listed.filter((l) => l.level === "project").map((l) => l.entry);
  let decided: boolean | undefined;
  for (const entry of project) {
    const kind = entry[0];
    const target = kind === "+" || kind === "-" || kind === "!" ? entry.slice(1) : entry;
    const hit = kind === "+" || kind === "-" ? target === path : matches(target, path);
    if (hit) decided = kind !== "-" && kind !== "!";
  }
  if (decided !== undefined) return decided;
  const user = listed.filter((l) => l.level === "user").map((l) => l.entry);
  let on = !user.some((e) => e.startsWith("!") && matches(e.slice(1), path));
  if (user.includes(`+${path}`)) on = true;
  if (user.includes(`-${path}`)) on = false;
  return on;
}

const matches = (pattern: string, path: string): boolean => pattern === path || new Bun.Glob(pattern).match(path) || new Bun.Glob(pattern).match(basename(path));

/** An extension's command that takes a built-in's place (`mcp`, or `mcp:1` when several extensions register it). */
export const replacesBuiltin = (extensionCommand: string, builtin: BuiltinCommandName): boolean =>
  extensionCommand === builtin || new RegExp(`^${builtin}:\\d+$`).test(extensionCommand);
