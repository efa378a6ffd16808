/**
 * Keeps the text an MCP result gives the model under 20 KB: longer text keeps its first and
 * last 10 KB around a `…N chars truncated…` marker, and the whole text goes to a temp file
 * (0600) named in the result. Images pass unchanged.
 */
import { writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ImageContent, TextContent } from "../providers/types.ts";

export const MCP_TEXT_LIMIT_BYTES = 20 * 1024;

type Block = TextContent | ImageContent;

/** Writes `text` to a new temp file and answers its path. */
export function saveTempFile(text: string | Uint8Array, ext: string): string {
  const id = Buffer.from(crypto.getRandomValues(new Uint8Array(8))).toString("hex");
  const path = join(tmpdir(), `pion-mcp-${id}${ext}`);
  writeFileSync(path, text, { mode: 0o600, flag: "wx" });
  return path;
}

/** The content within the limit, with `fullOutputPath` when text was cut. */
export function limitContent(content: Block[], limit = MCP_TEXT_LIMIT_BYTES): { content: Block[]; fullOutputPath?: string } {
  const texts = content.flatMap((b) => (b.type === "text" ? [b.text] : []));
  const all = texts.join("\n");
  const bytes = Buffer.byteLength(all);
  if (bytes <= limit) return { content };
  const cut = cutMiddle(all, limit);
  let where: string;
  let fullOutputPath: string | undefined;
  try {
    fullOutputPath = saveTempFile(all, ".txt");
    where = `[Full output (${bytes} bytes): ${fullOutputPath}; read it in parts with offset and limit]`;
  } catch (err) {
    where = `[The full output could not be saved: ${err instanceof Error ? err.message : String(err)}]`;
  }
  const lines = all.split("\n").length - (all.endsWith("\n") ? 1 : 0);
  const text = `Output cut to ${limit / 1024} KB of ${bytes} bytes (${lines} lines, about ${Math.ceil(bytes / 4)} tokens):\n\n${cut}\n\n${where}`;
  return { content: [{ type: "text", text }, ...content.filter((b) => b.type === "image")], ...(fullOutputPath ? { fullOutputPath } : {}) };
}

/** The first and last `limit / 2` bytes of `text` (at character boundaries) around a marker counting the characters left out. */
export function cutMiddle(text: string, limit: number): string {
  const buf = Buffer.from(text, "utf8");
  const start = (i: number) => i >= buf.length || (buf[i]! & 0xc0) !== 0x80;
  let head = Math.floor(limit / 2);
  while (head > 0 && !start(head)) head--;
  let tail = buf.length - (limit - Math.floor(limit / 2));
  while (tail < buf.length && !start(tail)) tail++;
  if (tail <= head) return text;
  const removed = [...buf.subarray(head, tail).toString("utf8")].length;
  return `${buf.subarray(0, head).toString("utf8")}…${removed} chars truncated…${buf.subarray(tail).toString("utf8")}`;
}
