import type { ImageContent, Message, StreamFn, TextContent } from "./types.ts";

/** What the model reads where an image was (settings `images.blockImages`). */
export const BLOCKED_IMAGE_NOTE = "[image not sent: images are turned off for this agent]";

/** `content` with each image replaced by the note; a run of images becomes one note. */
function withoutImages(content: (TextContent | ImageContent)[]): TextContent[] {
  const out: TextContent[] = [];
  for (const part of content) {
    if (part.type !== "image") out.push(part);
    else if (out.at(-1)?.text !== BLOCKED_IMAGE_NOTE) out.push({ type: "text", text: BLOCKED_IMAGE_NOTE });
  }
  return out;
}

const strip = (m: Message): Message =>
  m.role !== "assistant" && Array.isArray(m.content) && m.content.some((c) => c.type === "image") ? ({ ...m, content: withoutImages(m.content) } as Message) : m;

/**
 * A stream that never sends an image to the model: user messages and tool results have their
 * images replaced by a text note in each request. The session's own record keeps the images.
 */
export const blockImages =
  (stream: StreamFn): StreamFn =>
  (req, signal) =>
    stream({ ...req, messages: req.messages.map(strip) }, signal);
