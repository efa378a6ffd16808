/**
 * pi-ai's transcript helpers: a conversation whose system messages carry the prompt and the tool
 * set, the leading one declaring them and each later one changing them (more text, sections
 * replaced or removed by name, tools added or removed). Replaying them in order gives the current
 * prompt and tools. Pure functions over plain data; pion's own requests keep the prompt and tools
 * beside the messages, so pion uses these for extensions (pi-ai's names) and to count the system
 * messages of an imported reference session (stats.ts).
 */
import { contentText as joinText } from "../store/entries.ts";

interface Tool {
  name: string;
  description: string;
  parameters: object;
  constrainedSampling?: unknown;
}

interface SystemMessage {
  role: "system";
  content: string | { type: "text"; text: string }[];
  sections?: Record<string, string | null>;
  toolsAdded?: Tool[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

type Messages = readonly { role: string }[];
type Transcript<M extends { role: string } = { role: string }> = { messages: M[] };

const isSystem = (m: { role: string }): m is SystemMessage => m.role === "system";

/** Text blocks joined by `separator` (a newline unless given); image, thinking and tool-call blocks are left out. */
export const contentText = (content: unknown, separator = "\n"): string => joinText(content, separator);

/** A system message as one prompt: its text, then each section, blank-line separated, empty parts left out. */
export function getSystemMessageText(message: SystemMessage): string {
  const parts = [contentText(message.content)];
  for (const text of Object.values(message.sections ?? {})) if (text !== null) parts.push(text);
  return parts.filter((p) => p.length > 0).join("\n\n");
}

/** A later system message as text for APIs that take one mid-conversation: its text, then each section change by name. */
export function renderSystemMessageUpdate(message: SystemMessage): string {
  const text = contentText(message.content);
  const parts = text.length > 0 ? [text] : [];
  for (const [name, value] of Object.entries(message.sections ?? {})) {
    parts.push(value === null ? `Removed system prompt section "${name}".` : `Updated system prompt section "${name}":\n\n${value}`);
  }
  return parts.join("\n\n");
}

// The leading system message is built where pion's requests become transcripts (providers/transcript.ts).
export { createInitialSystemMessage, normalizeContext } from "../providers/transcript.ts";

export function getInitialSystemMessage(messages: Messages): SystemMessage | undefined {
  const first = messages[0];
  return first && isSystem(first) ? first : undefined;
}

export const withoutInitialSystemMessage = <M extends { role: string }>(messages: M[]): M[] => (getInitialSystemMessage(messages) ? messages.slice(1) : messages);

/** The tool set after every system message's removals, then additions, in order (an addition replaces a tool of its name). */
export function getCurrentTools(messages: Messages): Tool[] {
  const tools = new Map<string, Tool>();
  for (const m of messages) {
    if (!isSystem(m)) continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.values()];
}

/** Every system message replayed into one: the texts joined, sections patched by name, the current tools, the first one's timestamp. */
export function getCurrentSystemMessage(messages: Messages): SystemMessage | undefined {
  const texts: string[] = [];
  const sections = new Map<string, string>();
  let timestamp: number | undefined;
  for (const m of messages) {
    if (!isSystem(m)) continue;
    timestamp ??= m.timestamp;
    const text = contentText(m.content);
    if (text.length > 0) texts.push(text);
    for (const [name, value] of Object.entries(m.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = getCurrentTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: texts.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
}

export function getCurrentSystemPrompt(messages: Messages): string {
  const current = getCurrentSystemMessage(messages);
  return current ? getSystemMessageText(current) : "";
}

/** The transcript for an API without mid-conversation system messages: the replayed one first, no other. */
export function collapseSystemMessages<M extends { role: string }>(context: Transcript<M>): Transcript<M | SystemMessage> {
  const head = getCurrentSystemMessage(context.messages);
  const rest = context.messages.filter((m) => m.role !== "system");
  return { messages: head ? [head, ...rest] : rest };
}

export const resolveTranscript = <M extends { role: string }>(context: Transcript<M>, supportsMidConvoSystemMessages: boolean | undefined): Transcript<M | SystemMessage> =>
  supportsMidConvoSystemMessages ? context : collapseSystemMessages(context);

/** What a tool declares to the model, as plain JSON (functions, schema kind marks and undefined fields dropped). */
export function toToolDeclaration(tool: Tool): Tool {
  return {
    name: tool.name,
    description: tool.description,
    parameters: JSON.parse(JSON.stringify(tool.parameters)) as object,
    ...(tool.constrainedSampling === undefined ? {} : { constrainedSampling: tool.constrainedSampling }),
  };
}

/** Equal declarations serialize equally: toToolDeclaration builds both with the same key order. */
export const declarationsEqual = (a: Tool, b: Tool): boolean => JSON.stringify(toToolDeclaration(a)) === JSON.stringify(toToolDeclaration(b));

/** From one tool set to another; a tool whose declaration changed is removed and added again. */
export function getToolStateChanges(previous: readonly Tool[], current: readonly Tool[]): { toolsAdded: Tool[]; toolsRemoved: { name: string }[] } {
  const before = new Map(previous.map((t) => [t.name, t]));
  const after = new Map(current.map((t) => [t.name, t]));
  const same = (a: Tool | undefined, b: Tool) => a !== undefined && declarationsEqual(a, b);
  return {
    toolsAdded: current.filter((t) => !same(before.get(t.name), t)).map(toToolDeclaration),
    toolsRemoved: previous.filter((t) => !same(after.get(t.name), t)).map((t) => ({ name: t.name })),
  };
}

/** The last declaration of every tool name the system messages declare, in the order names first appear. */
export function getDeclaredTools(messages: Messages): Tool[] {
  const declared = new Map<string, Tool>();
  for (const m of messages) if (isSystem(m)) for (const t of m.toolsAdded ?? []) declared.set(t.name, t);
  return [...declared.values()];
}

/** Whether a tool name was declared again with another declaration. */
export function hasToolRedefinitions(messages: Messages): boolean {
  const declared = new Map<string, Tool>();
  for (const m of messages) {
    if (!isSystem(m)) continue;
    for (const t of m.toolsAdded ?? []) {
      const earlier = declared.get(t.name);
      if (earlier !== undefined && !declarationsEqual(earlier, t)) return true;
      declared.set(t.name, t);
    }
  }
  return false;
}

/**
 * Index (among the system messages) of the last one that removes a tool or declares a name
 * declared before, even identically or after a removal; -1 when every change only adds.
 */
function lastNonAdditiveChange(systemMessages: readonly SystemMessage[]): number {
  const seen = new Set<string>();
  let last = -1;
  systemMessages.forEach((m, i) => {
    if ((m.toolsRemoved?.length ?? 0) > 0) last = i;
    for (const t of m.toolsAdded ?? []) {
      if (seen.has(t.name)) last = i;
      seen.add(t.name);
    }
  });
  return last;
}

export const hasNonAdditiveToolChanges = (messages: Messages): boolean => lastNonAdditiveChange(messages.filter(isSystem)) >= 0;

/**
 * Which tools a request lists up front and how many leading system messages that list stands
 * for. "none": the current tools, all system messages. "changes": nothing up front, every message
 * declares its own. "additions": the tools as of the last removal or redeclaration (at least the
 * leading message's); later messages only add, in place.
 */
export function resolveTranscriptTools(messages: Messages, support: "none" | "additions" | "changes"): { requestTools: Tool[]; foldedSystemMessages: number } {
  const system = messages.filter(isSystem);
  if (support === "none") return { requestTools: getCurrentTools(system), foldedSystemMessages: system.length };
  if (support === "changes") return { requestTools: [], foldedSystemMessages: 0 };
  const folded = Math.max(getInitialSystemMessage(messages) ? 1 : 0, lastNonAdditiveChange(system) + 1);
  return { requestTools: getCurrentTools(system.slice(0, folded)), foldedSystemMessages: folded };
}
