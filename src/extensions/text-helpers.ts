/**
 * The text helpers the reference's packages give extensions, with the reference's call shapes and
 * results: truncation (over the code the built-in tools use), fuzzy filtering, terminal widths and
 * ANSI-aware word wrapping (text-width.ts, text-wrap.ts). Pure: no I/O.
 */
import { byteLength, splitLines, truncateHead as headOf, truncateTail as tailOf, type TruncateOptions, type Truncation } from "../tools/truncate.ts";

export { stripAnsi, visibleWidth } from "./text-width.ts";
export { truncateToWidth, wrapTextWithAnsi } from "./text-wrap.ts";

/** pi-coding-agent's result shape: which edge was kept in part has a name of its own. */
export type ExtensionTruncation = Omit<Truncation, "partialLine"> & { lastLinePartial: boolean; firstLineExceedsLimit: boolean };

function shape(t: Truncation, lastLinePartial: boolean, firstLineExceedsLimit: boolean): ExtensionTruncation {
  const { content, truncated, truncatedBy, totalLines, totalBytes, outputLines, outputBytes, maxLines, maxBytes } = t;
  return { content, truncated, truncatedBy, totalLines, totalBytes, outputLines, outputBytes, lastLinePartial, firstLineExceedsLimit, maxLines, maxBytes };
}

/**
 * Keeps the first whole lines. Where the built-in tools keep part of a first line over maxBytes,
 * extensions get no content and `firstLineExceedsLimit`; with maxLines 0 nothing is kept.
 */
export function truncateHead(text: string, opts: TruncateOptions = {}): ExtensionTruncation {
  const t = headOf(text, opts);
  if (!t.partialLine) return shape(t, false, false);
  const firstTooLong = byteLength(splitLines(text)[0] ?? "") > t.maxBytes;
  return shape({ ...t, content: "", outputLines: 0, outputBytes: 0, truncatedBy: firstTooLong ? "bytes" : "lines" }, false, firstTooLong);
}

/**
 * Keeps the last whole lines; a last line alone over maxBytes is kept in part (its end, cut on a
 * UTF-8 character boundary). A cut that ends at the line limit counts as one by lines.
 */
export function truncateTail(text: string, opts: TruncateOptions = {}): ExtensionTruncation {
  const t = tailOf(text, opts);
  if (!t.partialLine) return shape(t, false, false);
  if (!(t.maxLines > 0)) return shape({ ...t, content: "", outputLines: 0, outputBytes: 0, truncatedBy: "lines" }, false, false);
  return shape({ ...t, truncatedBy: t.maxLines <= 1 ? "lines" : "bytes" }, true, false);
}

/** The reference's grep line limit. */
export const GREP_MAX_LINE_LENGTH = 500;

const isHigh = (c: number) => c >= 0xd800 && c <= 0xdbff;
const isLow = (c: number) => c >= 0xdc00 && c <= 0xdfff;

/** At most `maxChars` UTF-16 units of a line, never half a surrogate pair, then "... [truncated]". */
export function truncateLine(line: string, maxChars = GREP_MAX_LINE_LENGTH): { text: string; wasTruncated: boolean } {
  if (line.length <= maxChars) return { text: line, wasTruncated: false };
  let end = Math.max(0, maxChars);
  if (isHigh(line.charCodeAt(end - 1)) && isLow(line.charCodeAt(end))) end--;
  return { text: `${line.slice(0, end)}... [truncated]`, wasTruncated: true };
}

// A match right after one of these starts a word.
const WORD_START = /[\s\-_./:]/;

/** Lower is better: runs of adjacent letters, word starts and early positions win; gaps cost. */
function alignmentScore(text: string, positions: readonly number[]): number {
  let score = 0;
  let prev = -1;
  let run = 0;
  for (const at of positions) {
    if (prev === at - 1) {
      run++;
      score -= run * 5;
    } else {
      run = 0;
      if (prev >= 0) score += (at - prev - 1) * 2;
    }
    if (at === 0 || WORD_START.test(text[at - 1]!)) score -= 10;
    score += at * 0.1;
    prev = at;
  }
  return score;
}

interface FuzzyMatch {
  matches: boolean;
  score: number;
}

/** `query` as a subsequence of `text` (both lower case), scored at its best alignment. */
function subsequenceMatch(query: string, text: string): FuzzyMatch {
  if (query.length === 0) return { matches: true, score: 0 };
  if (query.length > text.length) return { matches: false, score: 0 };
  // Each letter at its first place after the previous one...
  const positions: number[] = [];
  for (let i = 0, from = 0; i < query.length; i++) {
    const at = text.indexOf(query[i]!, from);
    if (at === -1) return { matches: false, score: 0 };
    positions.push(at);
    from = at + 1;
  }
  let score = alignmentScore(text, positions);
  // ...unless the query also occurs whole somewhere, which may score better.
  for (let start = text.indexOf(query); start !== -1; start = text.indexOf(query, start + 1)) {
    score = Math.min(score, alignmentScore(text, positions.map((_, k) => start + k)));
  }
  return { matches: true, score: query === text ? score - 100 : score };
}

/**
 * Whether `query` matches `text` as a case-insensitive subsequence and how well (lower is better).
 * A query of letters then digits ("gpt4") may also match with the two swapped, for 5 more.
 */
export function fuzzyMatch(query: string, text: string): FuzzyMatch {
  const q = query.toLowerCase();
  const t = text.toLowerCase();
  const direct = subsequenceMatch(q, t);
  if (direct.matches) return direct;
  const parts = /^([a-z]+)([0-9]+)$/.exec(q) ?? /^([0-9]+)([a-z]+)$/.exec(q);
  if (!parts) return direct;
  const swapped = subsequenceMatch(parts[2]! + parts[1]!, t);
  return swapped.matches ? { matches: true, score: swapped.score + 5 } : direct;
}

/**
 * The items whose text matches every token of `query` (split on whitespace and slashes), best
 * first; equal scores keep their order. A blank query gives back `items` itself.
 */
export function fuzzyFilter<T>(items: T[], query: string, getText: (item: T) => string = String): T[] {
  const tokens = query.trim().split(/[\s/]+/).filter(Boolean);
  if (tokens.length === 0) return items;
  const scored: { item: T; score: number }[] = [];
  for (const item of items) {
    const text = getText(item);
    let score = 0;
    const all = tokens.every((token) => {
      const m = fuzzyMatch(token, text);
      score += m.score;
      return m.matches;
    });
    if (all) scored.push({ item, score });
  }
  return scored.sort((a, b) => a.score - b.score).map((s) => s.item);
}
