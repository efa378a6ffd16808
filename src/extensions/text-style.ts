/**
 * The style in effect at a point of ANSI-coloured text, as pi-tui tracks it to carry a style over
 * a line break: SGR attributes and colours, and the open OSC 8 hyperlink. Pure.
 */
import { pieces } from "./text-width.ts";

export interface Hyperlink {
  params: string;
  url: string;
  /** BEL or ST, kept as written: some terminals only make BEL-terminated links clickable. */
  end: string;
}

/** An OSC 8 sequence: a link (null when it closes one); undefined for any other sequence. */
export function parseHyperlink(code: string): Hyperlink | null | undefined {
  if (!code.startsWith("\x1b]8;")) return undefined;
  const end = code.endsWith("\x07") ? "\x07" : "\x1b\\";
  const body = code.slice(4, code.length - end.length);
  const cut = body.indexOf(";");
  if (cut === -1) return undefined;
  const url = body.slice(cut + 1);
  return url ? { params: body.slice(0, cut), url, end } : null;
}

const closeLink = (end: string) => `\x1b]8;;${end}`;

/** The close of the hyperlink `s` leaves open, "" when none is. */
export function openLinkClose(s: string): string {
  if (!s.includes("\x1b]8;")) return "";
  let link: Hyperlink | null = null;
  for (const p of pieces(s)) {
    if (!p.escape) continue;
    const l = parseHyperlink(p.text);
    if (l !== undefined) link = l;
  }
  return link ? closeLink(link.end) : "";
}

// SGR attribute codes that switch on, and the code that switches each off.
const ATTRIBUTES = [1, 2, 3, 4, 5, 7, 8, 9] as const;
const OFF: Record<number, readonly number[]> = { 21: [1], 22: [1, 2], 23: [3], 24: [4], 25: [5], 27: [7], 28: [8], 29: [9] };
const isFg = (n: number) => (n >= 30 && n <= 37) || (n >= 90 && n <= 97);
const isBg = (n: number) => (n >= 40 && n <= 47) || (n >= 100 && n <= 107);

export class TextStyle {
  private on = new Set<number>();
  private fg: string | null = null;
  private bg: string | null = null;
  private link: Hyperlink | null = null;

  /** Takes in every escape sequence of `s`. */
  feed(s: string): void {
    if (!s.includes("\x1b")) return;
    for (const p of pieces(s)) if (p.escape) this.apply(p.text);
  }

  /** Takes in one escape sequence; anything but SGR and OSC 8 leaves the style as it is. */
  apply(code: string): void {
    const link = parseHyperlink(code);
    if (link !== undefined) {
      this.link = link;
      return;
    }
    if (!code.endsWith("m")) return;
    const params = /\x1b\[([\d;]*)m/.exec(code)?.[1];
    if (params === undefined) return;
    if (params === "" || params === "0") return this.reset();
    const parts = params.split(";");
    for (let i = 0; i < parts.length; i++) {
      const n = Number.parseInt(parts[i]!, 10);
      if (n === 38 || n === 48) {
        // 38;5;N / 38;2;R;G;B (foreground), 48;... (background): one colour of several parameters.
        const size = parts[i + 1] === "5" && parts[i + 2] !== undefined ? 3 : parts[i + 1] === "2" && parts[i + 4] !== undefined ? 5 : 0;
        if (size > 0) {
          const colour = parts.slice(i, i + size).join(";");
          if (n === 38) this.fg = colour;
          else this.bg = colour;
          i += size - 1;
          continue;
        }
      }
      if (n === 0) this.reset();
      else if ((ATTRIBUTES as readonly number[]).includes(n)) this.on.add(n);
      else if (OFF[n]) for (const a of OFF[n]) this.on.delete(a);
      else if (n === 39) this.fg = null;
      else if (n === 49) this.bg = null;
      else if (isFg(n)) this.fg = String(n);
      else if (isBg(n)) this.bg = String(n);
    }
  }

  /** SGR reset: attributes and colours; an open hyperlink stays open. */
  private reset(): void {
    this.on.clear();
    this.fg = null;
    this.bg = null;
  }

  /** The sequences that open the current style on a fresh line. */
  opening(): string {
    const codes: string[] = ATTRIBUTES.filter((a) => this.on.has(a)).map(String);
    if (this.fg) codes.push(this.fg);
    if (this.bg) codes.push(this.bg);
    const sgr = codes.length > 0 ? `\x1b[${codes.join(";")}m` : "";
    return this.link ? `${sgr}\x1b]8;${this.link.params};${this.link.url}${this.link.end}` : sgr;
  }

  /** What a line ends with so nothing bleeds past it: underline and strike-through off, the link closed. */
  lineEnd(): string {
    return `${this.on.has(4) ? "\x1b[24m" : ""}${this.on.has(9) ? "\x1b[29m" : ""}${this.link ? closeLink(this.link.end) : ""}`;
  }
}
