import { basename } from "node:path";
import type { Node } from "web-tree-sitter";
import type { BashParser } from "./parser.ts";
import { literalWord } from "./words.ts";
import { SHELLS, shellCall, unwrap, type Word } from "./wrappers.ts";

/** One command a bash line can run, as permission rules see it. */
export interface ShellCommand {
  /** Its words: quotes and escapes removed, the first reduced to its base name (`/bin/rm` is `rm`); a word known only when the line runs is its source text. */
  words: string[];
  /** How many leading words are known before the line runs. */
  known: number;
  /** More words may follow that the line does not show (`xargs rm`). */
  open: boolean;
  /** A wrapper's own invocation (`env`, `timeout`, …): deny and ask rules see it; allow rules need only cover the command it runs. */
  wrapper: boolean;
}

/** A file a redirection or `tee` writes: `path` as written when known, else the target's source text. */
export interface ShellWrite {
  path?: string;
  source: string;
}

/**
 * Everything a line can run and write that can be seen before it runs. `unanalysable`
 * says why the line cannot be checked (a command known only when it runs, `eval`,
 * `source`, a script that is not a literal, a parse error): such a line never matches an
 * allow rule and counts as matching every deny rule.
 */
export interface ShellAnalysis {
  commands: ShellCommand[];
  writes: ShellWrite[];
  /** Folders `cd`/`pushd` may move to before a write: literal targets, undefined where only the running shell knows. */
  cdTargets: (string | undefined)[];
  unanalysable?: string;
}

class Unanalysable extends Error {}

const MAX_DEPTH = 8;
const SHOWN = 60;

/** Assignments that change which program a command word runs, or what a shell runs first. */
export function isDangerousAssignment(name: string): boolean {
  return /^(?:PATH|CDPATH|ENV|BASH_ENV|SHELLOPTS|BASHOPTS|PS4|PROMPT_COMMAND|BASH_LOADABLES_PATH|LD_\w+|DYLD_\w+|BASH_FUNC_\w*)$/.test(name);
}

const NO_WRITE = /^\/dev\/(?:null|stdout|stderr|tty|fd\/\d+)$/;
const WRITE_OPS: ReadonlySet<string> = new Set([">", ">>", ">|", "&>", "&>>", ">&"]);

/** The analysis of `source`; never throws (a failure inside is an unanalysable line). */
export function analyseBash(parser: BashParser, source: string): ShellAnalysis {
  const out: ShellAnalysis = { commands: [], writes: [], cdTargets: [] };
  try {
    readScript(parser, source, out, 0);
  } catch (err) {
    out.unanalysable = err instanceof Unanalysable ? err.message : `the line could not be checked (${err instanceof Error ? err.message : String(err)})`;
  }
  return out;
}

function readScript(parser: BashParser, source: string, out: ShellAnalysis, depth: number): void {
  if (depth > MAX_DEPTH) throw new Unanalysable(`scripts nest more than ${MAX_DEPTH} levels deep`);
  parser.read(source, (root) => {
    if (root.hasError) throw new Unanalysable(`the shell parser could not read it${near(root)}`);
    visit(root, { parser, out, depth, source });
  });
}

interface Walk {
  parser: BashParser;
  out: ShellAnalysis;
  depth: number;
  /** The script being read: node offsets index into it. */
  source: string;
}

function visit(node: Node, w: Walk): void {
  switch (node.type) {
    case "comment":
      return;
    case "command":
      command(node, w);
      break;
    case "declaration_command":
    case "unset_command":
      checkGaps(node, w.source);
      break;
    case "file_redirect":
      redirect(node, w.out);
      break;
    case "variable_assignment": {
      const name = node.childForFieldName("name")?.text ?? "";
      if (isDangerousAssignment(name)) throw new Unanalysable(`it sets ${name}, which changes which programs run`);
      break;
    }
    case "raw_string":
    case "string":
    case "ansi_c_string":
    case "translated_string":
    case "word": {
      // `a[$(cmd)]` runs cmd wherever bash reads the text as a number (`(( x ))`, `[[ x -eq 1 ]]`, `printf -v`).
      const value = literalWord(node);
      if (value !== undefined && /\[[^\]]*(?:\$\(|`)/.test(value)) {
        throw new Unanalysable(`the text ${shown(node.text)} holds a subscript with a command in it, which bash runs where it reads the text as a number`);
      }
      break;
    }
    case "function_definition":
      // Its body runs wherever the function is called: its commands count as the line's own.
      visitChildren(node.childForFieldName("body"), w);
      return;
  }
  visitChildren(node, w);
}

function visitChildren(node: Node | null, w: Walk): void {
  if (!node) return;
  for (const child of node.namedChildren) if (child) visit(child, w);
}

function command(node: Node, w: Walk): void {
  checkGaps(node, w.source);
  const nameNode = node.childForFieldName("name");
  if (!nameNode) return;
  const words: Word[] = [nameNode.firstNamedChild ?? nameNode, ...node.childrenForFieldName("argument")].map(toWord);
  runs(words, w, false);
}

function toWord(node: Node): Word {
  const value = literalWord(node);
  return value === undefined ? { text: node.text } : { value, text: node.text };
}

/**
 * Reserved words bash never looks up as a command when unquoted. The grammar reads some
 * compound commands after `time`, `!` and `coproc` as plain words (`time { rm f; }` as a command
 * named `{`): such a tree is not what bash runs.
 */
const RESERVED: ReadonlySet<string> = new Set(["{", "}", "!", "[[", "]]", "case", "do", "done", "elif", "else", "esac", "fi", "for", "function", "if", "in", "select", "then", "until", "while"]);

/** Records `words` as a command, then what it runs in turn (a wrapper's command, a shell's script, find's -exec). */
function runs(words: Word[], w: Walk, open: boolean): void {
  const first = words[0]!;
  if (first.value === undefined) throw new Unanalysable(`the command name ${shown(first.text)} is known only when the line runs`);
  if (RESERVED.has(first.text)) throw new Unanalysable(`the shell parser's reading of ${shown(words.map((x) => x.text).join(" "))} cannot be trusted (the reserved word \`${first.text}\` read as a command)`);
  const name = basename(first.value) || first.value;
  const args = words.slice(1);
  const known = words.findIndex((x) => x.value === undefined);
  const values = [name, ...args.map((a) => a.value ?? a.text)];
  const inner = unwrap(name, args, isDangerousAssignment);
  const isWrapper = inner?.kind === "inner" && !inner.elevates;
  w.out.commands.push({ words: values, known: known < 0 ? words.length : known, open, wrapper: isWrapper });
  if (inner) {
    if (inner.kind === "fail") throw new Unanalysable(inner.why);
    if (inner.kind === "inner") runs(inner.words, w, open || inner.appends);
    return;
  }
  special(name, args, w);
}

function special(name: string, args: Word[], w: Walk): void {
  switch (name) {
    case "eval":
      throw new Unanalysable("`eval` runs a string as commands");
    case "source":
    case ".":
      throw new Unanalysable(`\`${name}\` runs the commands of a file`);
    case "fish":
    case "pwsh":
    case "nu":
      if (args.some((a) => a.value === undefined || /^-\w*c/.test(a.value) || a.value === "--command")) {
        throw new Unanalysable(`\`${name}\` scripts are not bash`);
      }
      return;
    case "alias":
      if (args.some((a) => (a.value ?? a.text).includes("="))) throw new Unanalysable("`alias` defines a command as a string");
      return;
    case "trap": {
      const operands = args.filter((a) => !(a.value ?? "").startsWith("-"));
      if (operands.length < 2) return;
      const action = operands[0]!;
      if (action.value === undefined) throw new Unanalysable("the command `trap` sets is known only when the line runs");
      if (action.value !== "" && action.value !== "-") readScript(w.parser, action.value, w.out, w.depth + 1);
      return;
    }
    case "mapfile":
    case "readarray":
    case "compgen":
    case "enable":
    case "hash":
      if (args.some((a) => a.value === undefined || /^-\w*[CFfp]/.test(a.value))) throw new Unanalysable(`\`${name}\` with these options can run or load code`);
      return;
    case "cd":
    case "pushd":
    case "popd": {
      const target = name === "popd" ? undefined : args.find((a) => !(a.value ?? "").startsWith("-") || a.value === "-");
      w.out.cdTargets.push(target?.value !== undefined && target.value !== "-" ? target.value : undefined);
      return;
    }
    case "tee":
      for (const a of args) {
        if (a.value !== undefined && /^-/.test(a.value) && a.value !== "-") continue;
        if (a.value === undefined) w.out.writes.push({ source: a.text });
        else if (!NO_WRITE.test(a.value)) w.out.writes.push({ path: a.value, source: a.text });
      }
      return;
    case "find":
      findExec(args, w);
      return;
  }
  if (SHELLS.has(name)) {
    const call = shellCall(name, args);
    if (call.kind === "fail") throw new Unanalysable(call.why);
    if (call.kind === "script") readScript(w.parser, call.script, w.out, w.depth + 1);
  }
}

/** `find … -exec cmd {} ;` (and -execdir, -ok, -okdir) runs cmd. */
function findExec(args: Word[], w: Walk): void {
  for (let i = 0; i < args.length; i++) {
    const v = args[i]!.value;
    if (v === undefined && /^['"]?-(?:exec|ok)/.test(args[i]!.text)) throw new Unanalysable(`cannot tell what \`find ${args[i]!.text}\` runs`);
    if (v !== "-exec" && v !== "-execdir" && v !== "-ok" && v !== "-okdir") continue;
    let end = i + 1;
    while (end < args.length && args[end]!.value !== ";" && args[end]!.value !== "+") end++;
    // find puts each file's name where `{}` is.
    const inner = args.slice(i + 1, end).map((a) => (a.value?.includes("{}") ? { text: a.text } : a));
    if (inner.length === 0) throw new Unanalysable(`\`find ${v}\` names no command`);
    runs(inner, w, false);
    i = end;
  }
}

function redirect(node: Node, out: ShellAnalysis): void {
  let op = "";
  for (const c of node.children) if (c && !c.isNamed && c.type !== "file_descriptor") op = c.type;
  if (!WRITE_OPS.has(op)) return;
  for (const dest of node.childrenForFieldName("destination")) {
    const value = literalWord(dest);
    if (op === ">&" && (dest.type === "number" || value === "-" || (value !== undefined && /^\d+-?$/.test(value)))) continue; // a descriptor copied, no file
    if (value === undefined) out.writes.push({ source: dest.text });
    else if (!NO_WRITE.test(value)) out.writes.push({ path: value, source: dest.text });
  }
}

/**
 * Words of a command must be apart by blanks. The grammar reads `'r'\m` or `r\⏎m` as two
 * words where bash reads one (`rm`): a line where two of them touch, or are apart by an
 * escaped blank only, is not what the tree says.
 */
function checkGaps(node: Node, source: string): void {
  let prev: Node | null = null;
  for (const c of node.children) {
    if (!c) continue;
    if (prev && c.isNamed && prev.isNamed) {
      const gap = source.slice(prev.endIndex, c.startIndex);
      const rest = gap.replace(/\\\n/g, "");
      if (!/^[ \t]+$/.test(rest)) throw new Unanalysable(`the shell parser's reading of ${shown(node.text)} cannot be trusted (a word joined across an escape)`);
    }
    prev = c;
  }
}

function near(root: Node): string {
  const bad = findError(root);
  return bad ? ` near ${shown(bad.text || root.text.slice(bad.startIndex, bad.startIndex + 20))}` : "";
}

function findError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node;
  for (const c of node.children) {
    if (c?.hasError || c?.isMissing) return findError(c);
  }
  return undefined;
}

function shown(text: string): string {
  const one = text.replace(/\s+/g, " ").trim();
  return `\`${one.length > SHOWN ? `${one.slice(0, SHOWN)}…` : one}\``;
}
