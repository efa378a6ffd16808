import type { Message, TextContent, UserMessage } from "../providers/types.ts";
import type { AgentMessage, CompactionEntry, Entry } from "../store/entries.ts";
import { editedMessage, entryMessage } from "./cut-point.ts";

/**
 * Messages the model should see for a branch (root first). Pure and cheap: called before
 * every model request. Entries before the newest compaction's `firstKeptEntryId` are
 * replaced by its summary.
 */
export function buildContext(path: readonly Entry[]): AgentMessage[] {
  const edits = new Map<string, object | null>();
  for (const e of path) if (e.type === "context_edit") edits.set(e.targetId, e.replacement);
  const out = collect(path);
  if (edits.size === 0) return out.map((x) => x.message);
  const kept: AgentMessage[] = [];
  for (const x of out) {
    const edit = x.id === undefined ? undefined : edits.get(x.id);
    const m = edit === undefined ? x.message : editedMessage(x.message, edit);
    if (m) kept.push(m);
  }
  return kept;
}

/**
 * `linear` when `path` (root to leaf) is every entry of the session in append order (`all`): the
 * tree is one chain. `plain` when it also holds no compaction, summary, custom message or edit:
 * the context is then its `message` entries but system-role ones, in append order, and can be
 * read straight from the store's message rows (SessionCache.plainContext).
 */
export function linearity(path: readonly Entry[], all: Iterable<Entry>): { linear?: true; plainContext?: true } {
  let i = 0;
  let plain = true;
  for (const e of all) {
    if (path[i++] !== e) return {};
    if (SHAPING_ENTRIES.has(e.type)) plain = false;
  }
  if (i !== path.length) return {};
  return plain ? { linear: true, plainContext: true } : { linear: true };
}
/** Entry kinds that make the context other than the branch's messages. */
export const SHAPING_ENTRIES: ReadonlySet<string> = new Set(["compaction", "custom_message", "branch_summary", "context_edit"]);

type Collected = { id?: string; message: AgentMessage };

function collect(path: readonly Entry[]): Collected[] {
  const out: Collected[] = [];
  contextEntries(path).forEach((e, i) => {
    if (e.type === "compaction") {
      // Only the newest compaction (first) speaks; an older one kept verbatim stays silent.
      if (i === 0) out.push({ message: { role: "compactionSummary", summary: e.summary, tokensBefore: e.tokensBefore, timestamp: Date.parse(e.timestamp) || Date.now() } });
      return;
    }
    // A system-role message only exists in sessions imported from the reference agent.
    if (e.type === "message" && (e.message as { role: string }).role === "system") return;
    // An empty branch summary says nothing; the reference leaves it out too.
    if (e.type === "branch_summary" && !e.summary) return;
    const message = entryMessage(e);
    if (message) out.push({ id: e.id, message });
  });
  return out;
}

/**
 * The entries of a branch that make its context, in order: without a compaction the whole path;
 * otherwise the newest compaction first, then the entries it kept (from `firstKeptEntryId`, its
 * system-role messages left out: the summary replaces them), then everything after it.
 */
export function contextEntries(path: readonly Entry[]): Entry[] {
  let compactionAt = -1;
  for (let i = path.length - 1; i >= 0; i--) {
    if (path[i]!.type === "compaction") {
      compactionAt = i;
      break;
    }
  }
  if (compactionAt < 0) return [...path];
  const c = path[compactionAt] as CompactionEntry;
  const out: Entry[] = [c];
  const kept = path.findIndex((e) => e.id === c.firstKeptEntryId);
  // kept entries sit before the compaction entry on the path; then everything after it
  if (kept >= 0 && kept < compactionAt) {
    for (let i = kept; i < compactionAt; i++) {
      const e = path[i]!;
      if (!(e.type === "message" && (e.message as { role: string }).role === "system")) out.push(e);
    }
  }
  for (let i = compactionAt + 1; i < path.length; i++) out.push(path[i]!);
  return out;
}

const userText = (text: string, timestamp: number): UserMessage => ({ role: "user", content: [{ type: "text", text }], timestamp });

/** The coding-agent roles become plain user messages for the provider. */
export function toLlmMessages(messages: readonly AgentMessage[]): Message[] {
  const out: Message[] = [];
  for (const m of messages) {
    switch (m.role) {
      case "user":
      case "assistant":
      case "toolResult":
        out.push(m);
        break;
      case "bashExecution":
        if (!m.excludeFromContext) out.push(userText(bashExecutionText(m.command, m.output, m.exitCode, m.cancelled, m.truncated, m.fullOutputPath), m.timestamp));
        break;
      case "custom":
        out.push({ role: "user", content: typeof m.content === "string" ? [{ type: "text", text: m.content }] : m.content, timestamp: m.timestamp });
        break;
      case "compactionSummary":
        out.push(userText(`The conversation so far was compacted. Summary of the earlier part:\n\n<summary>\n${m.summary}\n</summary>`, m.timestamp));
        break;
      case "branchSummary":
        out.push(userText(`Summary of a branch of this conversation that was left:\n\n<summary>\n${m.summary}\n</summary>`, m.timestamp));
        break;
    }
  }
  return out;
}

export function bashExecutionText(
  command: string,
  output: string,
  exitCode: number | undefined,
  cancelled: boolean,
  truncated: boolean,
  fullOutputPath?: string,
): string {
  let text = `Ran \`${command}\`\n`;
  text += output ? `\`\`\`\n${output}\n\`\`\`` : "(no output)";
  if (cancelled) text += "\n\n(command cancelled)";
  else if (exitCode !== undefined && exitCode !== 0) text += `\n\nCommand exited with code ${exitCode}`;
  if (truncated && fullOutputPath) text += `\n\n[Output truncated. Full output: ${fullOutputPath}]`;
  return text;
}

/** The text of the newest assistant message that has any, or null. */
export function lastAssistantText(messages: readonly AgentMessage[]): string | null {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]!;
    if (m.role !== "assistant") continue;
    const text = m.content.filter((c): c is TextContent => c.type === "text").map((c) => c.text).join("");
    if (text) return text;
  }
  return null;
}
