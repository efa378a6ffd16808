/**
 * Terminal columns of text as pi-tui counts them: escape sequences (CSI, OSC, APC) take none,
 * a tab three, each grapheme cluster (a base character with its marks, an emoji sequence) one or
 * two. Pure; the segmenter is made on first use.
 */

/**
 * Length of the escape sequence starting at `at`, 0 when none does: ESC [ up to the first of
 * m G K H J; ESC ] or ESC _ up to BEL or ESC \. A lone or unterminated ESC is text.
 */
export function escapeLength(s: string, at: number): number {
  if (s.charCodeAt(at) !== 0x1b) return 0;
  const kind = s[at + 1];
  if (kind === "[") {
    for (let i = at + 2; i < s.length; i++) if ("mGKHJ".includes(s[i]!)) return i + 1 - at;
    return 0;
  }
  if (kind === "]" || kind === "_") {
    for (let i = at + 2; i < s.length; i++) {
      if (s[i] === "\x07") return i + 1 - at;
      if (s[i] === "\x1b" && s[i + 1] === "\\") return i + 2 - at;
    }
  }
  return 0;
}

/** `s` cut into escape sequences and the text between them, in order. */
export function* pieces(s: string): Generator<{ text: string; escape: boolean }> {
  let from = 0;
  let at = s.indexOf("\x1b");
  while (at !== -1) {
    const n = escapeLength(s, at);
    if (n > 0) {
      if (at > from) yield { text: s.slice(from, at), escape: false };
      yield { text: s.slice(at, at + n), escape: true };
      from = at + n;
      at = s.indexOf("\x1b", from);
    } else at = s.indexOf("\x1b", at + 1);
  }
  if (from < s.length) yield { text: s.slice(from), escape: false };
}

export const stripAnsi = (s: string): string => {
  let out = "";
  for (const p of pieces(s)) if (!p.escape) out += p.text;
  return out;
};

/** The escape sequences of `s`, joined. */
export const escapesOf = (s: string): string => {
  let out = "";
  for (const p of pieces(s)) if (p.escape) out += p.text;
  return out;
};

let segmenter: Intl.Segmenter | undefined;

/** Grapheme clusters of text without escape sequences. */
export function* graphemes(text: string): Generator<string> {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  for (const { segment } of segmenter.segment(text)) yield segment;
}

/** Grapheme clusters of `s`, with its escape sequences between them; text is segmented between escapes. */
export function* units(s: string): Generator<{ text: string; escape: boolean }> {
  for (const p of pieces(s)) {
    if (p.escape) yield p;
    else for (const g of graphemes(p.text)) yield { text: g, escape: false };
  }
}

// Character classes, built on first use.
let classes: { invisible: RegExp; leadingInvisible: RegExp; hidden: RegExp; mark: RegExp; spacingMarks: RegExp; emoji: RegExp } | undefined;
function charClasses() {
  return (classes ??= {
    // Only ignorables, controls, marks: no cell at all.
    invisible: /^(?:\p{Default_Ignorable_Code_Point}|\p{Control}|\p{Mark}|\p{Surrogate})+$/v,
    leadingInvisible: /^[\p{Default_Ignorable_Code_Point}\p{Control}\p{Format}\p{Mark}\p{Surrogate}]+/v,
    hidden: /^(?:\p{Default_Ignorable_Code_Point}|\p{Control}|\p{Format}|\p{Mark}|\p{Surrogate})$/v,
    mark: /^\p{Mark}$/v,
    // Marks a terminal gives a cell of their own (spacing marks, less three, plus wcwidth's exceptions).
    spacingMarks: /^(?:[\p{Spacing_Mark}--[\u1734\u302E\u302F]]|[\u065F\u0F7F\u102B\u102C\u1031\u1033-\u1035\u1038\u103A-\u103E])+$/v,
    emoji: /^\p{RGI_Emoji}$/v,
  });
}

/** East Asian width of one code point: 2 for wide and fullwidth, else 1 (Bun's table agrees for every non-mark). */
const eastAsian = (cp: number): number => (Bun.stringWidth(String.fromCodePoint(cp)) === 2 ? 2 : 1);

/** Blocks where an emoji may start; anything else needs a presentation selector or several code points. */
function mayBeEmoji(g: string): boolean {
  const cp = g.codePointAt(0)!;
  return (cp >= 0x1f000 && cp <= 0x1fbff) || (cp >= 0x2300 && cp <= 0x23ff) || (cp >= 0x2600 && cp <= 0x27bf) || (cp >= 0x2b50 && cp <= 0x2b55) || g.includes("\ufe0f") || g.length > 2;
}

/** Columns of one grapheme cluster. */
export function graphemeWidth(g: string): number {
  if (g.length === 1) {
    const c = g.charCodeAt(0);
    if (c >= 0x20 && c <= 0x7e) return 1;
    if (c === 0x09) return 3;
  }
  const k = charClasses();
  if (k.spacingMarks.test(g)) return [...g].length;
  if (k.invisible.test(g)) return 0;
  if (mayBeEmoji(g) && k.emoji.test(g)) return 2;
  const chars = [...g.replace(k.leadingInvisible, "")];
  if (chars.length === 0) return 0;
  const base = chars[0]!.codePointAt(0)!;
  if (base >= 0x1f1e6 && base <= 0x1f1ff) return 2; // a lone regional indicator
  let width = eastAsian(base);
  // What follows the base inside the cluster may take cells too: spacing marks, a visible character
  // after a mark (invisible ones between do not count), halfwidth and fullwidth forms, Thai and Lao AM.
  let afterMark = false;
  for (const ch of chars.slice(1)) {
    const cp = ch.codePointAt(0)!;
    if (k.spacingMarks.test(ch)) {
      width += 1;
      afterMark = false;
    } else if (k.mark.test(ch)) afterMark = true;
    else if (!k.hidden.test(ch)) {
      if (afterMark || (cp >= 0xff00 && cp <= 0xffef)) width += eastAsian(cp);
      else if (cp === 0x0e33 || cp === 0x0eb3) width += 1;
      afterMark = false;
    }
  }
  return width;
}

/** Only printable ASCII: one column a character, one grapheme a character. */
export const isPlainAscii = (s: string): boolean => /^[\x20-\x7e]*$/.test(s);

/** Terminal columns of `s`. */
export function visibleWidth(s: string): number {
  if (isPlainAscii(s)) return s.length;
  let width = 0;
  for (const g of graphemes(stripAnsi(s).replaceAll("\t", "   "))) width += graphemeWidth(g);
  return width;
}
