import type { ImageContent } from "../../providers/types.ts";
import { toInlineImage } from "./convert.ts";
import { formatDimensionNote, resizeImage, type ImageResizeOptions } from "./resize.ts";

/** An image ready to go to a model with the notes that say what was done to it, or why it cannot go. */
export type PreparedImage = { ok: true; image: ImageContent; notes: string[] } | { ok: false; why: string };

/**
 * `bytes` made fit to be sent inline, as the reference's `processImage` does it: PNG, JPEG, GIF
 * and WebP stay what they are, any other type is re-encoded as PNG (toInlineImage); with
 * `autoResize` the image is then fitted within `limits` (resizeImage; one already within them
 * keeps its bytes). `notes`, for the text beside the image: the conversion, then the original
 * size of a scaled image; none when nothing changed. `why` completes "The image is not sent: ...".
 */
export async function prepareImage(bytes: Uint8Array, mimeType: string, o: { autoResize: boolean; limits?: ImageResizeOptions }): Promise<PreparedImage> {
  const inline = await toInlineImage(bytes, mimeType);
  if (!inline) return { ok: false, why: "it could not be decoded to be sent as PNG" };
  let image: ImageContent;
  let dimensions: string | undefined;
  if (o.autoResize) {
    const resized = await resizeImage(inline.bytes, inline.mimeType, o.limits);
    if (!resized) return { ok: false, why: "it could not be decoded, or not made small enough to send" };
    image = { type: "image", data: resized.data, mimeType: resized.mimeType };
    dimensions = formatDimensionNote(resized);
  } else {
    image = { type: "image", data: Buffer.from(inline.bytes).toString("base64"), mimeType: inline.mimeType };
  }
  const notes: string[] = [];
  if (inline.convertedFrom && inline.convertedFrom !== image.mimeType) notes.push(`[Converted from ${inline.convertedFrom} to ${image.mimeType} to be sent.]`);
  if (dimensions) notes.push(dimensions);
  return { ok: true, image, notes };
}
