/**
 * pi-tui's width-bound text: word wrapping and truncation of ANSI-coloured text. Escape sequences
 * take no room and stay with the text they style; the style open at a line break is closed where it
 * would bleed (underline, strike-through, hyperlink) and opened again on the next line. Every loop
 * walks a finite list of tokens or graphemes, so no width (0, negative, NaN) can stall it. Pure.
 */
import { escapesOf, isPlainAscii, stripAnsi, units, visibleWidth } from "./text-width.ts";
import { openLinkClose, TextStyle } from "./text-style.ts";

// Ideographic scripts break anywhere: each of their graphemes is a word of its own.
const IDEOGRAPHIC = /[\p{Script_Extensions=Han}\p{Script_Extensions=Hiragana}\p{Script_Extensions=Katakana}\p{Script_Extensions=Hangul}\p{Script_Extensions=Bopomofo}]/u;

/** Visible text made only of whitespace (escape sequences aside); a token of escapes alone counts. */
const isBlank = (token: string): boolean => /^\s*$/.test(stripAnsi(token));

/**
 * A line cut into runs of spaces, runs of other graphemes, and single ideographic graphemes.
 * An escape sequence goes with the grapheme after it; those at the end go with the last token.
 */
function tokenize(line: string): string[] {
  const tokens: string[] = [];
  let current = "";
  let kind: "space" | "word" | undefined;
  let codes = "";
  const flush = () => {
    if (current) tokens.push(current);
    current = "";
    kind = undefined;
  };
  for (const u of units(line)) {
    if (u.escape) {
      codes += u.text;
      continue;
    }
    const g = u.text;
    if (g !== " " && IDEOGRAPHIC.test(g)) {
      flush();
      tokens.push(codes + g);
      codes = "";
      continue;
    }
    const k = g === " " ? "space" : "word";
    if (current && kind !== k) flush();
    current += codes + g;
    codes = "";
    kind = k;
  }
  if (codes) {
    if (current || tokens.length === 0) current += codes;
    else tokens[tokens.length - 1] += codes;
  }
  flush();
  return tokens;
}

/** A word wider than a line, cut between graphemes into lines of at most `width` columns. */
function splitWord(word: string, width: number, style: TextStyle): string[] {
  const lines: string[] = [];
  let line = style.opening();
  let used = 0;
  for (const u of units(word)) {
    if (u.escape) {
      line += u.text;
      style.apply(u.text);
      continue;
    }
    const w = visibleWidth(u.text);
    if (used + w > width) {
      lines.push(line + style.lineEnd());
      line = style.opening();
      used = 0;
    }
    line += u.text;
    used += w;
  }
  if (line) lines.push(line);
  return lines.length > 0 ? lines : [""];
}

/** One input line (no line breaks) wrapped; a line that fits comes back untouched. */
function wrapLine(line: string, width: number): string[] {
  if (!line) return [""];
  if (visibleWidth(line) <= width) return [line];
  const style = new TextStyle();
  const out: string[] = [];
  let current = "";
  let used = 0;
  for (const token of tokenize(line)) {
    const w = visibleWidth(token);
    const blank = isBlank(token);
    if (w > width && !blank) {
      if (current) out.push(current.trimEnd() + style.lineEnd());
      const parts = splitWord(token, width, style);
      out.push(...parts.slice(0, -1));
      current = parts[parts.length - 1]!;
      used = visibleWidth(current);
      continue;
    }
    if (used > 0 && used + w > width) {
      // The break eats a run of spaces; its escape sequences (a style's end) stay on the line they end.
      let done = current.trimEnd();
      if (blank) {
        done += escapesOf(token);
        style.feed(token);
      }
      out.push(done + style.lineEnd());
      if (blank) {
        current = style.opening();
        used = 0;
        continue;
      }
      current = style.opening() + token;
      used = w;
    } else if (blank && used + w > width && token.includes("\x1b")) {
      current += escapesOf(token); // spaces wider than an empty line: only their sequences are kept
    } else {
      current += token;
      used += w;
    }
    style.feed(token);
  }
  if (current) out.push(current);
  return out.length > 0 ? out.map((l) => l.trimEnd()) : [""];
}

/**
 * Word-wraps `text` to lines of at most `width` columns (a grapheme wider than the width gets a
 * line of its own). Line breaks (LF, CRLF, CR) are kept; runs of spaces inside a line are kept,
 * those at a break are dropped; no padding.
 */
export function wrapTextWithAnsi(text: string, width: number): string[] {
  if (!text) return [""];
  const style = new TextStyle();
  const out: string[] = [];
  for (const line of text.split(/\r\n|\r|\n/)) {
    out.push(...wrapLine((out.length > 0 ? style.opening() : "") + line, width));
    style.feed(line);
  }
  return out.length > 0 ? out : [""];
}

/** The longest run of whole graphemes from the start that fits in `max` columns, each with the sequences before it. */
function prefixWithin(s: string, max: number): { text: string; width: number } {
  if (max <= 0 || s.length === 0) return { text: "", width: 0 };
  let text = "";
  let width = 0;
  let codes = "";
  for (const u of units(s)) {
    if (u.escape) {
      codes += u.text;
      continue;
    }
    const w = visibleWidth(u.text);
    if (width + w > max) break;
    text += codes + u.text;
    codes = "";
    width += w;
  }
  return { text, width };
}

/**
 * At most `maxWidth` columns of `text`: itself when it fits, else a prefix, a reset, `ellipsis`
 * and another reset (a hyperlink left open is closed first). `pad` fills with spaces to `maxWidth`.
 */
export function truncateToWidth(text: string, maxWidth: number, ellipsis = "...", pad = false): string {
  if (maxWidth <= 0) return "";
  const fill = (s: string, width: number) => (pad ? s + " ".repeat(Math.max(0, maxWidth - width)) : s);
  const cut = (prefix: string, prefixWidth: number, tail: string, tailWidth: number) =>
    fill(`${prefix}${openLinkClose(prefix)}\x1b[0m${tail ? `${tail}\x1b[0m` : ""}`, prefixWidth + tailWidth);
  if (text.length === 0) return fill("", 0);
  const ellipsisWidth = visibleWidth(ellipsis);
  if (ellipsisWidth >= maxWidth) {
    const width = visibleWidth(text);
    if (width <= maxWidth) return fill(text, width);
    const shown = prefixWithin(ellipsis, maxWidth);
    return shown.width === 0 ? fill("", 0) : cut("", 0, shown.text, shown.width);
  }
  const room = maxWidth - ellipsisWidth;
  if (isPlainAscii(text)) return text.length <= maxWidth ? fill(text, text.length) : cut(text.slice(0, room), room, ellipsis, ellipsisWidth);
  const kept = prefixWithin(text, room);
  // Does the whole text fit after all? Counted grapheme by grapheme, as the prefix was.
  let total = 0;
  for (const u of units(text)) {
    if (u.escape) continue;
    total += visibleWidth(u.text);
    if (total > maxWidth) return cut(kept.text, kept.width, ellipsis, ellipsisWidth);
  }
  return fill(text, total);
}
