/**
 * The reference's transcript model as pi-agent-core uses it: the system prompt and the tool
 * declarations travel as `role: "system"` messages inside the conversation (the leading one is
 * the prompt; later ones append `content`, patch named `sections`, add or remove tools).
 * pion's providers take one system prompt and one tool list, so a request is built from the
 * replayed state; the loop announces a change of the executable tools with a system message,
 * as the reference's does.
 */
import type { Message } from "../../providers/types.ts";

export interface ToolDeclaration {
  name: string;
  description: string;
  parameters: unknown;
  constrainedSampling?: unknown;
}

export interface SystemMessage {
  role: "system";
  content: string | { type: "text"; text: string }[];
  sections?: Record<string, string | null>;
  toolsAdded?: ToolDeclaration[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
}

type AnyMessage = { role: string };

const isSystem = (m: AnyMessage): m is SystemMessage => m.role === "system";

const textOf = (c: SystemMessage["content"]): string => (typeof c === "string" ? c : c.map((b) => b.text).join(""));

/** What the model is told of a tool: its name, description and schema, nothing executable. */
export function toDeclaration(tool: { name: string; description?: string; parameters?: unknown; constrainedSampling?: unknown }): ToolDeclaration {
  return {
    name: tool.name,
    description: tool.description ?? "",
    parameters: JSON.parse(JSON.stringify(tool.parameters ?? {})),
    ...(tool.constrainedSampling === undefined ? {} : { constrainedSampling: tool.constrainedSampling }),
  };
}

/** The leading system message for a prompt and tools; none when both are empty. */
export function initialSystemMessage(systemPrompt: string | undefined, tools: ToolDeclaration[]): SystemMessage | undefined {
  if (!systemPrompt && tools.length === 0) return undefined;
  return { role: "system", content: systemPrompt ?? "", ...(tools.length > 0 ? { toolsAdded: tools } : {}), timestamp: 0 };
}

/** The tools declared after replaying every system message in order. */
export function declaredTools(messages: readonly AnyMessage[]): ToolDeclaration[] {
  const tools = new Map<string, ToolDeclaration>();
  for (const m of messages) {
    if (!isSystem(m)) continue;
    for (const t of m.toolsRemoved ?? []) tools.delete(t.name);
    for (const t of m.toolsAdded ?? []) tools.set(t.name, t);
  }
  return [...tools.values()];
}

/**
 * Every system message replayed into one: the contents joined, the sections patched by name
 * (null removes one), the tools as they stand; none when there was no system message.
 */
export function currentSystemMessage(messages: readonly AnyMessage[]): SystemMessage | undefined {
  const content: string[] = [];
  const sections = new Map<string, string>();
  let timestamp: number | undefined;
  for (const m of messages) {
    if (!isSystem(m)) continue;
    timestamp ??= m.timestamp;
    const text = textOf(m.content);
    if (text) content.push(text);
    for (const [name, value] of Object.entries(m.sections ?? {})) {
      if (value === null) sections.delete(name);
      else sections.set(name, value);
    }
  }
  const tools = declaredTools(messages);
  if (timestamp === undefined && tools.length === 0) return undefined;
  return {
    role: "system",
    content: content.join("\n\n"),
    ...(sections.size > 0 ? { sections: Object.fromEntries(sections) } : {}),
    ...(tools.length > 0 ? { toolsAdded: tools } : {}),
    timestamp: timestamp ?? 0,
  };
}

/** The system prompt after replaying every system message: contents, then the live sections. */
export function systemPromptOf(messages: readonly AnyMessage[]): string {
  const m = currentSystemMessage(messages);
  if (!m) return "";
  return [textOf(m.content), ...Object.values(m.sections ?? {})].filter((p): p is string => typeof p === "string" && p.length > 0).join("\n\n");
}

const same = (a: ToolDeclaration, b: ToolDeclaration) => JSON.stringify(toDeclaration(a)) === JSON.stringify(toDeclaration(b));

/**
 * `pending` with the difference between the tools the transcript declares and `tools` (what can
 * run) written on a system message: on the last pending system message if there is one, else on
 * a new one placed before the first pending message that is not a system message.
 */
export function declareToolChanges<M extends AnyMessage>(context: readonly AnyMessage[], tools: readonly Parameters<typeof toDeclaration>[0][], pending: M[]): M[] {
  let at = -1;
  for (let i = pending.length - 1; i >= 0; i--) if (pending[i]!.role === "system") { at = i; break; }
  const own = at >= 0 ? (pending[at] as unknown as SystemMessage) : undefined;
  const strip = ({ toolsAdded: _a, toolsRemoved: _r, ...rest }: SystemMessage) => rest;
  const baseline = own ? pending.map((m, i) => (i === at ? (strip(own) as unknown as M) : m)) : pending;
  const before = declaredTools([...context, ...baseline]);
  const now = tools.map(toDeclaration);
  const added = now.filter((t) => !before.some((b) => b.name === t.name && same(b, t)));
  const removed = before.filter((b) => !now.some((t) => t.name === b.name && same(b, t))).map((b) => ({ name: b.name }));
  const changes = { ...(added.length ? { toolsAdded: added } : {}), ...(removed.length ? { toolsRemoved: removed } : {}) };
  const unchanged = added.length === 0 && removed.length === 0;
  if (own) {
    if (unchanged && !own.toolsAdded?.length && !own.toolsRemoved?.length) return pending;
    return baseline.map((m, i) => (i === at ? ({ ...strip(own), ...changes } as unknown as M) : m));
  }
  if (unchanged) return pending;
  const update = { role: "system", content: "", ...changes, timestamp: Date.now() } as unknown as M;
  const first = pending.findIndex((m) => m.role !== "system");
  const index = first === -1 ? pending.length : first;
  return [...pending.slice(0, index), update, ...pending.slice(index)];
}

/** A transcript as pion's providers take it: one system prompt, the declared tools, the other messages. */
export function requestParts(messages: readonly AnyMessage[]): { systemPrompt: string; tools: ToolDeclaration[]; messages: Message[] } {
  return { systemPrompt: systemPromptOf(messages), tools: declaredTools(messages), messages: messages.filter((m) => !isSystem(m)) as Message[] };
}
