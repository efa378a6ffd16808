import { type FileHandle, open } from "node:fs/promises";
import * as v from "valibot";
import type { ImageContent, TextContent } from "../providers/types.ts";
import DESCRIPTION from "./descriptions/read.md" with { type: "text" };
import { SNIFF_BYTES, sniffFile } from "./file-kind.ts";
import type { TextFileOps } from "./file-ops.ts";
import { defineParams, positiveInt } from "./params.ts";
import { resolveToolPath, withFsErrors } from "./path.ts";
import { LineWindow, type LineWindowResult } from "./read-window.ts";
import { READ_ONLY, type Tool, type ToolResult } from "./tool.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, type Truncation } from "./truncate.ts";

const Params = v.object({
  path: v.pipe(v.string(), v.description("Path of the file to read (relative or absolute)")),
  offset: v.optional(positiveInt("Line number to start reading from (1-based)")),
  limit: v.optional(positiveInt("Maximum number of lines to read")),
});
export type ReadArgs = v.InferOutput<typeof Params>;

export interface ReadToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Whether the current model accepts images; when false, images come back as a text note. */
  images?: boolean;
  /** Where text files are read from once the disk says they are text (default: the disk itself). */
  files?: TextFileOps;
}

export interface ReadDetails {
  truncation: Truncation | null;
}

/** Larger images are rejected by the providers' APIs anyway. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
const CHUNK_BYTES = 64 * 1024;

async function readHead(file: FileHandle): Promise<Uint8Array> {
  const buf = new Uint8Array(SNIFF_BYTES);
  const { bytesRead } = await file.read(buf, 0, SNIFF_BYTES, 0);
  return buf.subarray(0, bytesRead);
}

async function readWindow(file: FileHandle, window: LineWindow): Promise<LineWindowResult> {
  const decoder = new TextDecoder();
  const buf = new Uint8Array(CHUNK_BYTES);
  for (let pos = 0; ; ) {
    const { bytesRead } = await file.read(buf, 0, CHUNK_BYTES, pos);
    if (bytesRead === 0) break;
    pos += bytesRead;
    window.push(decoder.decode(buf.subarray(0, bytesRead), { stream: true }));
  }
  window.push(decoder.decode());
  return window.finish();
}

function textResult(path: string, offset: number, limit: number | undefined, r: LineWindowResult): ToolResult {
  const t = r.truncation;
  if (r.totalLines === 0 && offset === 1) return { content: [{ type: "text", text: "(empty file)" }], details: { truncation: null } };
  if (offset > r.totalLines) {
    throw new Error(`Offset ${offset} is beyond the end of ${path}, which has ${r.totalLines} lines.`);
  }
  const last = offset + t.outputLines - 1;
  const next = last + 1;
  let text = t.content;
  if (t.truncated) {
    const by = t.truncatedBy === "bytes" ? ` (${formatSize(t.maxBytes)} limit)` : "";
    text += `\n\n[Showing lines ${offset}-${last} of ${r.totalLines}${by}. Use offset=${next} to continue.]`;
  } else if (limit !== undefined && last < r.totalLines) {
    text += `\n\n[${r.totalLines - last} more lines in the file. Use offset=${next} to continue.]`;
  }
  const details: ReadDetails = { truncation: t.truncated ? t : null };
  return { content: [{ type: "text", text }], details };
}

async function imageResult(file: FileHandle, path: string, mimeType: string, size: number, images: boolean): Promise<ToolResult> {
  if (!images) {
    const text = `${path} is an image (${mimeType}, ${formatSize(size)}), but the current model does not support images, so it cannot be shown.`;
    return { content: [{ type: "text", text }] };
  }
  if (size > MAX_IMAGE_BYTES) {
    throw new Error(`${path} is an image of ${formatSize(size)}, over the ${formatSize(MAX_IMAGE_BYTES)} limit for images.`);
  }
  const data = Buffer.from(await file.readFile()).toString("base64");
  const note: TextContent = { type: "text", text: `Read image ${path} (${mimeType}, ${formatSize(size)})` };
  const image: ImageContent = { type: "image", data, mimeType };
  return { content: [note, image] };
}

export function createReadTool(options: ReadToolOptions = {}): Tool<ReadArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "read",
    annotations: READ_ONLY,
    label: "Read",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const abs = resolveToolPath(args.path, options.cwd ?? ctx.cwd);
      const file = await withFsErrors(args.path, () => open(abs, "r"));
      try {
        return await withFsErrors(args.path, async () => {
          const stat = await file.stat();
          if (stat.isDirectory()) throw new Error(`${args.path} is a directory, not a file. Use ls to list its contents.`);
          const kind = sniffFile(await readHead(file));
          if (kind.kind === "image") return imageResult(file, args.path, kind.mimeType, stat.size, options.images ?? true);
          if (kind.kind === "binary") {
            throw new Error(`${args.path} looks like a binary file (it contains NUL bytes), so it cannot be read as text.`);
          }
          const offset = args.offset ?? 1;
          const window = new LineWindow({ offset, limit: args.limit, maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
          if (options.files) {
            window.push(await options.files.readText(abs));
            return textResult(args.path, offset, args.limit, window.finish());
          }
          return textResult(args.path, offset, args.limit, await readWindow(file, window));
        });
      } finally {
        await file.close();
      }
    },
  };
}
