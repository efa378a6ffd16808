import { escapeHtml, html, joinHtml, type SafeHtml, trusted } from "./safe-html.ts";

/**
 * A small Markdown renderer for transcripts: paragraphs, headings, emphasis, inline code,
 * fenced code with its language label, lists, block quotes, tables, rules and links.
 * Every piece of source text leaves through `escapeHtml`; only http(s) links become
 * anchors. Patterns are bounded and nesting is capped, so hostile input stays linear-ish.
 */
export function renderMarkdown(src: string): SafeHtml {
  return renderBlocks(src.replace(/\r\n?/g, "\n").split("\n"), 0);
}

/** An http(s) URL in normalized form, or undefined for anything else (javascript:, data:, relative, …). */
export function safeHttpUrl(href: string): string | undefined {
  if (!/^https?:\/\//i.test(href)) return undefined;
  try {
    const url = new URL(href);
    return url.protocol === "http:" || url.protocol === "https:" ? url.href : undefined;
  } catch {
    return undefined;
  }
}

const MAX_BLOCK_DEPTH = 6;
const MAX_INLINE_DEPTH = 8;

const FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*([^\s`]*)/;
const HEADING = /^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$/;
const RULE = /^ {0,3}([-*_])(?:[ \t]*\1){2,}[ \t]*$/;
const QUOTE = /^ {0,3}> ?(.*)$/;
const LIST_ITEM = /^( *)([-*+]|\d{1,9}[.)])(?:[ \t]+(.*))?$/;
const TABLE_SEP = /^ {0,3}\|?(?:[ \t]*:?-+:?[ \t]*\|)+(?:[ \t]*:?-+:?[ \t]*)?$/;

const leadingSpaces = (line: string): number => line.length - line.trimStart().length;
const isOrdered = (marker: string): boolean => /\d/.test(marker);
/** Same list when the bullet character, or the ordered delimiter, is the same. */
const sameKind = (a: string, b: string): boolean => a[a.length - 1] === b[b.length - 1];

function startsBlock(line: string, next: string | undefined): boolean {
  return (
    FENCE.test(line) ||
    HEADING.test(line) ||
    RULE.test(line) ||
    QUOTE.test(line) ||
    LIST_ITEM.test(line) ||
    (line.includes("|") && next !== undefined && TABLE_SEP.test(next))
  );
}

function renderBlocks(lines: readonly string[], depth: number): SafeHtml {
  const out: SafeHtml[] = [];
  let i = 0;
  while (i < lines.length) {
    const line = lines[i]!;
    if (!line.trim()) {
      i++;
      continue;
    }
    const fence = FENCE.exec(line);
    if (fence) {
      const marker = fence[1]!;
      const body: string[] = [];
      for (i++; i < lines.length && !closesFence(lines[i]!, marker); i++) body.push(lines[i]!);
      i++;
      out.push(codeBlock(body.join("\n"), fence[2] ?? ""));
      continue;
    }
    const heading = HEADING.exec(line);
    if (heading) {
      const level = heading[1]!.length;
      out.push(html`<h${level}>${renderInline(heading[2] ?? "", 0)}</h${level}>`);
      i++;
      continue;
    }
    if (RULE.test(line)) {
      out.push(html`<hr>`);
      i++;
      continue;
    }
    if (QUOTE.test(line)) {
      const inner: string[] = [];
      for (let m = QUOTE.exec(lines[i] ?? ""); m && i < lines.length; m = QUOTE.exec(lines[++i] ?? "")) inner.push(m[1]!);
      const body = depth < MAX_BLOCK_DEPTH ? renderBlocks(inner, depth + 1) : paragraph(inner);
      out.push(html`<blockquote>${body}</blockquote>`);
      continue;
    }
    const item = LIST_ITEM.exec(line);
    if (item) {
      i = renderList(lines, i, item, depth, out);
      continue;
    }
    if (line.includes("|") && TABLE_SEP.test(lines[i + 1] ?? "")) {
      i = renderTable(lines, i, out);
      continue;
    }
    const para: string[] = [line];
    for (i++; i < lines.length && lines[i]!.trim() && !startsBlock(lines[i]!, lines[i + 1]); i++) para.push(lines[i]!);
    out.push(paragraph(para));
  }
  return joinHtml(out);
}

function closesFence(line: string, marker: string): boolean {
  const m = /^ {0,3}(`{3,}|~{3,})[ \t]*$/.exec(line);
  return !!m && m[1]![0] === marker[0] && m[1]!.length >= marker.length;
}

function codeBlock(code: string, lang: string): SafeHtml {
  const label = lang ? html`<div class="lang">${lang}</div>` : "";
  return html`<div class="code">${label}<pre><code>${code}</code></pre></div>`;
}

function paragraph(lines: readonly string[]): SafeHtml {
  return html`<p>${renderInline(lines.map((l) => l.trim()).join("\n"), 0)}</p>`;
}

/** Appends one list (items may hold nested blocks) and returns the index after it. */
function renderList(lines: readonly string[], start: number, first: RegExpExecArray, depth: number, out: SafeHtml[]): number {
  const indent = first[1]!.length;
  const marker = first[2]!;
  const ordered = isOrdered(marker);
  const contentOffset = indent + marker.length + 1;
  const items: string[][] = [];
  let i = start;
  while (i < lines.length) {
    const line = lines[i]!;
    const m = LIST_ITEM.exec(line);
    const sibling = (l: RegExpExecArray | null): boolean => !!l && l[1]!.length <= indent + 1 && sameKind(l[2]!, marker);
    if (m && sibling(m) && !RULE.test(line)) {
      items.push([m[3] ?? ""]);
      i++;
      continue;
    }
    const current = items[items.length - 1]!;
    if (!line.trim()) {
      let j = i + 1;
      while (j < lines.length && !lines[j]!.trim()) j++;
      const next = lines[j];
      if (next === undefined || !(sibling(LIST_ITEM.exec(next)) || leadingSpaces(next) > indent)) break;
      for (; i < j; i++) current.push("");
      continue;
    }
    if (leadingSpaces(line) > indent) current.push(line.slice(Math.min(leadingSpaces(line), contentOffset)));
    else if (!startsBlock(line, lines[i + 1])) current.push(line.trim());
    else break;
    i++;
  }
  const lis = items.map((it) => html`<li>${depth < MAX_BLOCK_DEPTH ? renderBlocks(it, depth + 1) : paragraph(it)}</li>`);
  if (!ordered) out.push(html`<ul>${lis}</ul>`);
  else {
    const n = Number.parseInt(marker, 10);
    out.push(n === 1 ? html`<ol>${lis}</ol>` : html`<ol start="${n}">${lis}</ol>`);
  }
  return i;
}

function splitRow(line: string): string[] {
  const cells = line.trim().replace(/^\|/, "").replace(/(?<!\\)\|$/, "").split(/(?<!\\)\|/);
  return cells.map((c) => c.trim().replace(/\\\|/g, "|"));
}

function renderTable(lines: readonly string[], start: number, out: SafeHtml[]): number {
  const head = splitRow(lines[start]!);
  const aligns = splitRow(lines[start + 1]!).map((c) =>
    c.startsWith(":") && c.endsWith(":") ? "center" : c.endsWith(":") ? "right" : c.startsWith(":") ? "left" : "",
  );
  const cell = (tag: "th" | "td", text: string, col: number): SafeHtml => {
    const align = aligns[col] ?? "";
    const inner = renderInline(text, 0);
    if (tag === "th") return align ? html`<th class="al-${align}">${inner}</th>` : html`<th>${inner}</th>`;
    return align ? html`<td class="al-${align}">${inner}</td>` : html`<td>${inner}</td>`;
  };
  const rows: SafeHtml[] = [];
  let i = start + 2;
  for (; i < lines.length && lines[i]!.trim() && lines[i]!.includes("|"); i++) {
    const cells = splitRow(lines[i]!);
    rows.push(html`<tr>${head.map((_, c) => cell("td", cells[c] ?? "", c))}</tr>`);
  }
  const header = html`<tr>${head.map((h, c) => cell("th", h, c))}</tr>`;
  out.push(html`<div class="table"><table><thead>${header}</thead><tbody>${rows}</tbody></table></div>`);
  return i;
}

const SPECIAL = /[`[!*_~\\<h]/g;
const CODE_SPAN = /(`+)(?!`)([\s\S]{0,4000}?[^`])\1(?!`)/y;
const LINK = /\[([^[\]\n]{0,500})\]\(\s*<?([^\s()<>]{0,2000})>?(?:\s+(?:"[^"\n]{0,200}"|'[^'\n]{0,200}'))?\s*\)/y;
const ANGLE_LINK = /<(https?:\/\/[^\s<>]{1,2000})>/iy;
const BARE_URL = /https?:\/\/[^\s<>"'`[\]()]{1,2000}/iy;
const STRONG = /(\*\*|__)(?=\S)([^\n]{0,1000}?\S)\1(?![*_])/y;
const EM = /([*_])(?=[^\s*_])([^\n]{0,1000}?[^\s*_])\1(?![*_])/y;
const STRIKE = /~~(?=\S)([^\n]{0,1000}?\S)~~/y;

function match(re: RegExp, src: string, at: number): RegExpExecArray | null {
  re.lastIndex = at;
  return re.exec(src);
}

/** Inline spans of `src`; text leaves are escaped and a newline becomes <br>. */
function renderInline(src: string, depth: number): SafeHtml {
  if (depth > MAX_INLINE_DEPTH) return textHtml(src);
  let out = "";
  let pos = 0;
  let textFrom = 0;
  const emit = (markup: SafeHtml, end: number): void => {
    out += textHtml(src.slice(textFrom, pos)).value + markup.value;
    pos = textFrom = end;
  };
  while (pos < src.length) {
    SPECIAL.lastIndex = pos;
    const found = SPECIAL.exec(src);
    if (!found) break;
    pos = found.index;
    const ch = src[pos]!;
    const prev = pos > 0 ? src[pos - 1]! : " ";
    let m: RegExpExecArray | null;
    if (ch === "\\" && /[!-/:-@[-`{-~]/.test(src[pos + 1] ?? "")) {
      emit(textHtml(src[pos + 1]!), pos + 2);
    } else if (ch === "`") {
      if ((m = match(CODE_SPAN, src, pos))) emit(html`<code>${m[2]!.replace(/\n/g, " ")}</code>`, pos + m[0].length);
      else pos += /^`+/.exec(src.slice(pos, pos + 100))![0].length;
    } else if (ch === "[" && (m = match(LINK, src, pos))) {
      emit(link(renderInline(m[1]!, depth + 1), m[2]!), pos + m[0].length);
    } else if (ch === "!" && src[pos + 1] === "[" && (m = match(LINK, src, pos + 1))) {
      emit(html`<span class="md-img">[image: ${m[1]!}]</span> ${link(textHtml(m[2]!), m[2]!, false)}`, pos + 1 + m[0].length);
    } else if (ch === "<" && (m = match(ANGLE_LINK, src, pos))) {
      emit(link(textHtml(m[1]!), m[1]!), pos + m[0].length);
    } else if (ch === "h" && !/[\w/]/.test(prev) && (m = match(BARE_URL, src, pos))) {
      const url = m[0].replace(/[.,;:!?*_~]+$/, "");
      emit(link(textHtml(url), url), pos + url.length);
    } else if ((ch === "*" || ch === "_") && !(ch === "_" && /[\p{L}\p{N}]/u.test(prev)) && (m = emphasis(src, pos))) {
      const tag = m[1]!.length === 2 ? "strong" : "em";
      emit(html`<${tag}>${renderInline(m[2]!, depth + 1)}</${tag}>`, pos + m[0].length);
    } else if (ch === "~" && (m = match(STRIKE, src, pos))) {
      emit(html`<del>${renderInline(m[1]!, depth + 1)}</del>`, pos + m[0].length);
    } else {
      pos++;
    }
  }
  return trusted(out + textHtml(src.slice(textFrom)).value);
}

function emphasis(src: string, pos: number): RegExpExecArray | null {
  const m = match(STRONG, src, pos) ?? match(EM, src, pos);
  if (!m || m[1]![0] !== "_") return m;
  return /[\p{L}\p{N}]/u.test(src[pos + m[0].length] ?? "") ? null : m;
}

function textHtml(text: string): SafeHtml {
  return trusted(escapeHtml(text).replace(/\n/g, "<br>\n"));
}

/** Link text plus where it points; only an http(s) target becomes a clickable anchor. */
function link(text: SafeHtml, href: string, showHref = true): SafeHtml {
  const url = safeHttpUrl(href);
  const same = text.value === escapeHtml(href);
  const shown = showHref && !same ? html` <span class="href">(${href})</span>` : "";
  if (!url) return html`<span class="link">${text}</span>${same ? "" : html` <span class="href">(${href})</span>`}`;
  return html`<a href="${url}" rel="noopener noreferrer nofollow" target="_blank">${text}</a>${shown}`;
}
