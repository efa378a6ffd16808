import type { ImageContent, Model, TextContent, UserMessage } from "../providers/types.ts";
import type { AgentMessage } from "../store/entries.ts";
import { prepareImage } from "../tools/images/prepare.ts";
import { resizeOptionsFrom } from "../tools/images/resize.ts";

export interface PromptImageOptions {
  /** The model the message goes to: its `inputLimits.images.resize`, if any, are the limits. */
  model: Model | undefined;
  /** settings `images.autoResize`: scale images down to the limits (default true). */
  autoResize: boolean;
}

/**
 * The images of the user messages among `messages` (a prompt, a steer, a follow-up) made what the
 * model is sent and the session records, as the reference normalizes a prompt's images: each
 * becomes an inline type (prepareImage), or is left out when it cannot. What was done is said
 * after the message's text, a blank line first, one note a line. Other messages, and user
 * messages without images, come back as they were.
 *
 * The session imports this module for the first message that has an image, so the image code
 * (and photon, on the first image it decodes) is never loaded before.
 */
export async function fitPromptImages(messages: readonly AgentMessage[], o: PromptImageOptions): Promise<AgentMessage[]> {
  const limits = resizeOptionsFrom(o.model?.inputLimits);
  const out: AgentMessage[] = [];
  for (const m of messages) out.push(m.role === "user" && hasImages(m) ? await fitMessage(m, o.autoResize, limits) : m);
  return out;
}

const hasImages = (m: UserMessage): boolean => typeof m.content !== "string" && m.content.some((c) => c.type === "image");

async function fitMessage(m: UserMessage, autoResize: boolean, limits: ReturnType<typeof resizeOptionsFrom>): Promise<UserMessage> {
  const notes: string[] = [];
  const content: (TextContent | ImageContent)[] = [];
  for (const block of m.content as (TextContent | ImageContent)[]) {
    if (block.type !== "image") {
      content.push(block);
      continue;
    }
    const prepared = await prepareImage(new Uint8Array(Buffer.from(block.data, "base64")), block.mimeType, { autoResize, ...(limits ? { limits } : {}) });
    if (prepared.ok) {
      content.push(prepared.image);
      notes.push(...prepared.notes);
    } else {
      notes.push(`[An image is not sent: ${prepared.why}.]`);
    }
  }
  if (notes.length > 0) {
    const said = notes.join("\n");
    const at = content.findIndex((c) => c.type === "text");
    const text = content[at];
    if (text?.type === "text") content[at] = { ...text, text: `${text.text}\n\n${said}` };
    else content.unshift({ type: "text", text: said });
  }
  return { ...m, content };
}
