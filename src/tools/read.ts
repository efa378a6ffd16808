import { type FileHandle, open } from "node:fs/promises";
import * as v from "valibot";
import type { ImageContent } from "../providers/types.ts";
import { prepareImage } from "./images/prepare.ts";
import { resizeOptionsFrom } from "./images/resize.ts";
import DESCRIPTION from "./descriptions/read.md" with { type: "text" };
import { SNIFF_BYTES, sniffFile } from "./file-kind.ts";
import type { TextFileOps } from "./file-ops.ts";
import { defineParams, positiveInt } from "./params.ts";
import { joinToolPath, resolveToolPath, withFsErrors } from "./path.ts";
import { resolveThroughLinks, type FileBoundary } from "./real-path.ts";
import { LineWindow, type LineWindowResult } from "./read-window.ts";
import { READ_ONLY, type Tool, type ToolContext, type ToolResult } from "./tool.ts";
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
  /**
   * Whether an image over 2000x2000 pixels or 4.5 MB of base64 is scaled down before it is sent
   * (settings `images.autoResize`, default true), as the reference's `autoResizeImages`; a
   * function is asked at each call (a `ctx.reload()` may change the setting).
   */
  autoResizeImages?: boolean | (() => boolean);
  /** The model the result goes to: its models.json `inputLimits.images.resize` are the limits, as in the reference. */
  model?: () => { inputLimits?: Record<string, unknown> } | undefined;
  /** Where text files are read from once the disk says they are text (default: the disk itself). */
  files?: TextFileOps;
  /** Reads everything elsewhere instead of the local disk (e.g. over ssh); `files` is then unused. */
  operations?: ReadOperations;
  /** The sandbox's boundary: what it hides from commands is not read either. */
  boundary?: FileBoundary;
}

/** How the read tool reaches files that are not on the local disk (the reference's shape). */
export interface ReadOperations {
  readFile(abs: string): Promise<Uint8Array>;
  /** Throws when the file cannot be read. */
  access(abs: string): Promise<void>;
  /** An image's MIME type, or null/undefined for anything else; without it the bytes decide. */
  detectImageMimeType?(abs: string): Promise<string | null | undefined>;
  /** The file in chunks: only the lines shown are kept in memory; without it readFile loads it whole. */
  createReadStream?(abs: string, o: { signal?: AbortSignal }): AsyncIterable<Uint8Array>;
}

export interface ReadDetails {
  truncation: Truncation | null;
}

/** Larger images are rejected by the providers' APIs anyway. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024;
/** The largest image file read to be scaled down: decoding keeps every pixel in memory (4 bytes each). */
export const MAX_RESIZE_INPUT_BYTES = 100 * 1024 * 1024;
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

interface ImageRead {
  path: string;
  mimeType: string;
  size: number;
  bytes: () => Promise<Uint8Array>;
}

async function imageResult(file: ImageRead, options: ReadToolOptions): Promise<ToolResult> {
  const { path, mimeType, size } = file;
  const heading = `Read image ${path} (${mimeType}, ${formatSize(size)})`;
  const notShown = (why: string): ToolResult => ({ content: [{ type: "text", text: `${heading}\n[The image is not shown: ${why}.]` }] });
  if (options.images === false) {
    const text = `${path} is an image (${mimeType}, ${formatSize(size)}), but the current model does not support images, so it cannot be shown.`;
    return { content: [{ type: "text", text }] };
  }
  const auto = options.autoResizeImages;
  const resize = (typeof auto === "function" ? auto() : auto) !== false;
  const limit = resize ? MAX_RESIZE_INPUT_BYTES : MAX_IMAGE_BYTES;
  if (size > limit) {
    throw new Error(`${path} is an image of ${formatSize(size)}, over the ${formatSize(limit)} limit for images${resize ? " pion scales down" : ""}.`);
  }
  const limits = resizeOptionsFrom(options.model?.()?.inputLimits);
  const prepared = await prepareImage(await file.bytes(), mimeType, { autoResize: resize, ...(limits ? { limits } : {}) });
  if (!prepared.ok) return notShown(prepared.why);
  return { content: [{ type: "text", text: [heading, ...prepared.notes].join("\n") }, prepared.image] };
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
    execute: async (args, ctx) => withReadOutput(await readOnce(args, ctx, options)),
  };
}

/**
 * read's structuredContent, as the reference fills it: the text it shows, or for an image
 * `{type: "image", data, mimeType, note}` with the text beside it as `note`.
 */
export type ReadStructured = string | { type: "image"; data: string; mimeType: string; note: string };

export function withReadOutput(result: ToolResult): ToolResult & { structuredContent: ReadStructured } {
  const text = result.content.find((block) => block.type === "text")?.text ?? "";
  const image = result.content.find((block): block is ImageContent => block.type === "image");
  const structuredContent: ReadStructured = image ? { type: "image", data: image.data, mimeType: image.mimeType, note: text } : text;
  return { ...result, structuredContent };
}

async function readOnce(args: ReadArgs, ctx: ToolContext, options: ReadToolOptions): Promise<ToolResult> {
  const abs = resolveToolPath(args.path, options.cwd ?? ctx.cwd);
  if (options.boundary) {
    const why = options.boundary.refusesRead(resolveThroughLinks(joinToolPath(args.path, options.cwd ?? ctx.cwd)) ?? abs);
    if (why) throw new Error(why);
  }
  if (options.operations) return withFsErrors(args.path, () => readElsewhere(options.operations!, abs, args, options, ctx.signal));
  const file = await withFsErrors(args.path, () => open(abs, "r"));
  try {
    return await withFsErrors(args.path, async () => {
      const stat = await file.stat();
      if (stat.isDirectory()) throw new Error(`${args.path} is a directory, not a file. Use ls to list its contents.`);
      const kind = sniffFile(await readHead(file));
      if (kind.kind === "image") return imageResult({ path: args.path, mimeType: kind.mimeType, size: stat.size, bytes: () => file.readFile() }, options);
      if (kind.kind === "binary") {
        throw new Error(binaryMessage(args.path));
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
}

/** The same reading, through operations: the first bytes (or detectImageMimeType) tell image, binary and text apart. */
async function readElsewhere(ops: ReadOperations, abs: string, args: ReadArgs, options: ReadToolOptions, signal: AbortSignal): Promise<ToolResult> {
  await ops.access(abs);
  const declared = ops.detectImageMimeType ? await ops.detectImageMimeType(abs) : undefined;
  const offset = args.offset ?? 1;
  const window = new LineWindow({ offset, limit: args.limit, maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
  if (!declared && ops.createReadStream) {
    const decoder = new TextDecoder();
    let first = true;
    for await (const chunk of ops.createReadStream(abs, { signal })) {
      signal.throwIfAborted();
      if (first) {
        first = false;
        const kind = sniffFile(chunk);
        // An image is read whole; a text file stays a window of lines.
        if (kind.kind === "image") return wholeFile(ops, abs, args.path, kind.mimeType, options);
        if (kind.kind === "binary") throw new Error(binaryMessage(args.path));
      }
      window.push(decoder.decode(chunk, { stream: true }));
    }
    window.push(decoder.decode());
    return textResult(args.path, offset, args.limit, window.finish());
  }
  const bytes = await ops.readFile(abs);
  const kind = declared ? ({ kind: "image", mimeType: declared } as const) : sniffFile(bytes.subarray(0, SNIFF_BYTES));
  if (kind.kind === "image") return imageResult({ path: args.path, mimeType: kind.mimeType, size: bytes.length, bytes: async () => bytes }, options);
  if (kind.kind === "binary") throw new Error(binaryMessage(args.path));
  window.push(new TextDecoder().decode(bytes));
  return textResult(args.path, offset, args.limit, window.finish());
}

async function wholeFile(ops: ReadOperations, abs: string, path: string, mimeType: string, options: ReadToolOptions): Promise<ToolResult> {
  const bytes = await ops.readFile(abs);
  return imageResult({ path, mimeType, size: bytes.length, bytes: async () => bytes }, options);
}

const binaryMessage = (path: string) => `${path} looks like a binary file (it contains NUL bytes), so it cannot be read as text.`;
