import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { prepareImage } from "../../../../src/tools/images/prepare.ts";
import { resizeOptionsFrom, type ImageResizeOptions } from "../../../../src/tools/images/resize.ts";
import { base64, bmp, gradientPng } from "../../../support/images.ts";

const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test : test.skip;

describe("resizeOptionsFrom", () => {
  test("takes the positive numbers of inputLimits.images.resize", () => {
    expect(resizeOptionsFrom({ images: { resize: { maxWidth: 800, maxHeight: 0, maxBytes: "x", jpegQuality: 70, other: 1 } } })).toEqual({ maxWidth: 800, jpegQuality: 70 });
  });
  test("undefined without limits for images", () => {
    for (const limits of [undefined, {}, { images: null }, { images: { resize: 5 } }, { images: { resize: { maxWidth: -1 } } }]) expect(resizeOptionsFrom(limits)).toBeUndefined();
  });
});

describe("prepareImage beside the reference's processImage", () => {
  const inputs: [string, () => Uint8Array, string, boolean, ImageResizeOptions | undefined][] = [
    ["a small PNG", () => gradientPng(20, 10), "image/png", true, undefined],
    ["a 3000x2000 PNG", () => gradientPng(3000, 2000), "image/png", true, undefined],
    ["a 3000x2000 PNG, autoResize off", () => gradientPng(3000, 2000), "image/png", false, undefined],
    ["a PNG over custom limits", () => gradientPng(900, 300), "image/png", true, { maxWidth: 450, maxHeight: 100 }],
    ["a BMP", () => bmp(30, 20), "image/bmp", true, undefined],
    ["a BMP, autoResize off", () => bmp(30, 20), "image/bmp", false, undefined],
    ["bytes that are no image, said to be TIFF", () => new TextEncoder().encode("not an image"), "image/tiff", true, undefined],
    ["bytes that are no image, said to be PNG", () => new TextEncoder().encode("not an image"), "image/png", true, undefined],
    ["bytes that are no image, said to be PNG, autoResize off", () => new TextEncoder().encode("not an image"), "image/png", false, undefined],
    ["a limit nothing fits under", () => gradientPng(64, 64), "image/png", true, { maxBytes: 10 }],
  ];
  refTest.each(inputs)("%s: the same image and as many notes", async (_name, make, mimeType, autoResize, limits) => {
    const { processImage } = (await import(join(REF!, "dist/utils/image-process.js"))) as {
      processImage: (b: Uint8Array, m: string, o: unknown) => Promise<{ ok: true; data: string; mimeType: string; hints: string[] } | { ok: false; message: string }>;
    };
    const bytes = make();
    const theirs = await processImage(bytes, mimeType, { autoResizeImages: autoResize, resizeOptions: limits });
    const mine = await prepareImage(bytes, mimeType, { autoResize, ...(limits ? { limits } : {}) });
    expect(mine.ok).toBe(theirs.ok);
    if (!mine.ok || !theirs.ok) return;
    expect({ data: mine.image.data, mimeType: mine.image.mimeType }).toEqual({ data: theirs.data, mimeType: theirs.mimeType });
    expect(mine.notes).toHaveLength(theirs.hints.length);
    // the dimension note is the read tool's, which is the reference's wording
    expect(mine.notes.filter((n) => n.startsWith("[Image: original"))).toEqual(theirs.hints.filter((n) => n.startsWith("[Image: original")));
  });

  test("an image already within the limits comes back with its own bytes and no note", async () => {
    const png = gradientPng(20, 10);
    expect(await prepareImage(png, "image/png", { autoResize: true })).toEqual({ ok: true, image: { type: "image", data: base64(png), mimeType: "image/png" }, notes: [] });
  });
});
