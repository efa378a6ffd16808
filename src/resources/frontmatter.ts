/** Thrown for a front matter block pion cannot read; the message names the line. */
export class FrontmatterError extends Error {}

export interface Frontmatter {
  /** Top-level `key: value` pairs; nested maps and lists are skipped. */
  attributes: Record<string, string>;
  /** Everything after the closing `---` line (the whole text when there is no block). */
  body: string;
}

const KEY_LINE = /^([A-Za-z0-9_][\w.-]*)\s*:(?:\s+(.*))?$/;
const BLOCK_SCALAR = /^([|>])[+-]?\d*$/;

/**
 * Split a Markdown file into a YAML-like front matter block and its body.
 * Supports plain, single- and double-quoted values, plain values continued on indented lines,
 * and `|` / `>` block scalars (trailing newlines dropped). A `---` first line without a closing
 * `---` line, or a top-level line that is not `key: value`, throws FrontmatterError.
 */
export function parseFrontmatter(text: string): Frontmatter {
  const source = text.replace(/^\uFEFF/, "");
  const lines = source.split("\n").map((l) => (l.endsWith("\r") ? l.slice(0, -1) : l));
  if (lines[0]?.trimEnd() !== "---") return { attributes: {}, body: source };
  const end = lines.findIndex((l, i) => i > 0 && l.trimEnd() === "---");
  if (end === -1) throw new FrontmatterError("front matter starts with --- but has no closing --- line");
  return { attributes: parseBlock(lines.slice(1, end)), body: lines.slice(end + 1).join("\n") };
}

function parseBlock(lines: string[]): Record<string, string> {
  const attributes: Record<string, string> = {};
  let i = 0;
  while (i < lines.length) {
    const line = lines[i];
    if (isBlank(line) || line.trimStart().startsWith("#") || /^\s/.test(line)) {
      i++;
      continue;
    }
    const m = KEY_LINE.exec(line);
    if (!m) throw new FrontmatterError(`front matter line ${i + 2} is not "key: value": ${line}`);
    const [, key, raw = ""] = m;
    const continuation = indentedRun(lines, i + 1);
    i += 1 + continuation.length;
    const value = raw.trim();
    const block = BLOCK_SCALAR.exec(value);
    if (block) attributes[key] = blockScalar(continuation, block[1] === ">");
    else if (value === "") continue; // a nested map or list: not an attribute pion reads
    else attributes[key] = scalar(value, continuation, i);
  }
  return attributes;
}

/** The lines after a key that belong to it: indented ones, and blank ones between them. */
function indentedRun(lines: string[], from: number): string[] {
  let last = from;
  for (let j = from; j < lines.length && (isBlank(lines[j]) || /^\s/.test(lines[j])); j++) {
    if (!isBlank(lines[j])) last = j + 1;
  }
  return lines.slice(from, last);
}

function scalar(value: string, continuation: string[], lineNo: number): string {
  const folded = [value, ...continuation.map((l) => l.trim())].filter((l) => l !== "").join(" ");
  if (folded.startsWith('"')) return doubleQuoted(folded, lineNo);
  if (folded.startsWith("'")) {
    if (!folded.endsWith("'") || folded.length < 2) throw new FrontmatterError(`unclosed ' quote before line ${lineNo + 1}`);
    return folded.slice(1, -1).replaceAll("''", "'");
  }
  return folded.replace(/\s+#.*$/, "");
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", '"': '"', "\\": "\\", "/": "/", "0": "\0" };

function doubleQuoted(value: string, lineNo: number): string {
  let out = "";
  for (let i = 1; i < value.length; i++) {
    const c = value[i];
    if (c === '"') {
      if (value.slice(i + 1).trim() !== "") throw new FrontmatterError(`text after closing quote before line ${lineNo + 1}`);
      return out;
    }
    if (c === "\\" && i + 1 < value.length) {
      const next = value[++i];
      out += ESCAPES[next] ?? `\\${next}`;
    } else {
      out += c;
    }
  }
  throw new FrontmatterError(`unclosed " quote before line ${lineNo + 1}`);
}

function blockScalar(lines: string[], fold: boolean): string {
  const indent = Math.min(...lines.filter((l) => !isBlank(l)).map((l) => l.length - l.trimStart().length));
  const body = lines.map((l) => (isBlank(l) ? "" : l.slice(indent)));
  if (!fold) return body.join("\n").trimEnd();
  const paragraphs: string[] = [];
  let current: string[] = [];
  for (const l of body) {
    if (l === "") {
      paragraphs.push(current.join(" "));
      current = [];
    } else {
      current.push(l);
    }
  }
  paragraphs.push(current.join(" "));
  return paragraphs.join("\n").trim();
}

const isBlank = (line: string) => line.trim() === "";
