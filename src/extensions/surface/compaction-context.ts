/**
 * The reference's session-entry helpers over pion's own: the context a branch gives
 * (`buildSessionContext`, `buildSessionProjection`, `buildContextEntries`, one entry's messages),
 * reading and migrating entries (`parseSessionEntries`, `migrateSessionEntries`) and
 * `convertToLlm`. They take the reference's entries as written (system-role messages, a
 * compaction's `systemMessage`, context edits that replace a message's content) and answer in
 * the reference's shapes.
 */
import type { AgentMessage, Entry } from "../../store/entries.ts";
import { pathTo } from "../../store/entries.ts";
import { migrateV1, migrateV2, type Loose } from "../../store/jsonl-lines.ts";
import { contextEntries, toLlmMessages } from "../../session/context.ts";
import { editedMessage, entryMessage } from "../../session/cut-point.ts";

type AnyEntry = Loose & { type: string; id: string; parentId: string | null };
type AnyMessage = Loose & { role: string };
type ContextEdit = AnyEntry & { targetId: string; replacement: { content: unknown } | null };

/** One JSON entry a line, blank and malformed lines left out. */
export function parseSessionEntries(content: string): unknown[] {
  const out: unknown[] = [];
  for (const line of content.trim().split("\n")) {
    if (!line.trim()) continue;
    try {
      out.push(JSON.parse(line));
    } catch {
      // the reference skips a line that is not JSON
    }
  }
  return out;
}

/** Brings a file's records (header included) to v3 in place, as pion's import does. */
export function migrateSessionEntries(entries: Loose[]): void {
  const header = entries.find((e) => e.type === "session");
  const version = typeof header?.version === "number" ? header.version : 1;
  if (version >= 3) return;
  if (version < 2) {
    const rest = entries.filter((e) => e !== header);
    const records = entries.map((value, i) => ({ line: i, value, text: "" }));
    const migrated = migrateV1(records.filter((r) => r.value !== header), records.find((r) => r.value === header) ?? { line: -1, value: {}, text: "" }, "session entries");
    rest.forEach((e, i) => {
      for (const key of Object.keys(e)) delete e[key];
      Object.assign(e, migrated[i]);
    });
  }
  for (const e of entries) if (e !== header) migrateV2(e);
  if (header) header.version = 3;
}

/** The newest compaction entry of `entries`, or null. */
export function getLatestCompactionEntry(entries: readonly AnyEntry[]): AnyEntry | null {
  for (let i = entries.length - 1; i >= 0; i--) if (entries[i]!.type === "compaction") return entries[i]!;
  return null;
}

const time = (timestamp: unknown) => new Date(timestamp as string).getTime();

/** What one entry puts in the context: its message, custom message, branch summary, or a compaction's (system message and) summary. */
export function sessionEntryToContextMessages(entry: AnyEntry): AnyMessage[] {
  if (entry.type === "message") {
    const m = entry.message as AnyMessage;
    // Files are read unchecked: a message without content counts as empty.
    if (m.content == null && m.role === "system") return [{ ...m, content: "" }];
    if (m.content == null && (m.role === "user" || m.role === "assistant" || m.role === "toolResult")) return [{ ...m, content: [] }];
    return [m];
  }
  if (entry.type === "compaction") {
    const summary = { role: "compactionSummary", summary: entry.summary, tokensBefore: entry.tokensBefore, timestamp: time(entry.timestamp) };
    return entry.systemMessage ? [entry.systemMessage as AnyMessage, summary] : [summary];
  }
  if (entry.type === "branch_summary" && !entry.summary) return [];
  const m = entryMessage({ ...entry, ...(entry.type === "custom_message" ? { content: entry.content ?? [] } : {}) } as unknown as Entry);
  return m ? [{ ...(m as unknown as AnyMessage), timestamp: time(entry.timestamp) }] : [];
}

/** The path to `leafId` (the last entry when it is undefined or unknown; none for null). */
function sessionPath(entries: readonly AnyEntry[], leafId: string | null | undefined, byId?: ReadonlyMap<string, AnyEntry>): AnyEntry[] {
  if (leafId === null) return [];
  const index = byId ?? new Map(entries.map((e) => [e.id, e]));
  const leaf = (leafId ? index.get(leafId) : undefined) ?? entries.at(-1);
  return leaf ? (pathTo(index as unknown as ReadonlyMap<string, Entry>, leaf.id) as unknown as AnyEntry[]) : [];
}

/** The entries that make the branch's context: the newest compaction, what it kept, what came after. */
export function buildContextEntries(entries: readonly AnyEntry[], leafId?: string | null, byId?: ReadonlyMap<string, AnyEntry>): AnyEntry[] {
  return contextEntries(sessionPath(entries, leafId, byId) as unknown as Entry[]) as unknown as AnyEntry[];
}

/** One context entry's messages with its newest edit applied: removed, or its content replaced. */
export function projectEntry(entry: AnyEntry, edit: ContextEdit | undefined): AnyMessage[] {
  const messages = sessionEntryToContextMessages(entry);
  if (!edit) return messages;
  return messages.flatMap((m) => (editedMessage(m as unknown as AgentMessage, edit.replacement) ?? []) as unknown as AnyMessage[]);
}

/** The model and thinking level the branch last set (an assistant message names its model too). */
function branchSettings(path: readonly AnyEntry[]) {
  let thinkingLevel: unknown = "off";
  let model: { provider: unknown; modelId: unknown } | null = null;
  for (const e of path) {
    if (e.type === "thinking_level_change") thinkingLevel = e.thinkingLevel;
    else if (e.type === "model_change") model = { provider: e.provider, modelId: e.modelId };
    else if (e.type === "message" && (e.message as AnyMessage).role === "assistant") {
      const m = e.message as AnyMessage;
      model = { provider: m.provider, modelId: m.model };
    }
  }
  return { thinkingLevel, model };
}

/** The context with each part's source entry; only the newest compaction contributes a summary. */
export function buildSessionProjection(entries: readonly AnyEntry[], leafId?: string | null, byId?: ReadonlyMap<string, AnyEntry>) {
  const context = buildContextEntries(entries, leafId, byId);
  const edits = new Map<string, ContextEdit>();
  for (const e of context) if (e.type === "context_edit") edits.set((e as ContextEdit).targetId, e as ContextEdit);
  const projected = context.map((sourceEntry, i) => ({
    sourceEntry,
    messages: sourceEntry.type === "compaction" && i > 0 ? [] : projectEntry(sourceEntry, edits.get(sourceEntry.id)),
  }));
  return { entries: projected, messages: projected.flatMap((p) => p.messages), ...branchSettings(sessionPath(entries, leafId, byId)) };
}

/** The messages, thinking level and model of the branch ending at `leafId`. */
export function buildSessionContext(entries: readonly AnyEntry[], leafId?: string | null, byId?: ReadonlyMap<string, AnyEntry>) {
  const { messages, thinkingLevel, model } = buildSessionProjection(entries, leafId, byId);
  return { messages, thinkingLevel, model };
}

/**
 * The session's messages as a provider takes them (pion's conversion: bash runs, custom messages
 * and summaries become user text). A system-role message of the reference's passes unchanged.
 */
export function convertToLlm(messages: readonly AgentMessage[]): unknown[] {
  const out: unknown[] = [];
  for (const m of messages) {
    if ((m as { role: string }).role === "system") out.push(m);
    else out.push(...toLlmMessages([m]));
  }
  return out;
}

export const contextExports = {
  parseSessionEntries,
  migrateSessionEntries,
  getLatestCompactionEntry,
  sessionEntryToContextMessages,
  buildContextEntries,
  buildSessionProjection,
  buildSessionContext,
  convertToLlm,
};
