import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { convertToPng } from "../../../../src/tools/images/convert.ts";
import { exifOrientation } from "../../../../src/tools/images/exif-orientation.ts";
import { loadPhoton, type Photon } from "../../../../src/tools/images/photon.ts";
import { resizeImage, type ImageResizeOptions } from "../../../../src/tools/images/resize.ts";

const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test : test.skip;
const ref = async (path: string): Promise<Record<string, any>> => import(join(REF!, "dist", path));
const photon = (await loadPhoton()) as Photon;

/** A w x h RGBA image: a smooth gradient, or noise (which compresses badly, forcing smaller encodings). */
function pixels(w: number, h: number, noise = false): Uint8Array {
  const px = new Uint8Array(w * h * 4);
  let seed = 7;
  for (let i = 0; i < w * h; i++) {
    const x = i % w;
    const y = Math.floor(i / w);
    seed = (seed * 1103515245 + 12345) >>> 0;
    px.set(noise ? [seed & 255, (seed >> 8) & 255, (seed >> 16) & 255, 255] : [(x * 255) / w, (y * 255) / h, 128, 255], i * 4);
  }
  return px;
}
function encode(w: number, h: number, as: "png" | "jpeg" | "webp", noise = false): Uint8Array {
  const image = new photon.PhotonImage(pixels(w, h, noise), w, h);
  try {
    return as === "png" ? image.get_bytes() : as === "webp" ? image.get_bytes_webp() : image.get_bytes_jpeg(90);
  } finally {
    image.free();
  }
}

/** A TIFF block (EXIF payload) holding IFD0 with one Orientation entry. */
function tiff(orientation: number, little: boolean): number[] {
  const u16 = (n: number) => (little ? [n & 255, n >> 8] : [n >> 8, n & 255]);
  const u32 = (n: number) => (little ? [n & 255, (n >> 8) & 255, (n >> 16) & 255, n >>> 24] : [n >>> 24, (n >> 16) & 255, (n >> 8) & 255, n & 255]);
  return [...(little ? [0x49, 0x49] : [0x4d, 0x4d]), ...u16(42), ...u32(8), ...u16(1), ...u16(0x0112), ...u16(3), ...u32(1), ...u16(orientation), 0, 0, ...u32(0)];
}
/** The JPEG with an EXIF APP1 segment (after a JFIF-like APP0) saying `orientation`. */
function withOrientation(jpeg: Uint8Array, orientation: number, little = false): Uint8Array {
  const payload = [0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff(orientation, little)];
  const app0 = [0xff, 0xe0, 0, 4, 1, 2];
  const app1 = [0xff, 0xe1, (payload.length + 2) >> 8, (payload.length + 2) & 255, ...payload];
  return new Uint8Array([0xff, 0xd8, ...app0, ...app1, ...jpeg.subarray(2)]);
}

describe("resizeImage and convertToPng against the reference's, on the same images", () => {
  type Shape = [mimeType: string, width: number, height: number, wasResized: boolean] | null;
  const cases: [string, () => Uint8Array, string, ImageResizeOptions | undefined, Shape][] = [
    ["a small PNG within every limit", () => encode(40, 30, "png"), "image/png", undefined, ["image/png", 40, 30, false]],
    ["a wide PNG over maxWidth", () => encode(2600, 300, "png"), "image/png", undefined, ["image/png", 2000, 231, true]],
    ["a tall JPEG over maxHeight (custom limits)", () => encode(200, 900, "jpeg"), "image/jpeg", { maxWidth: 500, maxHeight: 400 }, ["image/jpeg", 89, 400, true]],
    ["a noisy PNG over maxBytes: JPEG wins", () => encode(300, 300, "png", true), "image/png", { maxBytes: 120_000 }, ["image/jpeg", 300, 300, true]],
    ["a noisy PNG needing lower JPEG quality", () => encode(300, 300, "png", true), "image/png", { maxBytes: 150_000, jpegQuality: 95 }, ["image/jpeg", 300, 300, true]],
    ["a noisy PNG that must shrink", () => encode(300, 300, "png", true), "image/png", { maxBytes: 8_000 }, ["image/jpeg", 126, 126, true]],
    ["a limit nothing fits under: null", () => encode(64, 64, "png", true), "image/png", { maxBytes: 10 }, null],
    ["an EXIF-rotated JPEG (6) within limits", () => withOrientation(encode(60, 20, "jpeg"), 6), "image/jpeg", undefined, ["image/jpeg", 20, 60, false]],
    ["an EXIF-rotated JPEG (8, little-endian) over maxWidth", () => withOrientation(encode(300, 100, "jpeg"), 8, true), "image/jpeg", { maxWidth: 50 }, ["image/jpeg", 50, 150, true]],
    ["a WebP over maxWidth", () => encode(600, 90, "webp"), "image/webp", { maxWidth: 300 }, ["image/png", 300, 45, true]],
    ["a WebP within limits keeps its type", () => encode(60, 90, "webp"), "image/webp", undefined, ["image/webp", 60, 90, false]],
    ["a 1x1 GIF within limits keeps its type", () => Buffer.from("R0lGODlhAQABAIAAAP///wAAACH5BAEAAAAALAAAAAABAAEAAAICRAEAOw==", "base64"), "image/gif", undefined, ["image/gif", 1, 1, false]],
    ["bytes that are no image: null", () => new TextEncoder().encode("not an image at all"), "image/png", undefined, null],
    ["an empty MIME type on a small image", () => encode(8, 8, "png"), "", undefined, ["image/png", 8, 8, false]],
  ];
  for (const [name, make, mimeType, options, shape] of cases) {
    refTest(`resizeImage: ${name}`, async () => {
      const { resizeImageInProcess } = await ref("utils/image-resize-core.js");
      const bytes = make();
      const ours = await resizeImage(bytes, mimeType, options);
      expect(ours).toEqual(await resizeImageInProcess(bytes, mimeType, options));
      expect(ours && [ours.mimeType, ours.width, ours.height, ours.wasResized]).toEqual(shape);
      if (ours) {
        expect(ours.width).toBeLessThanOrEqual(options?.maxWidth ?? 2000);
        expect(ours.height).toBeLessThanOrEqual(options?.maxHeight ?? 2000);
        expect(ours.data.length).toBeLessThan(options?.maxBytes ?? 4.5 * 1024 * 1024);
      }
    });
  }

  refTest("resizeImage through the reference's exported (worker) function gives the same", async () => {
    const { resizeImage: R } = await ref("utils/image-resize.js");
    const bytes = encode(2200, 200, "jpeg");
    const ours = await resizeImage(bytes, "image/jpeg");
    expect(ours).toMatchObject({ originalWidth: 2200, originalHeight: 200, width: 2000, height: 182, wasResized: true });
    expect(ours).toEqual(await R(bytes, "image/jpeg"));
  });

  refTest("convertToPng: every EXIF orientation, both byte orders, equals the reference's pixel for pixel", async () => {
    const { convertToPng: R } = await ref("utils/image-convert.js");
    const jpeg = encode(6, 4, "jpeg");
    for (const little of [false, true]) {
      for (let o = 1; o <= 8; o++) {
        const b64 = Buffer.from(withOrientation(jpeg, o, little)).toString("base64");
        const ours = await convertToPng(b64, "image/jpeg");
        expect([o, ours]).toEqual([o, await R(b64, "image/jpeg")]);
        const image = photon.PhotonImage.new_from_byteslice(Buffer.from(ours!.data, "base64"));
        expect([image.get_width(), image.get_height()]).toEqual(o >= 5 ? [4, 6] : [6, 4]);
        image.free();
      }
    }
  });

  refTest("convertToPng: a PNG as it was, bytes that are no image are null", async () => {
    const { convertToPng: R } = await ref("utils/image-convert.js");
    for (const [data, mime] of [["AAAA", "image/png"], [Buffer.from("nonsense").toString("base64"), "image/jpeg"]] as const) {
      expect(await convertToPng(data, mime)).toEqual(await R(data, mime));
    }
    expect(await convertToPng("AAAA", "image/png")).toEqual({ data: "AAAA", mimeType: "image/png" });
    expect(await convertToPng(Buffer.from("nonsense").toString("base64"), "image/jpeg")).toBeNull();
  });
});

test("loading photon leaves fs.readFileSync as it was, and loads once", async () => {
  const fs = (await import("node:fs")).default;
  const before = fs.readFileSync;
  expect(await loadPhoton()).toBe(photon);
  expect(fs.readFileSync).toBe(before);
});

describe("exifOrientation", () => {
  test("reads IFD0's Orientation from JPEG APP1 and WebP EXIF chunks; 1 otherwise", () => {
    const jpeg = encode(4, 4, "jpeg");
    expect(exifOrientation(jpeg)).toBe(1);
    expect(exifOrientation(withOrientation(jpeg, 3))).toBe(3);
    expect(exifOrientation(withOrientation(jpeg, 7, true))).toBe(7);
    expect(exifOrientation(withOrientation(jpeg, 9))).toBe(1); // out of range
    const webp = (exif: number[]) => {
      const chunk = [..."EXIF"].map((c) => c.charCodeAt(0));
      const body = [...[..."WEBP"].map((c) => c.charCodeAt(0)), ...[..."VP8L"].map((c) => c.charCodeAt(0)), 1, 0, 0, 0, 0, 0, ...chunk, exif.length, 0, 0, 0, ...exif];
      return new Uint8Array([..."RIFF"].map((c) => c.charCodeAt(0)).concat([body.length, 0, 0, 0], body));
    };
    expect(exifOrientation(webp(tiff(6, true)))).toBe(6);
    expect(exifOrientation(webp([0x45, 0x78, 0x69, 0x66, 0, 0, ...tiff(5, false)]))).toBe(5);
    expect(exifOrientation(encode(4, 4, "png"))).toBe(1);
    expect(exifOrientation(new Uint8Array([0xff, 0xd8, 0xff, 0xe1, 0xff]))).toBe(1); // truncated
  });
});
