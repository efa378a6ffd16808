/**
 * Keeps the text an MCP result gives the model under 20 KB: longer text keeps its first and
 * last 10 KB around a `…N chars truncated…` marker, and the whole text goes to a temp file
 * (0600) named in the result. Images pass unchanged.
 */
import type { ImageContent, TextContent } from "../providers/types.ts";
import { cutMiddle, saveTempFile } from "../util/middle-cut.ts";

export const MCP_TEXT_LIMIT_BYTES = 20 * 1024;

type Block = TextContent | ImageContent;

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
    fullOutputPath = saveTempFile(all, ".txt", "pion-mcp-");
    where = `[Full output (${bytes} bytes): ${fullOutputPath}; read it in parts with offset and limit]`;
  } catch (err) {
    where = `[The full output could not be saved: ${err instanceof Error ? err.message : String(err)}]`;
  }
  const lines = all.split("\n").length - (all.endsWith("\n") ? 1 : 0);
  const text = `Output cut to ${limit / 1024} KB of ${bytes} bytes (${lines} lines, about ${Math.ceil(bytes / 4)} tokens):\n\n${cut}\n\n${where}`;
  return { content: [{ type: "text", text }, ...content.filter((b) => b.type === "image")], ...(fullOutputPath ? { fullOutputPath } : {}) };
}
