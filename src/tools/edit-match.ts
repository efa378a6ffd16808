/**
 * Pure search-and-replace for the edit tool. Every oldText is located in the original
 * content (not in the result of earlier edits), must occur exactly once, and no two
 * edits may overlap. Exact matching comes first; only when it finds nothing is a
 * forgiving match tried that ignores CRLF vs LF, trailing whitespace and typographic
 * quotes, dashes and spaces. The file's BOM and line endings are preserved.
 */

export interface TextEdit {
  oldText: string;
  newText: string;
}

/** A failure the model can act on; the message says what to do next. */
export class EditError extends Error {}

export interface EditResult {
  /** The new file content, with the original BOM and line endings. */
  content: string;
  /** Old and new content without BOM and with LF line endings, for diffs. */
  before: string;
  after: string;
}

interface Range {
  start: number;
  end: number;
  index: number;
}

/**
 * One character maps to one character, so positions inside a line survive
 * normalisation; only trailing whitespace and "\r" before "\n" are dropped.
 */
const LOOKALIKES: Record<string, string> = {
  "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
  "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
  "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2015": "-", "\u2212": "-",
  "\u00a0": " ", "\u2007": " ", "\u2009": " ", "\u200a": " ", "\u202f": " ", "\u205f": " ", "\u3000": " ",
};

interface Normalised {
  text: string;
  /** map[i] is the index in the original of text[i]. */
  map: number[];
}

export function normaliseForMatch(original: string): Normalised {
  const out: string[] = [];
  const map: number[] = [];
  let lineStart = 0;
  while (lineStart <= original.length) {
    const nl = original.indexOf("\n", lineStart);
    const lineEnd = nl === -1 ? original.length : nl;
    let bodyEnd = lineEnd;
    while (bodyEnd > lineStart && /\s/.test(original[bodyEnd - 1])) bodyEnd--;
    for (let i = lineStart; i < bodyEnd; i++) {
      out.push(LOOKALIKES[original[i]] ?? original[i]);
      map.push(i);
    }
    if (nl === -1) break;
    out.push("\n");
    map.push(nl);
    lineStart = nl + 1;
  }
  return { text: out.join(""), map };
}

function occurrences(haystack: string, needle: string): number[] {
  const found: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + 1)) found.push(i);
  return found;
}

function label(index: number, count: number): string {
  return count === 1 ? "oldText" : `edits[${index}].oldText`;
}

function locate(content: string, fuzzy: () => Normalised, edit: TextEdit, index: number, count: number): Range {
  const name = label(index, count);
  if (edit.oldText === "") throw new EditError(`${name} is empty. Give the exact text to replace.`);
  const ambiguous = (n: number) =>
    new EditError(
      `${name} matches ${n} places in the file. It must match exactly one: include more surrounding lines to make it unique.`,
    );
  const exact = occurrences(content, edit.oldText);
  if (exact.length > 1) throw ambiguous(exact.length);
  if (exact.length === 1) return { start: exact[0], end: exact[0] + edit.oldText.length, index };

  const norm = fuzzy();
  const needle = normaliseForMatch(edit.oldText).text;
  const found = needle === "" ? [] : occurrences(norm.text, needle);
  if (found.length > 1) throw ambiguous(found.length);
  if (found.length === 0) {
    throw new EditError(
      `Could not find ${name} in the file. It must match the file's current text exactly, including whitespace and indentation. Read the file again and copy the text exactly.`,
    );
  }
  const start = norm.map[found[0]];
  const end = norm.map[found[0] + needle.length - 1] + 1;
  return { start, end, index };
}

function withEol(text: string, eol: "\n" | "\r\n"): string {
  const lf = text.replace(/\r\n/g, "\n");
  return eol === "\n" ? lf : lf.replace(/\n/g, "\r\n");
}

export function detectEol(text: string): "\n" | "\r\n" {
  const nl = text.indexOf("\n");
  return nl > 0 && text[nl - 1] === "\r" ? "\r\n" : "\n";
}

/** Applies all edits to `original` at once; throws EditError when any cannot be applied. */
export function applyEdits(original: string, edits: readonly TextEdit[]): EditResult {
  if (edits.length === 0) throw new EditError("No edits given: pass at least one {oldText, newText} pair in edits.");
  const bom = original.startsWith("\ufeff") ? "\ufeff" : "";
  const content = original.slice(bom.length);
  const eol = detectEol(content);
  let norm: Normalised | undefined;
  const fuzzy = () => (norm ??= normaliseForMatch(content));

  const ranges = edits.map((e, i) => locate(content, fuzzy, e, i, edits.length)).sort((a, b) => a.start - b.start);
  for (let i = 1; i < ranges.length; i++) {
    const [a, b] = [ranges[i - 1], ranges[i]];
    if (b.start < a.end) {
      throw new EditError(
        `edits[${a.index}] and edits[${b.index}] overlap in the file. Merge them into one edit or make them touch separate text.`,
      );
    }
  }

  let result = "";
  let pos = 0;
  for (const r of ranges) {
    result += content.slice(pos, r.start) + withEol(edits[r.index].newText, eol);
    pos = r.end;
  }
  result += content.slice(pos);
  if (result === content) {
    throw new EditError("The edits change nothing: newText is identical to the text it replaces.");
  }
  return {
    content: bom + result,
    before: content.replace(/\r\n/g, "\n"),
    after: result.replace(/\r\n/g, "\n"),
  };
}
