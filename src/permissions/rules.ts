import { basename } from "node:path";
import { resolveToolPath } from "../tools/path.ts";
import { escapeGlob, globAcceptsPrefix, globToRegExp } from "./glob.ts";
import type { ShellAnalysis, ShellCommand } from "./shell/analyse.ts";

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
 * What argument patterns are matched against: a bash line as its analysis reads it (the
 * commands it runs, the files it writes), or the path a file tool works on (absolute; the
 * path as given and with symlinks resolved as the kernel would). `unresolved` when the path
 * could not be resolved (a symlink loop, a folder pion may not read).
 */
export type Subject = { kind: "command"; command: string; analysis: ShellAnalysis; writes: WriteSubject[] } | PathSubject;
export type PathSubject = { kind: "path"; paths: string[]; unresolved?: boolean };
/** A file a bash line writes: every spelling of it, or `unknown` (its source) when only the running shell knows it. */
export type WriteSubject = PathSubject | { kind: "unknown"; source: string };

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

/** Tools whose path rules apply to the files a bash line writes. */
const WRITE_TOOLS = ["write", "edit"] as const;

/**
 * Whether a `deny` or `ask` rule covers the call: a rule on the tool matches when any
 * command of the line may be one it names (or the line as written matches), and any line
 * that cannot be analysed; a `write(...)` or `edit(...)` rule matches a bash line that
 * writes such a path, or a file only the running shell knows.
 */
export function ruleMatches(rule: Rule, toolName: string, subject: Subject | undefined, cwd: string): boolean {
  if (subject?.kind === "command" && WRITE_TOOLS.some((t) => rule.tool.test(t)) && subject.writes.some((w) => pathMatches(rule, w, cwd, "any"))) return true;
  if (!rule.tool.test(toolName)) return false;
  if (rule.pattern === undefined) return true;
  if (!subject) return false;
  if (subject.kind === "path") return pathMatches(rule, subject, cwd, "any");
  if (subject.analysis.unanalysable !== undefined) return true;
  const re = commandPattern(rule);
  return re.test(subject.command.trim()) || subject.analysis.commands.some((c) => commandMayMatch(rule, re, c));
}

/** Whether `c` may be a command `rule` names: as the line shows it, or once its unknown words are filled in (or vanish). */
function commandMayMatch(rule: Rule, re: RegExp, c: ShellCommand): boolean {
  const text = c.words.join(" ");
  if (re.test(text)) return true;
  if (c.known === c.words.length && !c.open) return false;
  const known = c.words.slice(0, c.known).join(" ");
  return re.test(known) || globAcceptsPrefix(commandPatternText(rule), `${known} `);
}

function pathMatches(rule: Rule, subject: WriteSubject, cwd: string, need: "any" | "every"): boolean {
  if (rule.pattern === undefined) return true;
  if (subject.kind === "unknown" || subject.unresolved) return need === "any";
  const re = pathPattern(rule, cwd);
  return need === "any" ? subject.paths.some((p) => re.test(p)) : subject.paths.every((p) => re.test(p));
}

/**
 * The allow rule that lets the call run, if any. A bash line is allowed by a rule on the
 * tool alone, or when every command it runs is allowed (each by some rule; a wrapper's own
 * invocation need not be) and every file it writes is allowed by a `write(...)` or
 * `edit(...)` rule; never when it cannot be analysed. A path only when every spelling of
 * it (as given, symlinks resolved) is.
 */
export function allowedByRules(rules: readonly Rule[], toolName: string, subject: Subject | undefined, cwd: string): Rule | undefined {
  const mine = rules.filter((r) => r.kind === "allow" && r.tool.test(toolName));
  const bare = mine.find((r) => r.pattern === undefined);
  if (bare) return bare;
  if (!subject) return undefined;
  if (subject.kind === "path") return mine.find((r) => pathMatches(r, subject, cwd, "every"));
  if (subject.analysis.unanalysable !== undefined) return undefined;
  const commands = subject.analysis.commands.filter((c) => !c.wrapper);
  if (commands.length === 0) return undefined;
  let first: Rule | undefined;
  for (const c of commands) {
    const text = commandText(c);
    const r = mine.find((rule) => commandPattern(rule).test(text));
    if (!r) return undefined;
    first ??= r;
  }
  const writers = rules.filter((r) => r.kind === "allow" && WRITE_TOOLS.some((t) => r.tool.test(t)));
  for (const w of subject.writes) if (!writers.some((r) => pathMatches(r, w, cwd, "every"))) return undefined;
  return first;
}

/** A command as allow rules read it; `…` stands for the words the line does not show. */
function commandText(c: ShellCommand): string {
  return c.open ? `${c.words.join(" ")} …` : c.words.join(" ");
}

/** A rule's command pattern with its first word reduced to a base name, as commands are (`/bin/rm *` is `rm *`). */
function commandPatternText(rule: Rule): string {
  const m = /^(\S+)([\s\S]*)$/.exec(rule.pattern!);
  if (!m || !m[1]!.includes("/") || /[*?\\]/.test(m[1]!)) return rule.pattern!;
  return `${basename(m[1]!)}${m[2]}`;
}

function commandPattern(rule: Rule): RegExp {
  const c = (rule.compiled ??= {});
  return (c.command ??= globToRegExp(commandPatternText(rule), false));
}

/** The rule's pattern as an absolute path glob: relative to the cwd, `~` is the home folder. */
function pathPattern(rule: Rule, cwd: string): RegExp {
  const c = (rule.compiled ??= {});
  if (c.path?.cwd !== cwd) c.path = { cwd, re: globToRegExp(resolveToolPath(rule.pattern!, cwd), true) };
  return c.path.re;
}

/**
 * The allow rules an `allow_always` answer adds: exactly this call. For a bash line, each
 * command it runs (so the same line is allowed again) and each file it writes; none for a
 * line that cannot be analysed (no rule would match it). For a file tool, the path as given.
 */
export function alwaysRulesFor(toolName: string, args: Record<string, unknown>, subject: Subject | undefined): string[] {
  if (subject?.kind === "command") {
    if (subject.analysis.unanalysable !== undefined) return [];
    const rules = subject.analysis.commands.filter((c) => !c.wrapper).map((c) => `${toolName}(${escapeGlob(commandText(c))})`);
    for (const w of subject.writes) if (w.kind === "path" && !w.unresolved) for (const p of w.paths) rules.push(`write(${escapeGlob(p)})`);
    return [...new Set(rules)];
  }
  if (typeof args.path === "string") return [`${toolName}(${escapeGlob(args.path)})`];
  return [escapeGlob(toolName)];
}
