/**
 * Output limits for what a tool shows the model. Pure: no I/O.
 * A trailing "\n" ends the last line rather than starting an empty one, so
 * "a\nb\n" and "a\nb" both have two lines.
 */

export const DEFAULT_MAX_LINES = 2000;
export const DEFAULT_MAX_BYTES = 50 * 1024;
export const MAX_LINE_CHARS = 2000;

export interface TruncateOptions {
  maxLines?: number;
  maxBytes?: number;
}

export interface Truncation {
  /** The text that is kept (without a trailing newline when truncated). */
  content: string;
  truncated: boolean;
  truncatedBy: "lines" | "bytes" | null;
  totalLines: number;
  totalBytes: number;
  outputLines: number;
  outputBytes: number;
  /** The one line at the cut edge was kept only in part (it alone exceeded maxBytes). */
  partialLine: boolean;
  maxLines: number;
  maxBytes: number;
}

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export const byteLength = (s: string): number => Buffer.byteLength(s, "utf8");

export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

/** The longest prefix of `s` whose UTF-8 encoding fits in `max` bytes, cut on a character boundary. */
export function headBytes(s: string, max: number): string {
  const buf = encoder.encode(s);
  if (buf.length <= max) return s;
  let end = max;
  while (end > 0 && (buf[end] & 0xc0) === 0x80) end--;
  return decoder.decode(buf.subarray(0, end));
}

/** The longest suffix of `s` whose UTF-8 encoding fits in `max` bytes, cut on a character boundary. */
export function tailBytes(s: string, max: number): string {
  const buf = encoder.encode(s);
  if (buf.length <= max) return s;
  let start = buf.length - max;
  while (start < buf.length && (buf[start] & 0xc0) === 0x80) start++;
  return decoder.decode(buf.subarray(start));
}

/** Cuts a single line to `maxChars`, saying how much was dropped. */
/** Cuts a single line to `maxChars`, saying how much was dropped; `totalChars` when only a prefix is at hand. */
export function truncateLine(line: string, maxChars = MAX_LINE_CHARS, totalChars = line.length): string {
  if (totalChars <= maxChars) return line;
  return `${line.slice(0, maxChars)}... [line truncated, ${totalChars - maxChars} more characters]`;
}

function keep(text: string, lines: readonly string[], fromEnd: boolean, opts: TruncateOptions): Truncation {
  const maxLines = opts.maxLines ?? DEFAULT_MAX_LINES;
  const maxBytes = opts.maxBytes ?? DEFAULT_MAX_BYTES;
  const totalBytes = byteLength(text);
  const base = { totalLines: lines.length, totalBytes, maxLines, maxBytes };
  if (lines.length <= maxLines && totalBytes <= maxBytes) {
    return { ...base, content: text, truncated: false, truncatedBy: null, outputLines: lines.length, outputBytes: totalBytes, partialLine: false };
  }
  const kept: string[] = [];
  let bytes = 0;
  let truncatedBy: "lines" | "bytes" = "lines";
  for (let i = 0; i < lines.length; i++) {
    const line = lines[fromEnd ? lines.length - 1 - i : i];
    if (kept.length >= maxLines) break;
    const cost = byteLength(line) + (kept.length > 0 ? 1 : 0);
    if (bytes + cost > maxBytes) {
      truncatedBy = "bytes";
      break;
    }
    kept.push(line);
    bytes += cost;
  }
  let partialLine = false;
  if (kept.length === 0 && lines.length > 0) {
    const edge = fromEnd ? lines[lines.length - 1] : lines[0];
    kept.push(fromEnd ? tailBytes(edge, maxBytes) : headBytes(edge, maxBytes));
    partialLine = true;
  }
  if (fromEnd) kept.reverse();
  const content = kept.join("\n");
  return { ...base, content, truncated: true, truncatedBy, outputLines: kept.length, outputBytes: byteLength(content), partialLine };
}

/** truncateHead for text already split into lines (an empty last line is kept as a line). */
export function truncateLinesHead(lines: readonly string[], opts: TruncateOptions = {}): Truncation {
  return keep(lines.join("\n"), lines, false, opts);
}

/** Keeps the first lines (for reading files): at most maxLines and maxBytes. */
export function truncateHead(text: string, opts: TruncateOptions = {}): Truncation {
  return keep(text, splitLines(text), false, opts);
}

/** Keeps the last lines (for command output): at most maxLines and maxBytes. */
export function truncateTail(text: string, opts: TruncateOptions = {}): Truncation {
  return keep(text, splitLines(text), true, opts);
}

export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes}B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)}KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)}MB`;
}

/**
 * A rolling tail of a byte stream: keeps at least the last `keepBytes` bytes (plus at
 * most one chunk), counts everything, and never holds the whole stream.
 */
export class TailBuffer {
  private chunks: Uint8Array[] = [];
  private retained = 0;
  private newlines = 0;
  private lastByte = -1;
  totalBytes = 0;
  droppedBytes = 0;

  constructor(private readonly keepBytes: number) {}

  /**
   * A buffer holding only `tail`, the last bytes of a stream whose totals were counted
   * elsewhere (output spooled to a file and scanned without keeping it).
   */
  static fromTail(keepBytes: number, tail: Uint8Array, totals: { bytes: number; newlines: number; lastByte: number }): TailBuffer {
    const b = new TailBuffer(keepBytes);
    if (tail.length > 0) b.chunks.push(tail);
    b.retained = tail.length;
    b.totalBytes = totals.bytes;
    b.droppedBytes = totals.bytes - tail.length;
    b.newlines = totals.newlines;
    b.lastByte = totals.lastByte;
    return b;
  }

  /** Lines seen so far (a final line without "\n" counts). */
  get totalLines(): number {
    return this.newlines + (this.lastByte !== -1 && this.lastByte !== 0x0a ? 1 : 0);
  }

  /** Totals as they would be after pushing `chunk`, without pushing it. */
  peek(chunk: Uint8Array): { bytes: number; lines: number } {
    if (chunk.length === 0) return { bytes: this.totalBytes, lines: this.totalLines };
    const lines = this.newlines + countNewlines(chunk) + (chunk[chunk.length - 1] !== 0x0a ? 1 : 0);
    return { bytes: this.totalBytes + chunk.length, lines };
  }

  push(chunk: Uint8Array): void {
    if (chunk.length === 0) return;
    this.newlines += countNewlines(chunk);
    this.lastByte = chunk[chunk.length - 1];
    this.totalBytes += chunk.length;
    this.chunks.push(chunk);
    this.retained += chunk.length;
    while (this.chunks.length > 1 && this.retained - this.chunks[0].length >= this.keepBytes) {
      const dropped = this.chunks.shift();
      if (!dropped) break;
      this.retained -= dropped.length;
      this.droppedBytes += dropped.length;
    }
  }

  /** Everything retained; the whole stream while droppedBytes is 0. */
  bytes(): Uint8Array {
    return Buffer.concat(this.chunks);
  }

  /**
   * Tail-truncates what is retained, with totals for the whole stream. Once bytes were
   * dropped, the first retained line is incomplete and is not shown.
   */
  truncate(opts: TruncateOptions = {}): Truncation {
    let text = decoder.decode(this.bytes());
    if (this.droppedBytes > 0) {
      const nl = text.indexOf("\n");
      if (nl !== -1 && nl < text.length - 1) text = text.slice(nl + 1);
    }
    const t = truncateTail(text, opts);
    const over = this.totalLines > t.maxLines || this.totalBytes > t.maxBytes;
    return {
      ...t,
      truncated: t.truncated || over,
      truncatedBy: t.truncatedBy ?? (over ? (this.totalBytes > t.maxBytes ? "bytes" : "lines") : null),
      totalLines: this.totalLines,
      totalBytes: this.totalBytes,
    };
  }
}

export function countNewlines(chunk: Uint8Array): number {
  let n = 0;
  for (let i = chunk.indexOf(0x0a); i !== -1; i = chunk.indexOf(0x0a, i + 1)) n++;
  return n;
}
