/** Real images for tests, encoded with photon (the codec pion uses), and a BMP written by hand. */
import { loadPhoton, type Photon } from "../../src/tools/images/photon.ts";

const photon = (await loadPhoton()) as Photon;

/** A w x h PNG: a gradient, so it compresses well and stays a PNG when scaled. */
export function gradientPng(w: number, h: number): Uint8Array {
  const px = new Uint8Array(w * h * 4);
  for (let i = 0; i < w * h; i++) px.set([(i % w) % 256, Math.floor(i / w) % 256, 90, 255], i * 4);
  const image = new photon.PhotonImage(px, w, h);
  try {
    return image.get_bytes();
  } finally {
    image.free();
  }
}

/** A w x h 24-bit BMP, a type no provider takes inline. */
export function bmp(w: number, h: number): Uint8Array {
  const row = Math.ceil((w * 3) / 4) * 4;
  const size = 54 + row * h;
  const b = Buffer.alloc(size);
  b.write("BM", 0);
  b.writeUInt32LE(size, 2);
  b.writeUInt32LE(54, 10);
  b.writeUInt32LE(40, 14);
  b.writeInt32LE(w, 18);
  b.writeInt32LE(h, 22);
  b.writeUInt16LE(1, 26);
  b.writeUInt16LE(24, 28);
  b.writeUInt32LE(row * h, 34);
  for (let y = 0; y < h; y++) for (let x = 0; x < w; x++) b.set([200, x % 256, y % 256], 54 + y * row + x * 3);
  return new Uint8Array(b);
}

/** Width and height of a base64 image, or null when photon cannot decode it. */
export function imageSize(base64: string): [number, number] | null {
  let image: InstanceType<Photon["PhotonImage"]>;
  try {
    image = photon.PhotonImage.new_from_byteslice(Buffer.from(base64, "base64"));
  } catch {
    return null;
  }
  try {
    return [image.get_width(), image.get_height()];
  } finally {
    image.free();
  }
}

export const base64 = (bytes: Uint8Array): string => Buffer.from(bytes).toString("base64");
