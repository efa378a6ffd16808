import { realpathSync } from "node:fs";
import { basename, dirname } from "node:path";
import { resolveToolPath } from "../tools/path.ts";
import { escapeGlob, globToRegExp } from "./glob.ts";
import { commandParts } from "./shell-parts.ts";

export const PERMISSION_MODES = ["auto", "ask", "read-only"] as const;
export type PermissionMode = (typeof PERMISSION_MODES)[number];
export type RuleKind = "allow" | "ask" | "deny";
/** Where a rule was declared; named in the text a refused call gets. */
export type RuleSource = "settings" | "project settings" | "command line" | "session";

export interface Rule {
  kind: RuleKind;
  /** As written: `bash(git status*)`. */
  text: string;
  tool: RegExp;
  /** The argument glob as written, when the rule has one. */
  pattern?: string;
  source: RuleSource;
  /** The pattern compiled for commands, and for paths under one cwd (built on first use). */
  compiled?: { command?: RegExp; path?: { cwd: string; re: RegExp } };
}

/**
 * What argument patterns are matched against: a bash call's command, or the path a file
 * tool works on (absolute; the path as given and, when it exists, with symlinks resolved).
 */
export type Subject = { kind: "command"; command: string } | { kind: "path"; paths: string[] };

const RULE = /^([^()\s]+)(?:\((.*)\))?$/s;

/** `tool`, a tool-name glob, or either with `(argument pattern)`; throws a one-line message otherwise. */
export function parseRule(kind: RuleKind, text: string, source: RuleSource): Rule {
  const m = RULE.exec(text.trim());
  if (!m || m[2] === "") {
    throw new Error(`Invalid permission rule "${text}": expected a tool name or glob, optionally with an argument pattern, like bash(git status*) or edit(src/**)`);
  }
  const rule: Rule = { kind, text: text.trim(), tool: globToRegExp(m[1]!, false), source };
  if (m[2] !== undefined) rule.pattern = m[2];
  return rule;
}

/** What the rules look at for a call: the bash command, else a `path` argument (grep, find and ls default to the cwd). */
export function subjectOf(toolName: string, args: Record<string, unknown>, cwd: string): Subject | undefined {
  if (toolName === "bash" && typeof args.command === "string") return { kind: "command", command: args.command };
  const path = typeof args.path === "string" ? args.path : DEFAULT_PATH_TOOLS.has(toolName) ? "." : undefined;
  if (path === undefined) return undefined;
  const abs = resolveToolPath(path, cwd);
  const real = realPath(abs);
  return { kind: "path", paths: real && real !== abs ? [abs, real] : [abs] };
}

const DEFAULT_PATH_TOOLS: ReadonlySet<string> = new Set(["grep", "find", "ls"]);

/** The path with symlinks resolved; for a file not yet written, its folder's. */
function realPath(abs: string): string | undefined {
  try {
    return realpathSync(abs);
  } catch {
    try {
      return `${realpathSync(dirname(abs))}/${basename(abs)}`;
    } catch {
      return undefined;
    }
  }
}

/**
 * Whether `rule` covers the call. A `deny` or `ask` rule matches when the whole command
 * or any command in it matches (and any of the paths); see `allowedByRules` for allow.
 */
export function ruleMatches(rule: Rule, toolName: string, subject: Subject | undefined, cwd: string): boolean {
  if (!rule.tool.test(toolName)) return false;
  if (rule.pattern === undefined) return true;
  if (!subject) return false;
  if (subject.kind === "command") {
    const re = commandPattern(rule);
    if (re.test(subject.command.trim())) return true;
    return (commandParts(subject.command) ?? []).some((p) => re.test(p));
  }
  const re = pathPattern(rule, cwd);
  return subject.paths.some((p) => re.test(p));
}

/**
 * The allow rule that lets the call run, if any. A bash line of several commands is
 * allowed only when every one of them is allowed (each by some rule); a path only when
 * every spelling of it (as given, symlinks resolved) is.
 */
export function allowedByRules(rules: readonly Rule[], toolName: string, subject: Subject | undefined, cwd: string): Rule | undefined {
  const mine = rules.filter((r) => r.kind === "allow" && r.tool.test(toolName));
  const bare = mine.find((r) => r.pattern === undefined);
  if (bare) return bare;
  if (!subject) return undefined;
  if (subject.kind === "command") {
    const parts = commandParts(subject.command);
    if (!parts || parts.length === 0) return undefined;
    let first: Rule | undefined;
    for (const part of parts) {
      const r = mine.find((rule) => commandPattern(rule).test(part));
      if (!r) return undefined;
      first ??= r;
    }
    return first;
  }
  return mine.find((r) => {
    const re = pathPattern(r, cwd);
    return subject.paths.every((p) => re.test(p));
  });
}

function commandPattern(rule: Rule): RegExp {
  const c = (rule.compiled ??= {});
  return (c.command ??= globToRegExp(rule.pattern!, false));
}

/** The rule's pattern as an absolute path glob: relative to the cwd, `~` is the home folder. */
function pathPattern(rule: Rule, cwd: string): RegExp {
  const c = (rule.compiled ??= {});
  if (c.path?.cwd !== cwd) c.path = { cwd, re: globToRegExp(resolveToolPath(rule.pattern!, cwd), true) };
  return c.path.re;
}

/**
 * The allow rules an `allow_always` answer adds: exactly this call, each command of a
 * bash line separately (so the line's own rule lets it run again), the path as given.
 */
export function alwaysRulesFor(toolName: string, args: Record<string, unknown>): string[] {
  if (toolName === "bash" && typeof args.command === "string") {
    const parts = commandParts(args.command);
    const pieces = parts && parts.length > 0 ? parts : [args.command.trim()];
    return [...new Set(pieces.map((p) => `bash(${escapeGlob(p)})`))];
  }
  if (typeof args.path === "string") return [`${toolName}(${escapeGlob(args.path)})`];
  return [escapeGlob(toolName)];
}
