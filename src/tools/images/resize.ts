import { decodeUpright } from "./exif-orientation.ts";
import { loadPhoton, type Photon } from "./photon.ts";

/** Limits for an image sent to a model (the reference's `ImageResizeOptions`). */
export interface ImageResizeOptions {
  maxWidth?: number;
  maxHeight?: number;
  /** Limit on the base64 text's length; an image fits when it is strictly below. */
  maxBytes?: number;
  /** The first JPEG quality tried; lower ones follow only when nothing fits. */
  jpegQuality?: number;
}

/**
 * A model's own limits for images (models.json `inputLimits.images.resize`, the reference's
 * shape): the fields that are positive numbers, undefined when there are none.
 */
export function resizeOptionsFrom(inputLimits: Record<string, unknown> | undefined): ImageResizeOptions | undefined {
  const images = inputLimits?.images;
  const resize = images && typeof images === "object" ? (images as Record<string, unknown>).resize : undefined;
  if (!resize || typeof resize !== "object") return undefined;
  const out: ImageResizeOptions = {};
  for (const key of ["maxWidth", "maxHeight", "maxBytes", "jpegQuality"] as const) {
    const value = (resize as Record<string, unknown>)[key];
    if (typeof value === "number" && Number.isFinite(value) && value > 0) out[key] = value;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** An image within the limits (the reference's `ResizedImage`); `data` is base64. */
export interface ResizedImage {
  data: string;
  mimeType: string;
  originalWidth: number;
  originalHeight: number;
  width: number;
  height: number;
  wasResized: boolean;
}

const DEFAULTS = {
  maxWidth: 2000,
  maxHeight: 2000,
  // Base64 text under Anthropic's 5 MB limit for an image, with room to spare.
  maxBytes: 4.5 * 1024 * 1024,
  jpegQuality: 80,
};
/** Tried after the configured quality, before the image is made smaller. */
const LOWER_QUALITIES = [85, 70, 55, 40];
/** Each step down keeps this share of the width and height. */
const SHRINK = 0.75;

type PhotonImage = InstanceType<Photon["PhotonImage"]>;
interface Encoded {
  data: string;
  mimeType: string;
}

/**
 * `bytes` (PNG, JPEG, GIF or WebP) fitted within the limits, as the reference's `resizeImage`
 * does it. An image already within every limit comes back as it was (`wasResized: false`).
 * Otherwise it is scaled to fit the width and height (Lanczos3), then encoded as PNG and as JPEG
 * at `jpegQuality`, the smaller kept; if neither is under `maxBytes`, lower JPEG qualities are
 * tried, then the image shrinks by a quarter a step down to 1x1. Dimensions are those of the
 * image as displayed (after its EXIF orientation). Null when the bytes cannot be decoded, nothing
 * fits, or the codec is unavailable.
 */
export async function resizeImage(bytes: Uint8Array, mimeType: string, options?: ImageResizeOptions): Promise<ResizedImage | null> {
  const o = { ...DEFAULTS, ...options };
  const photon = await loadPhoton();
  if (!photon) return null;
  let image: PhotonImage | undefined;
  try {
    image = decodeUpright(photon, bytes);
    const originalWidth = image.get_width();
    const originalHeight = image.get_height();
    const original = { originalWidth, originalHeight };
    if (originalWidth <= o.maxWidth && originalHeight <= o.maxHeight && base64Length(bytes.byteLength) < o.maxBytes) {
      return { data: Buffer.from(bytes).toString("base64"), mimeType: mimeType || "image/png", ...original, width: originalWidth, height: originalHeight, wasResized: false };
    }
    let [width, height] = fitWithin(originalWidth, originalHeight, o.maxWidth, o.maxHeight);
    const qualities = [...new Set([o.jpegQuality, ...LOWER_QUALITIES])];
    for (;;) {
      const fits = firstFitting(photon, image, width, height, qualities, o.maxBytes);
      if (fits) return { ...fits, ...original, width, height, wasResized: true };
      if (width === 1 && height === 1) return null;
      const next = [shrink(width), shrink(height)] as const;
      if (next[0] === width && next[1] === height) return null;
      [width, height] = next;
    }
  } catch {
    return null; // not an image photon can decode
  } finally {
    image?.free();
  }
}

/** The base64 text length of n bytes. */
const base64Length = (n: number) => Math.ceil(n / 3) * 4;
const shrink = (n: number) => (n === 1 ? 1 : Math.max(1, Math.floor(n * SHRINK)));

/** Scaled down to the width limit, then to the height limit, keeping the aspect ratio. */
function fitWithin(w: number, h: number, maxW: number, maxH: number): [number, number] {
  if (w > maxW) [w, h] = [maxW, Math.round((h * maxW) / w)];
  if (h > maxH) [w, h] = [Math.round((w * maxH) / h), maxH];
  return [w, h];
}

/** At width x height: the smaller of PNG and the first JPEG quality if one fits, else the first lower quality that does. */
function firstFitting(photon: Photon, image: PhotonImage, width: number, height: number, qualities: number[], maxBytes: number): Encoded | null {
  const scaled = photon.resize(image, width, height, photon.SamplingFilter.Lanczos3);
  try {
    const encode = (raw: Uint8Array, mimeType: string): Encoded => ({ data: Buffer.from(raw).toString("base64"), mimeType });
    const png = encode(scaled.get_bytes(), "image/png");
    const [first, ...lower] = qualities;
    const jpeg = encode(scaled.get_bytes_jpeg(first!), "image/jpeg");
    const fits = (c: Encoded) => c.data.length < maxBytes;
    for (const c of jpeg.data.length < png.data.length ? [jpeg, png] : [png, jpeg]) if (fits(c)) return c;
    for (const q of lower) {
      const c = encode(scaled.get_bytes_jpeg(q), "image/jpeg");
      if (fits(c)) return c;
    }
    return null;
  } finally {
    scaled.free();
  }
}

/** The note told to the model about a resized image's original size; undefined when it was not resized. */
export function formatDimensionNote(r: { wasResized: boolean; originalWidth: number; originalHeight: number; width: number; height: number }): string | undefined {
  if (!r.wasResized) return undefined;
  const scale = (r.originalWidth / r.width).toFixed(2);
  return `[Image: original ${r.originalWidth}x${r.originalHeight}, displayed at ${r.width}x${r.height}. Multiply coordinates by ${scale} to map to original image.]`;
}
