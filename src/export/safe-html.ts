/**
 * HTML built by a tagged template that escapes every interpolated value unless it is
 * already `SafeHtml`. Session content can only enter markup as escaped text, so it can
 * never open a tag, close an attribute or add one.
 */
export class SafeHtml {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

export type HtmlPart = SafeHtml | string | number | boolean | null | undefined | readonly HtmlPart[];

const ESCAPES: Record<string, string> = { "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" };

/** Text made safe for element content and for double- or single-quoted attribute values. */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

function partToHtml(part: HtmlPart): string {
  if (part instanceof SafeHtml) return part.value;
  if (part === null || part === undefined || typeof part === "boolean") return "";
  if (Array.isArray(part)) return part.map(partToHtml).join("");
  return escapeHtml(String(part)); // also whatever a malformed session put where a string belongs
}

export function html(strings: TemplateStringsArray, ...parts: HtmlPart[]): SafeHtml {
  let out = strings[0] ?? "";
  for (let i = 0; i < parts.length; i++) out += partToHtml(parts[i]) + (strings[i + 1] ?? "");
  return new SafeHtml(out);
}

/** Markup this module's own code produced; never pass session content here. */
export function trusted(markup: string): SafeHtml {
  return new SafeHtml(markup);
}

export function joinHtml(parts: readonly HtmlPart[]): SafeHtml {
  return new SafeHtml(parts.map(partToHtml).join(""));
}
