import { open, stat } from "node:fs/promises";
import type { ImageContent } from "../providers/types.ts";
import { SNIFF_BYTES, sniffFile } from "../tools/file-kind.ts";
import { resolveToolPath } from "../tools/path.ts";
import { MAX_IMAGE_BYTES } from "../tools/read.ts";
import { DEFAULT_MAX_BYTES, DEFAULT_MAX_LINES, formatSize, truncateHead } from "../tools/truncate.ts";

/** A `@path` argument that cannot go into the prompt; the message names it. */
export class FileArgError extends Error {}

export interface FileArgs {
  /** The positionals that are not `@path`, in order. */
  messages: string[];
  /** Each file framed as `<file name="ABS">...</file>` plus a newline, to go before the first message. */
  prefix: string;
  /** The image files, in order; their framed entry in `prefix` is empty. */
  images: ImageContent[];
}

/**
 * Reads the `@path` arguments of a one-shot run. Paths resolve from `cwd`, `~` is the home
 * folder. A text file is its content, cut at the read tool's limits (2000 lines / 50KB) with
 * the cut said inside its frame; a png, jpeg, gif or webp (known by its first bytes, not its
 * name) is an image. A missing file, a folder, an unreadable file, a binary file that is no
 * such image, or an image over the read tool's image limit throws FileArgError naming it.
 */
export async function readFileArgs(positionals: readonly string[], cwd: string): Promise<FileArgs> {
  const out: FileArgs = { messages: [], prefix: "", images: [] };
  for (const arg of positionals) {
    if (!arg.startsWith("@")) {
      out.messages.push(arg);
      continue;
    }
    if (arg.length === 1) throw new FileArgError(`${arg}: no file named after "@"`);
    const abs = resolveToolPath(arg, cwd);
    const bytes = await readWhole(arg, abs);
    const kind = sniffFile(bytes.subarray(0, SNIFF_BYTES));
    if (kind.kind === "image") {
      if (bytes.length > MAX_IMAGE_BYTES) {
        throw new FileArgError(`${arg}: an image of ${formatSize(bytes.length)}, over the ${formatSize(MAX_IMAGE_BYTES)} limit for images`);
      }
      out.images.push({ type: "image", data: Buffer.from(bytes).toString("base64"), mimeType: kind.mimeType });
      out.prefix += `<file name="${abs}"></file>\n`;
      continue;
    }
    let text: string | undefined;
    if (kind.kind === "text") {
      try {
        text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
      } catch {
        text = undefined;
      }
    }
    if (text === undefined) throw new FileArgError(`${arg}: a binary file, neither text nor a png, jpeg, gif or webp image`);
    out.prefix += `<file name="${abs}">\n${framedText(text)}\n</file>\n`;
  }
  return out;
}

async function readWhole(arg: string, abs: string): Promise<Uint8Array> {
  const info = await stat(abs).catch((err: NodeJS.ErrnoException) => {
    throw new FileArgError(err.code === "ENOENT" ? `${arg}: file not found (${abs})` : `${arg}: cannot read ${abs}: ${err.message}`);
  });
  if (info.isDirectory()) throw new FileArgError(`${arg}: ${abs} is a directory, not a file`);
  const file = await open(abs, "r").catch((err: Error) => {
    throw new FileArgError(`${arg}: cannot read ${abs}: ${err.message}`);
  });
  try {
    return new Uint8Array(await file.readFile());
  } catch (err) {
    throw new FileArgError(`${arg}: cannot read ${abs}: ${(err as Error).message}`);
  } finally {
    await file.close();
  }
}

/** The text without its final newline, cut at the read tool's limits with the cut said. */
function framedText(text: string): string {
  const t = truncateHead(text, { maxLines: DEFAULT_MAX_LINES, maxBytes: DEFAULT_MAX_BYTES });
  // The text as it is, its last newline too: the reference frames `${text}\n</file>`.
  if (!t.truncated) return t.content;
  const body = t.content.endsWith("\n") ? t.content.slice(0, -1) : t.content;
  const limit = t.truncatedBy === "bytes" ? `the ${formatSize(t.maxBytes)} limit` : `the ${t.maxLines}-line limit`;
  return `${body}\n\n[Cut at ${limit}: showing lines 1-${t.outputLines} of ${t.totalLines} (${formatSize(t.totalBytes)}). Use the read tool with offset=${t.outputLines + 1} for the rest.]`;
}
