import { MAX_LINE_CHARS, truncateLine, truncateLinesHead, type Truncation } from "./truncate.ts";

export interface WindowLimits {
  /** 1-based first line to keep. */
  offset: number;
  /** Most lines the caller asked for, if any. */
  limit?: number;
  maxLines: number;
  maxBytes: number;
}

export interface LineWindowResult {
  /** The kept lines after head truncation. */
  truncation: Truncation;
  /** Lines in the whole text ("a\nb\n" has two). */
  totalLines: number;
  /** Lines the caller's own limit stopped at (before maxLines/maxBytes applied). */
  collectedLines: number;
}

/**
 * Collects a window of lines from text fed in pieces, holding only that window: lines
 * before `offset` and after the window are counted, not kept. Each kept line is cut to
 * MAX_LINE_CHARS; "\r" before "\n" is dropped.
 */
export class LineWindow {
  private lines: string[] = [];
  private bytes = 0;
  private done = 0;
  private current = "";
  private pending = 0;
  private collecting = true;

  constructor(private readonly w: WindowLimits) {}

  private wanted(): boolean {
    return this.collecting && this.done + 1 >= this.w.offset;
  }

  private take(text: string, from: number, to: number): void {
    this.pending += to - from;
    if (this.wanted() && this.current.length <= MAX_LINE_CHARS + 1) {
      this.current += text.slice(from, Math.min(to, from + MAX_LINE_CHARS + 2 - this.current.length));
    }
  }

  private endLine(): void {
    if (this.wanted()) {
      let line = this.current;
      let length = this.pending;
      if (length === line.length && line.endsWith("\r")) {
        line = line.slice(0, -1);
        length--;
      }
      const cut = truncateLine(line, MAX_LINE_CHARS, length);
      this.lines.push(cut);
      this.bytes += Buffer.byteLength(cut) + 1;
      const enough =
        this.lines.length === this.w.limit || this.lines.length > this.w.maxLines || this.bytes > this.w.maxBytes;
      if (enough) this.collecting = false;
    }
    this.done++;
    this.current = "";
    this.pending = 0;
  }

  push(text: string): void {
    let start = 0;
    for (let nl = text.indexOf("\n"); nl !== -1; nl = text.indexOf("\n", start)) {
      this.take(text, start, nl);
      this.endLine();
      start = nl + 1;
    }
    this.take(text, start, text.length);
  }

  finish(): LineWindowResult {
    if (this.pending > 0) this.endLine();
    return {
      truncation: truncateLinesHead(this.lines, { maxLines: this.w.maxLines, maxBytes: this.w.maxBytes }),
      totalLines: this.done,
      collectedLines: this.lines.length,
    };
  }
}
