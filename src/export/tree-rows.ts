import type { Entry, LabelInfo } from "../store/entries.ts";
import { buildTree, contentText, type TreeNode } from "../store/entries.ts";

/**
 * One line of the page's sidebar tree: every entry of every branch, in depth-first order, one
 * level deeper under each fork. Plain data: the page's script draws the rows it shows.
 */
export interface TreeRow {
  id: string;
  /** The parent's id (null for a root): the script walks up to show an entry's branch. */
  p: string | null;
  /** Indentation: how many forks lie above the entry. */
  d: number;
  /** user, assistant, tool, bash, compaction, branch, custom, setting, info. */
  k: string;
  /** One line of text: the first line of the message, or the tool and its target. */
  t: string;
  label?: string;
  /** Set on the session's current leaf. */
  leaf?: 1;
  /** The filters' facts: 1 on entries the default filter hides (settings, assistant messages that only call tools). */
  quiet?: 1;
}

const firstLine = (text: string, max = 120): string => {
  const line = text.trim().split("\n", 1)[0] ?? "";
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** The argument that says what a tool call is about: a path, a command, a pattern. */
export function toolTarget(args: unknown): string {
  if (!args || typeof args !== "object") return "";
  const a = args as Record<string, unknown>;
  for (const key of ["path", "command", "pattern", "query", "url", "file_path"]) {
    if (typeof a[key] === "string") return firstLine(a[key] as string, 100);
  }
  return "";
}

function describe(e: Entry): { k: string; t: string; quiet?: boolean } {
  switch (e.type) {
    case "message": {
      const m = e.message;
      switch (m.role) {
        case "user":
          return { k: "user", t: firstLine(contentText(m.content)) || "(image)" };
        case "assistant": {
          const text = firstLine(contentText(m.content));
          const calls = (Array.isArray(m.content) ? m.content : []).filter((b) => b.type === "toolCall");
          const failed = m.stopReason === "error" || m.stopReason === "aborted";
          if (text || failed) return { k: "assistant", t: text || `(${m.stopReason}) ${firstLine(m.errorMessage ?? "")}` };
          const first = calls[0];
          return { k: "assistant", t: first ? `→ ${first.name} ${toolTarget(first.arguments)}`.trim() : "(no text)", quiet: true };
        }
        case "toolResult":
          return { k: "tool", t: `${m.toolName}${m.isError ? " (failed)" : ""}: ${firstLine(contentText(m.content), 80)}` };
        case "bashExecution":
          return { k: "bash", t: `$ ${firstLine(m.command)}` };
        case "branchSummary":
          return { k: "branch", t: `Branch summary: ${firstLine(m.summary)}` };
        case "compactionSummary":
          return { k: "compaction", t: `Compaction: ${firstLine(m.summary)}` };
        case "custom":
          return { k: "custom", t: `${m.customType}: ${firstLine(contentText(m.content))}` };
        default:
          return (m as { role: string }).role === "system" ? { k: "setting", t: "System prompt", quiet: true } : { k: "info", t: `message (${(m as { role: string }).role})` };
      }
    }
    case "compaction":
      return { k: "compaction", t: `Compaction: ${firstLine(e.summary)}` };
    case "branch_summary":
      return { k: "branch", t: `Branch summary: ${firstLine(e.summary)}` };
    case "custom_message":
      return { k: "custom", t: `${e.customType}: ${firstLine(contentText(e.content))}` };
    case "model_change":
      return { k: "setting", t: `Model: ${e.provider}/${e.modelId}`, quiet: true };
    case "thinking_level_change":
      return { k: "setting", t: `Thinking: ${e.thinkingLevel}`, quiet: true };
    case "label":
      return { k: "setting", t: e.label ? `Label: ${e.label}` : "Label cleared", quiet: true };
    case "custom":
      return { k: "setting", t: `Custom: ${e.customType}`, quiet: true };
    case "context_edit":
      return { k: "setting", t: `Context edit: ${e.targetId}`, quiet: true };
    case "session_info":
      return { k: "info", t: e.name ? `Named: ${e.name}` : "Session info", quiet: true };
    case "permission":
      return { k: "info", t: `${e.decision === "allow" ? "Allowed" : "Denied"} ${e.toolName}`, quiet: true };
    default:
      return { k: "info", t: (e as { type: string }).type };
  }
}

/** The sidebar rows of a session: every entry, depth-first, children oldest first. */
export function treeRows(entries: readonly Entry[], labels: ReadonlyMap<string, LabelInfo>, leafId: string | null): TreeRow[] {
  const rows: TreeRow[] = [];
  const roots = buildTree(entries, labels);
  // Explicit stack: a linear session is as deep as it is long.
  const stack: { node: TreeNode; depth: number }[] = roots
    .map((node) => ({ node, depth: roots.length > 1 ? 1 : 0 }))
    .reverse();
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { node, depth } = item;
    const e = node.entry;
    const d = describe(e);
    const row: TreeRow = { id: e.id, p: e.parentId, d: depth, k: d.k, t: d.t };
    if (node.label) row.label = node.label;
    if (e.id === leafId) row.leaf = 1;
    if (d.quiet) row.quiet = 1;
    rows.push(row);
    const fork = node.children.length > 1;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push({ node: node.children[i]!, depth: fork ? depth + 1 : depth });
  }
  return rows;
}
