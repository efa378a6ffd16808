/** What a file's first bytes say it is. */
export type FileKind = { kind: "image"; mimeType: string } | { kind: "binary" } | { kind: "text" };

export const SNIFF_BYTES = 8192;

const startsWith = (b: Uint8Array, sig: readonly number[], at = 0) => sig.every((x, i) => b[at + i] === x);
const ascii = (s: string) => [...s].map((c) => c.charCodeAt(0));

export function imageMimeType(head: Uint8Array): string | null {
  if (startsWith(head, [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])) return "image/png";
  if (startsWith(head, [0xff, 0xd8, 0xff])) return "image/jpeg";
  if (startsWith(head, ascii("GIF87a")) || startsWith(head, ascii("GIF89a"))) return "image/gif";
  if (startsWith(head, ascii("RIFF")) && startsWith(head, ascii("WEBP"), 8)) return "image/webp";
  return null;
}

/** Classifies by magic bytes, then by a NUL byte in the first 8KB. */
export function sniffFile(head: Uint8Array): FileKind {
  const mimeType = imageMimeType(head);
  if (mimeType) return { kind: "image", mimeType };
  return head.subarray(0, SNIFF_BYTES).includes(0) ? { kind: "binary" } : { kind: "text" };
}
