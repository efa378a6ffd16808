import type { LlmRequest, Message, ToolSpec } from "./types.ts";

/**
 * The reference's system message: instructions (and, on the leading one, the tool declarations)
 * at a point of the transcript.
 */
export type SystemMessage = {
  role: "system";
  content: string | { type: string; text?: string }[];
  sections?: Record<string, string | null>;
  toolsAdded?: ToolSpec[];
  toolsRemoved?: { name: string }[];
  timestamp: number;
};
export type Transcript<M extends { role: string } = Message | SystemMessage> = { messages: M[] };

/** The leading system message of a prompt and tools; undefined when both are empty. */
export function createInitialSystemMessage<T extends object>(systemPrompt: string | undefined, tools: T[] | undefined): (Omit<SystemMessage, "toolsAdded"> & { toolsAdded?: T[] }) | undefined {
  const withTools = tools !== undefined && tools.length > 0;
  if (!systemPrompt && !withTools) return undefined;
  return { role: "system", content: systemPrompt ?? "", ...(withTools ? { toolsAdded: tools } : {}), timestamp: 0 };
}

/** `systemPrompt` and `tools` of a request context folded into a leading system message. */
export function normalizeContext<M extends { role: string }, T extends object>(context: { systemPrompt?: string; tools?: T[]; messages: M[] }): Transcript<M | SystemMessage> {
  const first = createInitialSystemMessage(context.systemPrompt, context.tools);
  return { messages: first ? [first as SystemMessage, ...context.messages] : context.messages };
}

/**
 * The reference hands API implementations a transcript: the system prompt and tools as a leading
 * `system` message (none when both are empty). pion's request as one: what an extension's stream
 * function is given, and the context a pi-messages server is sent.
 */
export const transcriptOf = (req: Pick<LlmRequest, "systemPrompt" | "tools" | "messages">): Transcript => normalizeContext(req);
