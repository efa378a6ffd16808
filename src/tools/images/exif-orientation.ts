import type { Photon } from "./photon.ts";

type PhotonImage = InstanceType<Photon["PhotonImage"]>;

/**
 * The EXIF orientation (1-8) of a JPEG or WebP file, 1 when it has none or it cannot be read.
 * Only IFD0's Orientation tag (0x0112) matters; camera JPEGs store the sensor's rows and say here
 * how to turn them, and photon's decoder does not apply it.
 */
export function exifOrientation(bytes: Uint8Array): number {
  const tiff = isJpeg(bytes) ? jpegExif(bytes) : isWebp(bytes) ? webpExif(bytes) : -1;
  return tiff < 0 ? 1 : tiffOrientation(bytes, tiff);
}

const isJpeg = (b: Uint8Array) => b.length >= 2 && b[0] === 0xff && b[1] === 0xd8;
const isWebp = (b: Uint8Array) => b.length >= 12 && tag(b, 0) === "RIFF" && tag(b, 8) === "WEBP";
const tag = (b: Uint8Array, at: number) => String.fromCharCode(b[at]!, b[at + 1]!, b[at + 2]!, b[at + 3]!);
/** "Exif\0\0", which starts an APP1 segment's payload (and some WebP EXIF chunks). */
const exifHeader = (b: Uint8Array, at: number) => at + 6 <= b.length && tag(b, at) === "Exif" && b[at + 4] === 0 && b[at + 5] === 0;

/** Where the TIFF header of the first EXIF APP1 segment starts, or -1. */
function jpegExif(b: Uint8Array): number {
  for (let at = 2; at + 4 <= b.length; ) {
    if (b[at] !== 0xff) return -1;
    const marker = b[at + 1]!;
    if (marker === 0xff) {
      at += 1; // fill byte before a marker
      continue;
    }
    if (marker === 0xda || marker === 0xd9) return -1; // image data or end: no metadata beyond
    if (marker === 0xe1 && exifHeader(b, at + 4)) return at + 10;
    at += 2 + ((b[at + 2]! << 8) | b[at + 3]!);
  }
  return -1;
}

/** Where the TIFF header of the EXIF chunk starts, or -1. */
function webpExif(b: Uint8Array): number {
  for (let at = 12; at + 8 <= b.length; ) {
    const size = (b[at + 4]! | (b[at + 5]! << 8) | (b[at + 6]! << 16) | (b[at + 7]! << 24)) >>> 0;
    const data = at + 8;
    if (tag(b, at) === "EXIF") {
      if (data + size > b.length) return -1;
      return exifHeader(b, data) ? data + 6 : data;
    }
    at = data + size + (size & 1); // chunks are padded to an even size
  }
  return -1;
}

function tiffOrientation(b: Uint8Array, tiff: number): number {
  if (tiff + 8 > b.length) return 1;
  const little = b[tiff] === 0x49 && b[tiff + 1] === 0x49;
  const u16 = (at: number) => (little ? b[at]! | (b[at + 1]! << 8) : (b[at]! << 8) | b[at + 1]!);
  const u32 = (at: number) => (little ? (u16(at + 2) << 16) | u16(at) : (u16(at) << 16) | u16(at + 2)) >>> 0;
  const ifd = tiff + u32(tiff + 4);
  if (ifd + 2 > b.length) return 1;
  const count = u16(ifd);
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12;
    if (entry + 12 > b.length) return 1;
    if (u16(entry) === 0x0112) {
      const value = u16(entry + 8);
      return value >= 1 && value <= 8 ? value : 1;
    }
  }
  return 1;
}

/**
 * For each orientation, the index in the stored image (w x h, row-major) of the displayed pixel
 * (x, y). Orientations 5-8 swap the axes: the displayed image is h wide.
 */
const SOURCE: Record<number, (x: number, y: number, w: number, h: number) => number> = {
  2: (x, y, w) => y * w + (w - 1 - x),
  3: (x, y, w, h) => (h - 1 - y) * w + (w - 1 - x),
  4: (x, y, w, h) => (h - 1 - y) * w + x,
  5: (x, y, w) => x * w + y,
  6: (x, y, w, h) => (h - 1 - x) * w + y,
  7: (x, y, w, h) => (h - 1 - x) * w + (w - 1 - y),
  8: (x, y, w) => x * w + (w - 1 - y),
};

/**
 * The image as it should be displayed given the file's EXIF orientation: `image` itself when
 * upright, else a new image (the caller frees both).
 */
export function orientImage(photon: Photon, image: PhotonImage, bytes: Uint8Array): PhotonImage {
  const orientation = exifOrientation(bytes);
  const source = SOURCE[orientation];
  if (!source) return image;
  const w = image.get_width();
  const h = image.get_height();
  const [outW, outH] = orientation >= 5 ? [h, w] : [w, h];
  const pixels = image.get_raw_pixels();
  const from = new Uint32Array(pixels.buffer, pixels.byteOffset, pixels.byteLength / 4); // one RGBA pixel each
  const to = new Uint32Array(from.length);
  for (let y = 0; y < outH; y++) {
    for (let x = 0; x < outW; x++) to[y * outW + x] = from[source(x, y, w, h)]!;
  }
  return new photon.PhotonImage(new Uint8Array(to.buffer), outW, outH);
}

/** `bytes` decoded and turned upright; throws when photon cannot decode them. The caller frees the result. */
export function decodeUpright(photon: Photon, bytes: Uint8Array): PhotonImage {
  const decoded = photon.PhotonImage.new_from_byteslice(bytes);
  try {
    const image = orientImage(photon, decoded, bytes);
    if (image !== decoded) decoded.free();
    return image;
  } catch (err) {
    decoded.free();
    throw err;
  }
}
