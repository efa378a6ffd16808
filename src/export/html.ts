import { chmodSync, existsSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, resolve } from "node:path";
import type { AssistantMessage, ImageContent, TextContent, ToolResultMessage, Usage } from "../providers/types.ts";
import type { AgentMessage, BashExecutionMessage, Entry } from "../store/entries.ts";
import { collectLabels, pathTo } from "../store/entries.ts";
import { renderMarkdown } from "./markdown.ts";
import { html, type HtmlPart, type SafeHtml, trusted } from "./safe-html.ts";
import PAGE_SCRIPT from "./page-script.js" with { type: "text" };
import { PAGE_CSS } from "./style.ts";
import { foldedOutput, toolCallView, toolResultBody } from "./tool-views.ts";
import { treeRows } from "./tree-rows.ts";

export interface SessionHtmlInput {
  sessionId: string;
  name?: string;
  cwd: string;
  model?: { provider: string; id: string };
  /** Every entry of the session, of every branch. */
  entries: Entry[];
  /** The current leaf, whose branch the page opens on; default: the last entry. */
  leafId?: string | null;
  /** The session file's text, offered as a download. */
  jsonl?: string;
  /** What the model was given, folded at the top when known. */
  systemPrompt?: string;
  tools?: { name: string; description: string }[];
  exportedAt?: Date;
}

const SCRIPT_HASH = new Bun.CryptoHasher("sha256").update(PAGE_SCRIPT).digest("base64");

/** The page's own policy: its one script (by hash) and inline styles; no network, images only as data: URLs. */
export const CONTENT_SECURITY_POLICY = `default-src 'none'; script-src 'sha256-${SCRIPT_HASH}'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'`;

/**
 * The session file for the download link, gzipped and in base64 (no "<" can occur): about a tenth
 * of the file's size, unpacked by the page with the browser's DecompressionStream, byte for byte.
 */
const packedText = (text: string): SafeHtml => trusted(Buffer.from(Bun.gzipSync(Buffer.from(text, "utf8"))).toString("base64"));

/** JSON inside a <script type="application/json">: no "<", so no "</script>" or "<!--" can end or bend it. */
const scriptJson = (value: unknown): SafeHtml => trusted(JSON.stringify(value).replace(/</g, "\\u003c"));

/**
 * One self-contained HTML page of a session: a sidebar tree of every entry of every branch
 * (search, filters, keyboard) beside the entries, the current branch shown. Every string from
 * the session goes through the escaping `html` tag or, in the script, into text nodes; the page
 * loads nothing and runs only its own script, allowed by hash.
 */
export function renderSessionHtml(input: SessionHtmlInput): string {
  const labels = collectLabels(input.entries);
  const byId = new Map(input.entries.map((e) => [e.id, e]));
  const leafId = input.leafId !== undefined ? input.leafId : (input.entries.at(-1)?.id ?? null);
  const onBranch = new Set(pathTo(byId, leafId).map((e) => e.id));
  const name = input.name ?? latestSessionName(input.entries);
  const title = name ? `${name} · pion session` : `pion session ${input.sessionId}`;
  const rows = treeRows(input.entries, labels, leafId);
  const body = rows.map((r) => {
    const e = byId.get(r.id)!;
    return html`<div class="ent" id="e-${e.id}" data-id="${e.id}"${onBranch.has(e.id) ? "" : trusted(" hidden")}>${renderEntry(e, labels.get(e.id)?.label)}</div>\n`;
  });
  const page = html`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${trusted(CONTENT_SECURITY_POLICY)}">
<meta name="referrer" content="no-referrer">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
<style>${trusted(PAGE_CSS)}</style>
</head>
<body>
${sidebar(input, rows.length)}
<main>
${renderHeader(input, name)}
${contextView(input)}
${body}
<footer>Exported by pion · ${(input.exportedAt ?? new Date()).toISOString()}</footer>
</main>
<script type="application/json" id="pion-rows">${scriptJson(rows)}</script>
${input.jsonl !== undefined ? html`<script type="application/gzip" id="pion-jsonl">${packedText(input.jsonl)}</script>` : ""}
<script>${trusted(PAGE_SCRIPT)}</script>
</body>
</html>
`;
  return page.value;
}

function sidebar(input: SessionHtmlInput, total: number): SafeHtml {
  const filters = [
    ["default", "Default", "Hide settings and tool-only steps"],
    ["no-tools", "No tools", "Default without tool results"],
    ["user-only", "User", "Only user messages"],
    ["labeled-only", "Labeled", "Only labeled entries"],
    ["all", "All", "Every entry"],
  ];
  return html`<aside id="sidebar">
<input id="search" type="search" placeholder="Search (press /)" aria-label="Search entries" autocomplete="off">
<div class="filters">${filters.map(([id, text, tip]) => html`<button type="button" data-filter="${id}" title="${tip}">${text}</button>`)}</div>
<div class="toggles">
<label><input type="checkbox" id="toggle-thinking" checked> Thinking</label>
<label><input type="checkbox" id="toggle-tools" checked> Tool output</label>
<label><input type="checkbox" id="toggle-hidden"> Hidden messages</label>
</div>
<div class="tree-meta"><span id="tree-count">${total} entries</span>${input.jsonl !== undefined ? html` · <a id="download-jsonl" download="${input.sessionId}.jsonl" rel="noopener" hidden>Download JSONL</a>` : ""}</div>
<div id="tree" role="tree" tabindex="0"><div id="tree-spacer"></div></div>
</aside>`;
}

function contextView(input: SessionHtmlInput): SafeHtml {
  const parts: SafeHtml[] = [];
  if (input.systemPrompt) {
    parts.push(html`<details class="context"><summary>System prompt (${input.systemPrompt.length.toLocaleString("en-US")} chars)</summary><pre>${input.systemPrompt}</pre></details>`);
  }
  if (input.tools && input.tools.length > 0) {
    const list = input.tools.map((t) => html`<dt><code>${t.name}</code></dt><dd>${t.description}</dd>`);
    parts.push(html`<details class="context"><summary>Tools (${input.tools.length})</summary><dl class="tools">${list}</dl></details>`);
  }
  return html`${parts}`;
}

/** Writes `html` to `outputPath` (parent created 0700 if missing, file 0600) and returns the absolute path. */
export function writeHtmlExport(html: string, outputPath: string): string {
  const path = resolve(outputPath);
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileSync(path, html, { mode: 0o600 });
  chmodSync(path, 0o600);
  return path;
}

/** `pion-session-<slug>.html`, the slug taken from the session name, else its id. */
export function defaultExportName(sessionId: string, name?: string): string {
  const slug = (text: string | undefined): string =>
    (text ?? "")
      .normalize("NFKD")
      .replace(/\p{M}/gu, "")
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, "-")
      .replace(/^-+|-+$/g, "")
      .slice(0, 60)
      .replace(/-+$/, "");
  return `pion-session-${slug(name) || slug(sessionId) || "export"}.html`;
}

function latestSessionName(entries: readonly Entry[]): string | undefined {
  let name: string | undefined;
  for (const e of entries) if (e.type === "session_info" && e.name) name = e.name;
  return name;
}

interface Totals {
  user: number;
  assistant: number;
  toolResults: number;
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  totalTokens: number;
  cost: number;
}

const num = (n: unknown): number => (typeof n === "number" && Number.isFinite(n) ? n : 0);
const tokens = (n: unknown): string => num(n).toLocaleString("en-US");
const dollars = (n: unknown): string => `$${num(n).toFixed(4)}`;

function totalsOf(entries: readonly Entry[]): Totals {
  const t: Totals = { user: 0, assistant: 0, toolResults: 0, input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: 0 };
  for (const e of entries) {
    if (e.type !== "message") continue;
    const m = e.message;
    if (m.role === "user") t.user++;
    else if (m.role === "toolResult") t.toolResults++;
    else if (m.role === "assistant") {
      t.assistant++;
      const u: Partial<Usage> = m.usage ?? {};
      t.input += num(u.input);
      t.output += num(u.output);
      t.cacheRead += num(u.cacheRead);
      t.cacheWrite += num(u.cacheWrite);
      t.totalTokens += num(u.totalTokens);
      t.cost += num(u.cost?.total);
    }
  }
  return t;
}

function headerModel(input: SessionHtmlInput): string | undefined {
  if (input.model) return `${input.model.provider}/${input.model.id}`;
  for (let i = input.entries.length - 1; i >= 0; i--) {
    const e = input.entries[i]!;
    if (e.type === "model_change") return `${e.provider}/${e.modelId}`;
    if (e.type === "message" && e.message.role === "assistant") return `${e.message.provider}/${e.message.model}`;
  }
  return undefined;
}

function renderHeader(input: SessionHtmlInput, name: string | undefined): SafeHtml {
  const t = totalsOf(input.entries);
  const model = headerModel(input);
  return html`<header class="session">
<h1>${name ?? "pion session"}</h1>
<dl class="meta">
<dt>Session</dt><dd><code>${input.sessionId}</code></dd>
<dt>Directory</dt><dd><code>${input.cwd}</code></dd>
${model ? html`<dt>Model</dt><dd><code>${model}</code></dd>` : ""}
<dt>Messages</dt><dd>${t.user} user · ${t.assistant} assistant · ${t.toolResults} tool results</dd>
<dt>Tokens</dt><dd>input ${tokens(t.input)} · output ${tokens(t.output)} · cache read ${tokens(t.cacheRead)} · cache write ${tokens(t.cacheWrite)} · total ${tokens(t.totalTokens)}</dd>
<dt>Cost</dt><dd>${dollars(t.cost)}</dd>
</dl>
</header>`;
}

function entryBox(kind: string, role: string, timestamp: string, label: string | undefined, content: HtmlPart): SafeHtml {
  const badge = label ? html`<span class="badge">${label}</span>` : "";
  return html`<section class="entry ${kind}">
<div class="entry-head"><span class="role">${role}</span><span class="time">${timestamp}</span>${badge}</div>
${content}
</section>
`;
}

const note = (text: HtmlPart): SafeHtml => html`<div class="note entry-note">${text}</div>\n`;

function renderEntry(entry: Entry, label: string | undefined): SafeHtml {
  const type: string = entry.type;
  switch (entry.type) {
    case "message":
      return renderMessage(entry.message, entry.timestamp, label);
    case "model_change":
      return note(html`Model changed to <code>${entry.provider}/${entry.modelId}</code>`);
    case "thinking_level_change":
      return note(html`Thinking level set to <code>${entry.thinkingLevel}</code>`);
    case "compaction":
      return summary("compaction", "Compaction summary", entry.timestamp, label, entry.summary, `${tokens(entry.tokensBefore)} tokens before`);
    case "branch_summary":
      return summary("branch-summary", "Branch summary", entry.timestamp, label, entry.summary);
    case "custom_message":
      return customMessage(entry.customType, entry.content, entry.display, entry.timestamp, label);
    case "session_info":
      return entry.name ? note(html`Session named <strong>${entry.name}</strong>`) : html``;
    case "context_edit":
      return entry.replacement
        ? note(html`Message <code>${entry.targetId}</code> was replaced in the model's context by a retry`)
        : note(html`Message <code>${entry.targetId}</code> was removed from the model's context by a retry`);
    case "permission": {
      const who = entry.by === "host" ? "the user" : entry.by === "rule" ? `rule ${entry.rule ?? ""}` : entry.by;
      const what = entry.subject === undefined ? html`` : html` <code>${entry.subject}</code>`;
      const verb = entry.decision === "allow" ? "allowed" : "denied";
      return note(html`Tool call <code>${entry.toolName}</code>${what} ${verb} by ${who}${entry.message ? html`: ${entry.message}` : html``}`);
    }
    case "custom":
    case "label":
      return html``;
    default:
      return note(html`Entry of unknown type <code>${type}</code> not shown`);
  }
}

function renderMessage(m: AgentMessage, timestamp: string, label: string | undefined): SafeHtml {
  const role: string = m.role;
  switch (m.role) {
    case "user":
      return entryBox("user", "User", timestamp, label, userContent(m.content));
    case "assistant":
      return entryBox(m.stopReason === "error" ? "assistant error" : "assistant", "Assistant", timestamp, label, assistantContent(m));
    case "toolResult":
      return toolResult(m, timestamp, label);
    case "bashExecution":
      return bashExecution(m, timestamp, label);
    case "custom":
      return customMessage(m.customType, m.content, m.display, timestamp, label);
    case "branchSummary":
      return summary("branch-summary", "Branch summary", timestamp, label, m.summary);
    case "compactionSummary":
      return summary("compaction", "Compaction summary", timestamp, label, m.summary, `${tokens(m.tokensBefore)} tokens before`);
    default:
      if (role === "system") return systemMessage(m as unknown as { content?: unknown; sections?: unknown }, timestamp, label);
      return note(html`Message with unknown role <code>${role}</code> not shown`);
  }
}

const IMAGE_TYPES: ReadonlySet<string> = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** An <img> only for a known raster type with well-formed base64; anything else is a note. */
function image(img: ImageContent): SafeHtml {
  const { data, mimeType } = img;
  if (typeof data === "string" && data.length > 0 && data.length % 4 === 0 && IMAGE_TYPES.has(mimeType) && BASE64.test(data)) {
    return html`<img class="image" alt="attached image" src="data:${mimeType};base64,${data}">`;
  }
  return html`<div class="note">[image omitted: ${typeof mimeType === "string" ? mimeType : "unknown type"}]</div>`;
}

function blocksOf(content: string | readonly (TextContent | ImageContent)[]): (TextContent | ImageContent)[] {
  if (typeof content === "string") return [{ type: "text", text: content }];
  return Array.isArray(content) ? content.filter((b) => typeof b === "object" && b !== null) : [];
}

function userContent(content: string | (TextContent | ImageContent)[]): SafeHtml {
  return html`${blocksOf(content).map((b) => (b.type === "image" ? image(b) : html`<div class="plain">${b.text}</div>`))}`;
}

const LONG_LINES = 20;
const LONG_CHARS = 2000;

/** Preformatted text, folded behind a summary when it is long. */
function foldable(text: string, what: string, open = false): SafeHtml {
  const lines = text.split("\n").length;
  const pre = html`<pre>${text}</pre>`;
  if (lines <= LONG_LINES && text.length <= LONG_CHARS) return pre;
  return html`<details${open ? trusted(" open") : ""}><summary>${what} (${lines} lines, ${text.length} chars)</summary>${pre}</details>`;
}

function prettyJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? String(value);
  } catch {
    return String(value);
  }
}

function assistantContent(m: AssistantMessage): SafeHtml {
  const parts: SafeHtml[] = [];
  for (const block of Array.isArray(m.content) ? m.content : []) {
    if (block.type === "text") parts.push(html`<div class="md">${renderMarkdown(block.text)}</div>`);
    else if (block.type === "thinking") {
      const body = block.redacted ? html`<p class="note">(redacted)</p>` : html`<div class="md">${renderMarkdown(block.thinking)}</div>`;
      parts.push(html`<details class="thinking"><summary>Thinking</summary>${body}</details>`);
    } else if (block.type === "toolCall") {
      parts.push(toolCallView(block, (v) => html`<pre>${prettyJson(v)}</pre>`));
    }
  }
  if (m.stopReason === "error") parts.push(html`<div class="error-text">Error: ${m.errorMessage ?? "unknown error"}</div>`);
  if (m.stopReason === "aborted") parts.push(html`<div class="note">Aborted${m.errorMessage ? html`: ${m.errorMessage}` : ""}</div>`);
  if (m.stopReason === "length") parts.push(html`<div class="note">Stopped at the output token limit.</div>`);
  const u: Partial<Usage> = m.usage ?? {};
  const cache = num(u.cacheRead) || num(u.cacheWrite) ? ` · cache read ${tokens(u.cacheRead)} · cache write ${tokens(u.cacheWrite)}` : "";
  parts.push(
    html`<div class="usage"><span class="mono">${m.provider}/${m.model}</span> · input ${tokens(u.input)} · output ${tokens(u.output)}${cache} · ${dollars(u.cost?.total)} · ${m.stopReason}</div>`,
  );
  return html`${parts}`;
}

function toolResult(m: ToolResultMessage, timestamp: string, label: string | undefined): SafeHtml {
  const images = blocksOf(m.content).flatMap((b) => (b.type === "image" ? [image(b)] : []));
  const head = html`<div class="result-head">${m.toolName}${m.isError ? " failed" : ""}<span class="note"> · ${m.toolCallId}</span></div>`;
  return entryBox(m.isError ? "tool-result error" : "tool-result", "Tool result", timestamp, label, html`${head}<div class="tool-output">${toolResultBody(m)}${images}</div>`);
}

function bashExecution(m: BashExecutionMessage, timestamp: string, label: string | undefined): SafeHtml {
  const status = m.cancelled ? "cancelled" : m.exitCode === undefined ? "no exit code" : `exit code ${m.exitCode}`;
  const failed = m.cancelled || (m.exitCode !== undefined && m.exitCode !== 0);
  const flags = [status, m.truncated ? "output truncated" : "", m.excludeFromContext ? "excluded from context" : ""].filter(Boolean).join(" · ");
  const full = m.fullOutputPath ? html` · full output: <code>${m.fullOutputPath}</code>` : "";
  const content = html`<pre class="command">$ ${m.command}</pre>
<div class="tool-output">${m.output ? foldedOutput(m.output) : html`<div class="note">(no output)</div>`}</div>
<div class="usage">${flags}${full}</div>`;
  return entryBox(failed ? "bash error" : "bash", "Shell", timestamp, label, content);
}

function summary(kind: string, role: string, timestamp: string, label: string | undefined, text: string, extra?: string): SafeHtml {
  const info = extra ? html`<div class="usage">${extra}</div>` : "";
  return entryBox(kind, role, timestamp, label, html`<div class="summary md">${renderMarkdown(text)}</div>${info}`);
}

function customMessage(
  customType: string,
  content: string | (TextContent | ImageContent)[],
  display: boolean,
  timestamp: string,
  label: string | undefined,
): SafeHtml {
  const body = blocksOf(content).map((b) => (b.type === "image" ? image(b) : html`<div class="md">${renderMarkdown(b.text)}</div>`));
  return entryBox(display ? "custom" : "custom hidden-msg", customType || "Custom", timestamp, label, display ? html`${body}` : html`<div class="note">Not shown to the user</div>${body}`);
}

/** The system prompt as the reference records it in a session (a `system` message, maybe in named sections), folded. */
function systemMessage(m: { content?: unknown; sections?: unknown }, timestamp: string, label: string | undefined): SafeHtml {
  const sections = m.sections && typeof m.sections === "object" ? Object.entries(m.sections as Record<string, unknown>) : [];
  const text = typeof m.content === "string" ? m.content : "";
  const parts = sections.map(([name, body]) => html`<details><summary>${name}</summary><pre>${typeof body === "string" ? body : prettyJson(body)}</pre></details>`);
  const body = html`${text ? html`<pre>${text}</pre>` : ""}${parts}`;
  return entryBox("system", "System prompt", timestamp, label, html`<details class="context"><summary>System prompt</summary>${body}</details>`);
}
