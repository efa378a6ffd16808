import type { ToolCall, ToolResultMessage } from "../providers/types.ts";
import { editDiff } from "../tools/diff.ts";
import { html, type SafeHtml } from "./safe-html.ts";
import { toolTarget } from "./tree-rows.ts";

/** Output longer than this shows its first lines, the rest folded under the count of hidden lines. */
const SHOWN_LINES = 20;

/** Text shown up to SHOWN_LINES lines; the rest folded behind "N more lines". */
export function foldedOutput(text: string, cls = "output"): SafeHtml {
  // A final line feed ends the last line; it does not start another.
  const lines = (text.endsWith("\n") ? text.slice(0, -1) : text).split("\n");
  if (lines.length <= SHOWN_LINES + 2) return html`<pre class="${cls}">${text}</pre>`;
  const head = lines.slice(0, SHOWN_LINES).join("\n");
  const rest = lines.slice(SHOWN_LINES).join("\n");
  const hidden = lines.length - SHOWN_LINES;
  return html`<pre class="${cls}">${head}</pre><details class="more"><summary>${hidden} more lines</summary><pre class="${cls}">${rest}</pre></details>`;
}

type DiffLineKind = "add" | "del" | "ctx" | "skip" | "hunk" | "file";

/**
 * The kind of each line of an edit's diff: the numbered display form (`+12 text`, `-12 text`,
 * ` 12 text`, `   ...`) or, in sessions pion wrote before it had that form, a unified diff.
 */
function diffLineKinds(diff: string): { kind: DiffLineKind; text: string }[] {
  const lines = diff.replace(/\n$/, "").split("\n");
  const unified = lines[0]?.startsWith("--- ") === true && lines[1]?.startsWith("+++ ") === true;
  return lines.map((text, i) => {
    if (unified && i < 2) return { kind: "file", text };
    if (unified && text.startsWith("@@")) return { kind: "hunk", text };
    if (text.startsWith("+")) return { kind: "add", text };
    if (text.startsWith("-")) return { kind: "del", text };
    if (/^\s+\.\.\.$/.test(text)) return { kind: "skip", text };
    return { kind: "ctx", text };
  });
}

/** A diff with a class per line (`add`, `del`, `ctx`, `skip`, `hunk`) for its colours. */
export function diffView(diff: string): SafeHtml {
  const rows = diffLineKinds(diff).map(({ kind, text }) => html`<span class="dl ${kind}">${text}</span>\n`);
  return html`<pre class="diff">${rows}</pre>`;
}

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** A tool call: the tool, what it is about, and for a write the new file as a diff. */
export function toolCallView(call: ToolCall, argsJson: (v: unknown) => SafeHtml): SafeHtml {
  const args = (call.arguments ?? {}) as Record<string, unknown>;
  const head = html`<div class="tool-name">${call.name} <span class="target">${toolTarget(args)}</span><span class="id">${call.id}</span></div>`;
  if (call.name === "bash" && str(args.command) !== undefined) return html`<div class="tool-call bash-call">${head}<pre class="command">$ ${str(args.command)}</pre></div>`;
  if (call.name === "write" && str(args.content) !== undefined) {
    const shown = editDiff("", str(args.content)!).diff;
    return html`<div class="tool-call">${head}${shown ? diffView(shown) : html`<div class="note">(empty file)</div>`}</div>`;
  }
  if (call.name === "edit" && Array.isArray(args.edits)) {
    const n = args.edits.length;
    return html`<div class="tool-call">${head}<details class="args"><summary>${n} ${n === 1 ? "edit" : "edits"}</summary>${argsJson(args.edits)}</details></div>`;
  }
  return html`<div class="tool-call">${head}<details class="args"><summary>Arguments</summary>${argsJson(call.arguments)}</details></div>`;
}

/** A tool result's body: an edit's diff, a command's output folded, or the text. */
export function toolResultBody(m: ToolResultMessage): SafeHtml {
  const text = (Array.isArray(m.content) ? m.content : []).flatMap((b) => (b.type === "text" ? [b.text] : [])).join("\n");
  const details = m.details as { diff?: unknown } | undefined;
  if (m.toolName === "edit" && !m.isError && typeof details?.diff === "string" && details.diff) {
    return html`<div class="result-text">${text}</div>${diffView(details.diff)}`;
  }
  if (!text) return html`<div class="note">(no text output)</div>`;
  return foldedOutput(text, m.isError ? "output error-output" : "output");
}
