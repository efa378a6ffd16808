import type { AssistantMessage, ImageContent, Message, TextContent, Usage } from "../providers/types.ts";
import { shortId } from "../util/id.ts";
import type { JsonPiece } from "../util/json-pieces.ts";
import type { ChainPage } from "./store.ts";

/** A shell command the host ran with the `bash` RPC command. */
export interface BashExecutionMessage {
  role: "bashExecution";
  command: string;
  output: string;
  exitCode: number | undefined;
  cancelled: boolean;
  truncated: boolean;
  fullOutputPath?: string;
  excludeFromContext?: boolean;
  timestamp: number;
}

export interface CustomMessage {
  role: "custom";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
  timestamp: number;
}

export interface BranchSummaryMessage {
  role: "branchSummary";
  summary: string;
  fromId: string;
  timestamp: number;
}

export interface CompactionSummaryMessage {
  role: "compactionSummary";
  summary: string;
  tokensBefore: number;
  timestamp: number;
}

/** Every message the session keeps; only `Message` reaches a provider unconverted. */
export type AgentMessage = Message | BashExecutionMessage | CustomMessage | BranchSummaryMessage | CompactionSummaryMessage;

export interface SessionHeader {
  type: "session";
  version: 3;
  id: string;
  timestamp: string;
  cwd: string;
  parentSession?: string;
}

interface EntryBase {
  id: string;
  parentId: string | null;
  timestamp: string;
}

export interface MessageEntry extends EntryBase {
  type: "message";
  message: AgentMessage;
}
export interface ModelChangeEntry extends EntryBase {
  type: "model_change";
  provider: string;
  modelId: string;
}
export interface ThinkingLevelChangeEntry extends EntryBase {
  type: "thinking_level_change";
  thinkingLevel: string;
}
export interface CompactionEntry extends EntryBase {
  type: "compaction";
  summary: string;
  firstKeptEntryId: string;
  tokensBefore: number;
  details?: unknown;
  fromHook?: boolean;
}
export interface BranchSummaryEntry extends EntryBase {
  type: "branch_summary";
  fromId: string;
  summary: string;
  details?: unknown;
  /** The summary request's usage (the reference counts it in the session's totals). */
  usage?: Usage;
  fromHook?: boolean;
}
export interface CustomEntry extends EntryBase {
  type: "custom";
  customType: string;
  data?: unknown;
}
export interface CustomMessageEntry extends EntryBase {
  type: "custom_message";
  customType: string;
  content: string | (TextContent | ImageContent)[];
  display: boolean;
  details?: unknown;
}
export interface LabelEntry extends EntryBase {
  type: "label";
  targetId: string;
  label: string | undefined;
}
export interface SessionInfoEntry extends EntryBase {
  type: "session_info";
  name?: string;
}

/**
 * Replaces the content of (or with null, removes) an earlier message in the context; pion writes
 * null when a failed attempt is retried. The reference's replacement is `{ content }` only: its
 * content replaces the target's, the target keeps its role and other fields (editedMessage).
 */
export interface ContextEditEntry extends EntryBase {
  type: "context_edit";
  targetId: string;
  replacement: AgentMessage | { content: CustomMessage["content"] | AssistantMessage["content"] } | null;
}

/**
 * A permission decision about one tool call (pion's own entry kind): who decided, what,
 * when (the entry's timestamp). Written only for real decisions: a refusal, an answer
 * to a request, or an allow rule that spared a request; the mode's default allow is not one.
 */
export interface PermissionEntry extends EntryBase {
  type: "permission";
  toolCallId: string;
  toolName: string;
  /** The bash command or the path as the call gave it, when the rules looked at one. */
  subject?: string;
  decision: "allow" | "deny";
  by: "mode" | "rule" | "host" | "timeout" | "abort" | "unavailable";
  mode: string;
  /** The rule that decided or asked, as `kind pattern` (`deny bash(rm *)`). */
  rule?: string;
  /** Why: the text the model got for a refusal, or why approval was asked. */
  reason: string;
  /** The host's message with its answer. */
  message?: string;
  /** Allow rules an `allow_always` answer added for the rest of the session. */
  addedRules?: string[];
}

export type Entry =
  | ContextEditEntry
  | PermissionEntry
  | MessageEntry
  | ModelChangeEntry
  | ThinkingLevelChangeEntry
  | CompactionEntry
  | BranchSummaryEntry
  | CustomEntry
  | CustomMessageEntry
  | LabelEntry
  | SessionInfoEntry;

/** Entries on the path from the root to `leafId`, root first. Iterative: sessions can be 100k deep. */
export function pathTo(byId: ReadonlyMap<string, Entry>, leafId: string | null): Entry[] {
  const path: Entry[] = [];
  const seen = new Set<string>();
  for (let e = leafId ? byId.get(leafId) : undefined; e && !seen.has(e.id); e = e.parentId ? byId.get(e.parentId) : undefined) {
    seen.add(e.id);
    path.push(e);
  }
  return path.reverse();
}

/** 8 lowercase hex chars not in `existing` (ids are unique per session). */
export function newEntryId(existing: ReadonlySet<string>): string {
  return shortId(existing);
}

export interface LabelInfo {
  label: string;
  timestamp: string;
}

/** Current label per target id: the latest `label` entry wins, an empty label clears. */
export function collectLabels(entries: readonly Entry[]): Map<string, LabelInfo> {
  const labels = new Map<string, LabelInfo>();
  for (const e of entries) {
    if (e.type !== "label") continue;
    if (e.label) labels.set(e.targetId, { label: e.label, timestamp: e.timestamp });
    else labels.delete(e.targetId);
  }
  return labels;
}

/** What the tree needs of an entry: a parsed Entry, or a stored row with its JSON body. */
export interface TreeItem {
  id: string;
  parentId: string | null;
  timestamp: string;
}

export interface TreeNode<T extends TreeItem = Entry> {
  entry: T;
  children: TreeNode<T>[];
  label?: string;
  labelTimestamp?: string;
}

/**
 * The session as a forest. Roots are entries without a parent and orphans whose parent is
 * missing; children are ordered oldest first. Iterative: a linear session is as deep as it is long.
 */
export function buildTree<T extends TreeItem = Entry>(
  entries: readonly T[],
  labels: ReadonlyMap<string, LabelInfo> = collectLabels(entries as unknown as readonly Entry[]),
): TreeNode<T>[] {
  const nodes = new Map<string, TreeNode<T>>();
  for (const entry of entries) {
    const node: TreeNode<T> = { entry, children: [] };
    const l = labels.get(entry.id);
    if (l) {
      node.label = l.label;
      node.labelTimestamp = l.timestamp;
    }
    nodes.set(entry.id, node);
  }
  const roots: TreeNode<T>[] = [];
  for (const entry of entries) {
    const node = nodes.get(entry.id);
    if (!node || node.entry !== entry) continue; // a duplicate id: the later entry won the map
    const parent = entry.parentId !== null && entry.parentId !== entry.id ? nodes.get(entry.parentId) : undefined;
    (parent ? parent.children : roots).push(node);
  }
  const time = (n: TreeNode<T>) => Date.parse(n.entry.timestamp) || 0;
  const stack = [...roots];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.children.length > 1) node.children.sort((a, b) => time(a) - time(b));
    for (const child of node.children) stack.push(child);
  }
  return roots;
}

/**
 * JSON text of `nodes` in pieces, together equal to `JSON.stringify(nodes)`, but with an explicit
 * stack, because the engine's JSON.stringify throws on trees deeper than about 20k levels, and
 * produced as they are asked for, so a large tree is never one string.
 */
export function* serializeTree<T extends TreeItem = Entry>(nodes: readonly TreeNode<T>[], entryJson: (e: T) => string = (e) => JSON.stringify(e)): Generator<string> {
  interface Frame {
    node: TreeNode<T> | undefined;
    children: readonly TreeNode<T>[];
    next: number;
  }
  let out: string[] = ["["];
  const stack: Frame[] = [{ node: undefined, children: nodes, next: 0 }];
  while (stack.length > 0) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.children.length) {
      if (top.next > 0) out.push(",");
      const child = top.children[top.next++]!;
      out.push('{"entry":', entryJson(child.entry), ',"children":[');
      stack.push({ node: child, children: child.children, next: 0 });
      if (out.length >= 3000) {
        yield out.join("");
        out = [];
      }
      continue;
    }
    stack.pop();
    out.push("]");
    const n = top.node;
    if (!n) continue;
    if (n.label !== undefined) out.push(',"label":', JSON.stringify(n.label));
    if (n.labelTimestamp !== undefined) out.push(',"labelTimestamp":', JSON.stringify(n.labelTimestamp));
    out.push("}");
  }
  yield out.join("");
}

/**
 * The JSON of a linear session's tree (every entry the child of the one before it) from its rows
 * in append order (ChainPages: each page's nodes opened, in bytes), in pieces, as each page comes:
 * the same text `serializeTree(buildTree(…))` gives, without holding the entries. Labels are known
 * by the end, where the nodes close.
 */
export function* serializeChain(pages: Iterable<ChainPage>): Generator<JsonPiece> {
  const ids: string[] = [];
  const labels: Entry[] = [];
  yield "[";
  for (const page of pages) {
    yield page.openings;
    for (const id of page.ids) ids.push(id);
    for (const body of page.labels) labels.push(JSON.parse(body) as Entry);
  }
  let out: string[] = [];
  const byTarget = collectLabels(labels);
  for (let i = ids.length - 1; i >= 0; i--) {
    out.push("]");
    const l = byTarget.get(ids[i]!);
    if (l) out.push(',"label":', JSON.stringify(l.label), ',"labelTimestamp":', JSON.stringify(l.timestamp));
    out.push("}");
    if (out.length >= 3000) {
      yield out.join("");
      out = [];
    }
  }
  out.push("]");
  yield out.join("");
}

/** Text blocks of a message's content joined by `separator` (a space, as session lists show it). */
export function contentText(content: unknown, separator = " "): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  const parts: string[] = [];
  for (const block of content as unknown[]) {
    if (typeof block !== "object" || block === null || !("type" in block) || block.type !== "text") continue;
    if ("text" in block && typeof block.text === "string") parts.push(block.text);
  }
  return parts.join(separator);
}

/** What full-text search indexes for an entry: user/assistant text, bash command and output. */
export function searchableText(entry: Entry): { role: string; text: string } | undefined {
  if (entry.type !== "message") return undefined;
  const m = entry.message;
  if (m.role === "user" || m.role === "assistant") {
    const text = contentText(m.content);
    return text ? { role: m.role, text } : undefined;
  }
  if (m.role === "bashExecution") return { role: m.role, text: `${m.command}\n${m.output}` };
  return undefined;
}

/** The text of a user message entry, or undefined for anything else or an empty text. */
export function userText(entry: Entry): string | undefined {
  if (entry.type !== "message" || entry.message.role !== "user") return undefined;
  return contentText(entry.message.content) || undefined;
}
