/**
 * The text helpers the reference's packages give extensions, with the reference's call
 * shapes, working as their names say: truncation (the same code the built-in tools use),
 * fuzzy filtering, terminal widths and ANSI-aware word wrapping. Pure: no I/O.
 */
import { truncateHead as headOf, truncateLine as cutLine, truncateTail as tailOf, type TruncateOptions, type Truncation } from "../tools/truncate.ts";

/** The reference's result shape: which edge was cut in part has a name of its own. */
export type ExtensionTruncation = Truncation & { lastLinePartial: boolean; firstLineExceedsLimit: boolean };

/** Keeps the first lines; a line alone over maxBytes is cut on a UTF-8 character boundary. */
export function truncateHead(text: string, opts: TruncateOptions = {}): ExtensionTruncation {
  const t = headOf(text, opts);
  return { ...t, lastLinePartial: false, firstLineExceedsLimit: t.partialLine };
}

/** Keeps the last lines (what a command's output ends with). */
export function truncateTail(text: string, opts: TruncateOptions = {}): ExtensionTruncation {
  const t = tailOf(text, opts);
  return { ...t, lastLinePartial: t.partialLine, firstLineExceedsLimit: false };
}

/** The reference's grep line limit. */
export const GREP_MAX_LINE_LENGTH = 500;

export function truncateLine(line: string, maxChars = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  return { text: cutLine(line, maxChars), wasTruncated: line.length > maxChars };
}

// CSI sequences (colours, cursor moves) and OSC sequences (hyperlinks, titles).
const ANSI = /\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)/g;

export const stripAnsi = (s: string): string => s.replace(ANSI, "");

/** Terminal columns: escape sequences take none, wide characters (CJK, emoji) two. */
export const visibleWidth = (s: string): number => Bun.stringWidth(s);

/** At most `width` columns of `s` (escape sequences kept), then `ellipsis` when something was cut. */
export function truncateToWidth(s: string, width: number, ellipsis = "…"): string {
  if (visibleWidth(s) <= width) return s;
  const room = Math.max(0, width - visibleWidth(ellipsis));
  return `${takeColumns(s, room)}${ellipsis}`;
}

/** The longest prefix of `s` that fits in `width` columns, with every escape sequence before the cut. */
function takeColumns(s: string, width: number): string {
  let out = "";
  let used = 0;
  for (const unit of units(s)) {
    if (unit.escape) {
      out += unit.text;
      continue;
    }
    const w = visibleWidth(unit.text);
    if (used + w > width) break;
    out += unit.text;
    used += w;
  }
  return out;
}

/** Escape sequences and single characters (a surrogate pair stays whole). */
function* units(s: string): Generator<{ text: string; escape: boolean }> {
  let at = 0;
  for (const m of s.matchAll(ANSI)) {
    for (const ch of s.slice(at, m.index)) yield { text: ch, escape: false };
    yield { text: m[0], escape: true };
    at = m.index + m[0].length;
  }
  for (const ch of s.slice(at)) yield { text: ch, escape: false };
}

const SGR = /\x1b\[([0-9;]*)m/g;

/** The SGR sequences (colours, bold...) still in effect after `s`: everything since the last reset. */
function activeStyle(s: string, before: string): string {
  let style = before;
  for (const m of s.matchAll(SGR)) {
    const params = m[1]!;
    style = params === "" || params === "0" ? "" : style + m[0];
  }
  return style;
}

/**
 * Word-wraps `text` to lines of at most `width` columns. Escape sequences take no room, and
 * the style in effect at a break is opened again on the next line. Words longer than a
 * line are split; existing line breaks are kept; no padding.
 */
export function wrapTextWithAnsi(text: string, width: number): string[] {
  const max = Math.max(1, Math.floor(width));
  const out: string[] = [];
  let style = "";
  for (const source of text.split("\n")) {
    let line = style;
    let used = 0;
    const push = () => {
      out.push(line);
      style = activeStyle(line, "");
      line = style;
      used = 0;
    };
    for (const word of source.split(/ +/)) {
      let rest = word;
      let w = visibleWidth(rest);
      if (used > 0 && used + 1 + w <= max) {
        line += ` ${rest}`;
        used += 1 + w;
        continue;
      }
      if (used > 0) push();
      while (w > max) {
        const head = takeColumns(rest, max);
        line += head;
        rest = rest.slice(head.length);
        w = visibleWidth(rest);
        push();
      }
      line += rest;
      used += w;
    }
    out.push(line);
    style = activeStyle(line, "");
  }
  return out;
}

/**
 * How well `query` matches `text` as a subsequence (case-insensitive): undefined when it does
 * not, else a score where lower is better (letters close together and early win).
 */
export function fuzzyScore(query: string, text: string): number | undefined {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  let score = 0;
  let from = 0;
  let last = -1;
  for (const ch of q) {
    const at = t.indexOf(ch, from);
    if (at === -1) return undefined;
    score += last === -1 ? at : at - last - 1;
    last = at;
    from = at + 1;
  }
  return score;
}

/**
 * The items whose text matches every token of `query` (split on spaces and slashes), best
 * first; items that score the same keep their order. An empty query keeps every item.
 */
export function fuzzyFilter<T>(items: readonly T[], query: string, getText: (item: T) => string = String): T[] {
  const tokens = query.split(/[\s/]+/).filter(Boolean);
  if (tokens.length === 0) return [...items];
  const scored: { item: T; score: number; at: number }[] = [];
  items.forEach((item, at) => {
    const text = getText(item);
    let score = 0;
    for (const token of tokens) {
      const s = fuzzyScore(token, text);
      if (s === undefined) return;
      score += s;
    }
    scored.push({ item, score, at });
  });
  return scored.sort((a, b) => a.score - b.score || a.at - b.at).map((s) => s.item);
}

export function fuzzyMatch(query: string, text: string): { matches: boolean; score: number } {
  const score = fuzzyScore(query, text);
  return score === undefined ? { matches: false, score: Number.POSITIVE_INFINITY } : { matches: true, score };
}
