import { decodeUpright } from "./exif-orientation.ts";
import { loadPhoton } from "./photon.ts";

/**
 * The image (base64) as PNG, as the reference's `convertToPng` answers it: a PNG comes back as it
 * was; anything else is decoded, turned upright by its EXIF orientation and encoded as PNG. Null
 * when it cannot be decoded or the codec is unavailable.
 */
export async function convertToPng(base64Data: string, mimeType: string): Promise<{ data: string; mimeType: string } | null> {
  if (mimeType === "image/png") return { data: base64Data, mimeType };
  const png = await imageBytesToPng(new Uint8Array(Buffer.from(base64Data, "base64")));
  return png ? { data: Buffer.from(png).toString("base64"), mimeType: "image/png" } : null;
}

/** The image's bytes re-encoded as PNG (upright), or null when they cannot be decoded. */
export async function imageBytesToPng(bytes: Uint8Array): Promise<Uint8Array | null> {
  const photon = await loadPhoton();
  if (!photon) return null;
  try {
    const image = decodeUpright(photon, bytes);
    try {
      return image.get_bytes();
    } finally {
      image.free();
    }
  } catch {
    return null; // not an image photon can decode
  }
}

/** The image types every provider takes inline. */
const INLINE_TYPES: Record<string, string> = { "image/png": "image/png", "image/jpeg": "image/jpeg", "image/jpg": "image/jpeg", "image/gif": "image/gif", "image/webp": "image/webp" };

/**
 * An image a model can be sent: one of the inline types as it was (`image/jpg` named
 * `image/jpeg`), anything else (BMP, TIFF, ...) re-encoded as PNG with `convertedFrom` set.
 * Null when such an image cannot be decoded.
 */
export async function toInlineImage(bytes: Uint8Array, mimeType: string): Promise<{ bytes: Uint8Array; mimeType: string; convertedFrom?: string } | null> {
  const base = mimeType.split(";")[0]!.trim().toLowerCase();
  const inline = INLINE_TYPES[base];
  if (inline) return { bytes, mimeType: inline };
  const png = await imageBytesToPng(bytes);
  return png ? { bytes: png, mimeType: "image/png", convertedFrom: base } : null;
}
