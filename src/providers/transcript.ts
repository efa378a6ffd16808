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
  timestamp: number;
};
export type Transcript = { messages: (Message | SystemMessage)[] };

/**
 * The reference hands API implementations a transcript: the system prompt and tools as a leading
 * `system` message (none when both are empty). pion's request as one: what an extension's stream
 * function is given, and the context a pi-messages server is sent.
 */
export function transcriptOf(req: Pick<LlmRequest, "systemPrompt" | "tools" | "messages">): Transcript {
  const tools = req.tools.length > 0 ? { toolsAdded: req.tools } : {};
  const lead: SystemMessage[] = req.systemPrompt || req.tools.length > 0 ? [{ role: "system", content: req.systemPrompt, ...tools, timestamp: 0 }] : [];
  return { messages: [...lead, ...req.messages] };
}
