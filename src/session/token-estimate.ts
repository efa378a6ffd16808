/**
 * The token estimate of one message, four characters a token, counted as the reference counts
 * them: the text a message carries (an image as a fixed 4,800 characters), a tool call's name
 * and JSON arguments, a system message's content, sections and declared tools. Compaction cut
 * points and the context-usage figure both rest on it, so it must match the reference's for the
 * two agents to compact the same session at the same places.
 */
import type { AgentMessage } from "../store/entries.ts";

/** What an image counts as, in characters. */
const IMAGE_CHARS = 4800;

type Blocks = string | readonly { type: string; text?: string }[] | undefined;

/** Characters of text and image content (other block kinds count nothing). */
function contentChars(content: Blocks): number {
  if (typeof content === "string") return content.length;
  let chars = 0;
  for (const b of content ?? []) {
    if (b.type === "text") chars += b.text?.length ?? 0;
    else if (b.type === "image") chars += IMAGE_CHARS;
  }
  return chars;
}

/** A system-role message as sessions written by the reference hold them. */
interface SystemLike {
  role: "system";
  content: Blocks;
  sections?: Record<string, string | null>;
  toolsAdded?: unknown[];
}

const jsonLength = (x: unknown) => JSON.stringify(x)?.length ?? 0;

function systemChars(m: SystemLike): number {
  let chars = contentChars(m.content);
  for (const section of Object.values(m.sections ?? {})) chars += section?.length ?? 0;
  if (m.toolsAdded) chars += jsonLength(m.toolsAdded);
  return chars;
}

function chars(m: AgentMessage | SystemLike): number {
  switch (m.role) {
    case "system":
      return systemChars(m);
    case "user":
    case "toolResult":
    case "custom":
      return contentChars(m.content);
    case "assistant": {
      let n = 0;
      for (const b of m.content) {
        if (b.type === "text") n += b.text.length;
        else if (b.type === "thinking") n += b.thinking.length;
        else if (b.type === "toolCall") n += b.name.length + jsonLength(b.arguments);
      }
      return n;
    }
    case "bashExecution":
      return m.command.length + m.output.length;
    case "branchSummary":
    case "compactionSummary":
      return m.summary.length;
  }
  return 0;
}

/** Estimated tokens of one message; 0 for a role the estimate does not know. */
export function estimateTokens(m: AgentMessage | SystemLike): number {
  return Math.ceil(chars(m) / 4);
}
