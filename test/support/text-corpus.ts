/**
 * A generated corpus for differential tests of the text helpers: strings built from fragments that
 * stress terminal widths and wrapping (SGR colours, OSC 8 links, wide CJK, emoji sequences,
 * combining marks, tabs, runs of spaces, long words, control characters), joined by a seeded
 * generator so every run tests the same strings.
 */

const SGR = ["\x1b[31m", "\x1b[1m", "\x1b[4m", "\x1b[9m", "\x1b[0m", "\x1b[m", "\x1b[22m", "\x1b[39m", "\x1b[24m", "\x1b[38;5;208m", "\x1b[48;2;10;20;30m", "\x1b[1;3;7m", "\x1b[38;5m", "\x1b[42m", "\x1b[2K"];
const LINKS = ["\x1b]8;;https://example.com\x07", "\x1b]8;;\x07", "\x1b]8;id=1;https://pi.dev/x\x1b\\", "\x1b]8;;\x1b\\", "\x1b]0;title\x07", "\x1b_marker\x07"];
const WORDS = ["the", "quick", "brown", "fox", "a", "I", "supercalifragilisticexpialidocious", "https://example.com/a/very/long/path?query=1", "x", "hello,", "world.", "foo-bar_baz", "0123456789"];
const WIDE = ["中文", "日本語のテキスト", "한국어", "ㄅㄆ", "全角ＡＢＣ", "中", "。", "「引用」"];
const EMOJI = ["😀", "👨‍👩‍👧", "❤️", "❤", "👍🏽", "🇫🇷", "🇫", "🏳️‍🌈", "☺", "⌚", "1️⃣", "✈︎"];
const MARKS = ["e\u0301", "a\u0308\u0323", "\u0301", "नमस्ते", "ก้ำ", "\u200b", "\u00ad", "ｱｲｳ", "\ufeff", "\u200d"];
const SPACES = [" ", "  ", "   ", "\t", " \t ", "\u00a0", "      ", "\u3000"];
const BREAKS = ["\n", "\r\n", "\r", "\n\n"];
const ODD = ["\x1b", "\x1b[", "\x07", "\x01", "\x7f", "\x1b[31", "\x9b"];

/** A deterministic pseudo-random sequence (mulberry32). */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const HAND_PICKED = [
  "", " ", "   ", "a", "中文", "中", "abc", "a  b   c", "   leading", "trailing   ", "tab\there", "\t\t",
  "the quick brown fox jumps over the lazy dog", "abcdefghijklmnopqrstuvwxyz", "one\ntwo three", "a\r\nb\rc",
  "\x1b[31mred words here\x1b[0m plain", "\x1b[4munderlined words that wrap\x1b[24m after", "\x1b[9mstruck through text\x1b[29m",
  "\x1b]8;;https://example.com\x07a link that wraps over lines\x1b]8;;\x07 done", "\x1b]8;;https://x.y\x1b\\st link text here\x1b]8;;\x1b\\",
  "\x1b[1mbold \x1b[22mthen \x1b[38;2;1;2;3mrgb words\x1b[0m", "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", "❤️❤️❤️ love", "🇫🇷🇩🇪🇯🇵", "e\u0301e\u0301e\u0301",
  "中文 和 English 混合 text", "日本語のテキストを折り返す", "\x1b[31m中文\x1b[0m字", "x".repeat(100), "word ".repeat(30),
  "🏳️‍🌈\u0301x", "❤\x1b[1m\u200d🏳️‍🌈 fox", "\x1b[\x1b]8;;https://example.com\x07tail", "\x1b[31m\x1b[0m", "\x1b[31m", "   \x1b[0m", "a \x1b[1m \x1b[0m b", "\x1b", "a\x1bb", "\x1b[31mred\nstill red\x1b[0m\nplain",
];

/** Hand-picked strings, then `count - hand-picked` generated ones. */
export function textCorpus(count: number, seed = 37): string[] {
  const next = random(seed);
  const pick = <T,>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const groups = [SGR, LINKS, WORDS, WORDS, WORDS, WIDE, EMOJI, MARKS, SPACES, SPACES, BREAKS, ODD];
  const out = [...HAND_PICKED];
  while (out.length < count) {
    const parts = Math.floor(next() * 14);
    let s = "";
    for (let i = 0; i < parts; i++) s += pick(pick(groups));
    out.push(s);
  }
  return out;
}

export const WIDTHS = [0, 1, 2, 3, 4, 5, 7, 10, 13, 20, 40, 80];
