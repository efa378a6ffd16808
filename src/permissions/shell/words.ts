import { homedir } from "node:os";
import type { Node } from "web-tree-sitter";

/**
 * The value a word of the syntax tree has when bash runs it, when that value is known before
 * the line runs: quotes and escapes removed, a leading `~` expanded. `undefined` when the word
 * expands to something only the running shell knows (a variable, a substitution, arithmetic)
 * or to several words or file names (an unquoted glob or brace expansion).
 */
export function literalWord(node: Node): string | undefined {
  const parts = node.type === "concatenation" ? node.namedChildren : [node];
  let out = "";
  // The word's unquoted text, quoted parts stood in for: where globs and braces would expand.
  let bare = "";
  for (const [i, part] of parts.entries()) {
    if (!part) return undefined;
    const value = literalPart(part, i === 0);
    if (value === undefined) return undefined;
    out += value;
    bare += part.type === "word" ? part.text : "_";
  }
  return expands(bare) ? undefined : out;
}

function literalPart(node: Node, first: boolean): string | undefined {
  switch (node.type) {
    case "word":
    case "number": {
      const text = node.text;
      if (first && (text === "~" || text.startsWith("~/"))) return homedir() + unescapeBare(text.slice(1));
      if (first && text.startsWith("~")) return undefined; // ~user, ~+, ~-
      return unescapeBare(text);
    }
    case "raw_string":
      return node.text.slice(1, -1);
    case "string":
    case "translated_string": {
      const inner = node.type === "string" ? node : node.namedChildren[0];
      if (!inner || inner.namedChildren.some((c) => c?.type !== "string_content")) return undefined;
      const text = inner.text;
      return unescapeDouble(text.slice(1, -1));
    }
    case "ansi_c_string":
      return ansiC(node.text.slice(2, -1));
    default:
      return undefined;
  }
}

/** An unquoted glob character or brace expansion, not escaped. */
function expands(bare: string): boolean {
  const plain = bare.replace(/\\[\s\S]/g, "_");
  return /[*?[]/.test(plain) || /\{[^{}]*(?:,|\.\.)[^{}]*\}/.test(plain);
}

/** Outside quotes a backslash keeps the next character; backslash-newline is nothing. */
function unescapeBare(text: string): string {
  return text.replace(/\\([\s\S])/g, (_, c: string) => (c === "\n" ? "" : c));
}

/** Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and newline. */
function unescapeDouble(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_, c: string) => (c === "\n" ? "" : c));
}

const C_ESCAPES: Record<string, string> = { a: "\x07", b: "\b", e: "\x1b", E: "\x1b", f: "\f", n: "\n", r: "\r", t: "\t", v: "\v", "\\": "\\", "'": "'", '"': '"', "?": "?" };

/** The body of `$'…'`; undefined for an escape this does not decode (`\c`), which is never guessed at. */
function ansiC(body: string): string | undefined {
  let out = "";
  for (let i = 0; i < body.length; i++) {
    const c = body[i]!;
    if (c !== "\\") {
      out += c;
      continue;
    }
    const e = body[++i];
    if (e === undefined) return undefined;
    if (e in C_ESCAPES) {
      out += C_ESCAPES[e];
      continue;
    }
    const take = (re: RegExp, max: number): string => {
      let digits = "";
      while (digits.length < max && i + 1 < body.length && re.test(body[i + 1]!)) digits += body[++i];
      return digits;
    };
    if (/[0-7]/.test(e)) {
      i--;
      const oct = take(/[0-7]/, 3);
      out += String.fromCharCode(parseInt(oct, 8) & 0xff);
    } else if (e === "x" || e === "u" || e === "U") {
      const hex = take(/[0-9a-fA-F]/, e === "x" ? 2 : e === "u" ? 4 : 8);
      if (!hex) return undefined;
      const code = parseInt(hex, 16);
      if (code > 0x10ffff) return undefined;
      out += String.fromCodePoint(code);
    } else {
      return undefined;
    }
  }
  return out;
}
