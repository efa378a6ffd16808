/**
 * The reference's small tool helpers over pion's: the edit tool's diff (src/tools/diff.ts),
 * image sniffing (src/tools/file-kind.ts), the bash tool's
 * shell (settings `shellPath`, else `bash`), the extension event bus (api.ts), output cut to a
 * number of wrapped lines (text-wrap.ts).
 */
import { accessSync } from "node:fs";
import { open } from "node:fs/promises";
import { editDiff } from "../../tools/diff.ts";
import { imageMimeType } from "../../tools/file-kind.ts";
import { expandHome } from "../../util/home-path.ts";
import { createEventBus as createPionEventBus, type EventBus } from "../api.ts";
import { visibleWidth } from "../text-width.ts";
import { wrapTextWithAnsi } from "../text-wrap.ts";

/** The edit tool's display diff of a change: numbered lines, `contextLines` around each change. */
export function generateDiffString(oldContent: string, newContent: string, contextLines = 4): { diff: string; firstChangedLine: number | undefined } {
  const { diff, firstChangedLine } = editDiff(oldContent, newContent, "file", contextLines);
  return { diff, firstChangedLine };
}

/** A unified patch of a change (headers only when nothing changed). */
export function generateUnifiedPatch(path: string, oldContent: string, newContent: string, contextLines = 4): string {
  return editDiff(oldContent, newContent, path, contextLines).patch || `--- ${path}\n+++ ${path}\n`;
}

const u16le = (b: Uint8Array, i: number) => (b[i] ?? 0) | ((b[i + 1] ?? 0) << 8);
const u32le = (b: Uint8Array, i: number) => (u16le(b, i) + u16le(b, i + 2) * 0x10000);
const u32be = (b: Uint8Array, i: number) => ((b[i] ?? 0) * 0x1000000 + (((b[i + 1] ?? 0) << 16) | ((b[i + 2] ?? 0) << 8) | (b[i + 3] ?? 0)));
const tagAt = (b: Uint8Array, i: number, tag: string) => b.length >= i + tag.length && [...tag].every((c, k) => b[i + k] === c.charCodeAt(0));

/** A PNG with a proper IHDR and no animation control chunk before its image data. */
function isStillPng(b: Uint8Array): boolean {
  if (b.length < 16 || u32be(b, 8) !== 13 || !tagAt(b, 12, "IHDR")) return false;
  for (let at = 8; at + 8 <= b.length; ) {
    if (tagAt(b, at + 4, "acTL")) return false;
    if (tagAt(b, at + 4, "IDAT")) return true;
    const next = at + 12 + u32be(b, at);
    if (next <= at || next > b.length) return true;
    at = next;
  }
  return true;
}

/** A BMP whose header sizes, colour planes and bit depth are consistent. */
function isBmp(b: Uint8Array): boolean {
  if (b.length < 26 || !tagAt(b, 0, "BM")) return false;
  const size = u32le(b, 2);
  const pixels = u32le(b, 10);
  const dib = u32le(b, 14);
  if ((size !== 0 && size < 26) || pixels < 14 + dib || (size !== 0 && pixels >= size)) return false;
  const at = dib === 12 ? 22 : dib >= 40 && dib <= 124 && b.length >= 30 ? 26 : -1;
  return at !== -1 && u16le(b, at) === 1 && [1, 4, 8, 16, 24, 32].includes(u16le(b, at + 2));
}

/** The image type a model accepts, from the first bytes; null for anything else (animated PNG, JPEG-LS included). */
function supportedImageMimeType(head: Uint8Array): string | null {
  const sniffed = imageMimeType(head);
  if (sniffed === "image/jpeg") return head[3] === 0xf7 ? null : sniffed;
  if (sniffed === "image/png") return isStillPng(head) ? sniffed : null;
  if (sniffed) return sniffed;
  return isBmp(head) ? "image/bmp" : null;
}

/** How many leading bytes are enough to tell (a PNG's animation chunk comes early). */
const IMAGE_SNIFF_BYTES = 4100;

export async function detectSupportedImageMimeTypeFromFile(filePath: string): Promise<string | null> {
  const file = await open(filePath, "r");
  try {
    const head = new Uint8Array(IMAGE_SNIFF_BYTES);
    const { bytesRead } = await file.read(head, 0, IMAGE_SNIFF_BYTES, 0);
    return supportedImageMimeType(head.subarray(0, bytesRead));
  } finally {
    await file.close();
  }
}

/** The shell the bash tool runs commands with: `customShellPath` (settings `shellPath`), else bash from PATH. */
export function getShellConfig(customShellPath?: string): { shell: string; args: string[] } {
  if (customShellPath) {
    const path = expandHome(customShellPath);
    try {
      accessSync(path);
    } catch {
      throw new Error(`Custom shell path not found: ${customShellPath}`);
    }
    return { shell: path, args: ["-c"] };
  }
  return { shell: Bun.which("bash") ?? "bash", args: ["-c"] };
}

/** A bus like `pi.events`: handlers of a channel run on emit; one that throws or rejects is reported on stderr. */
export function createEventBus(): EventBus {
  return createPionEventBus((channel, err) => console.error(`Event handler error (${channel}):`, err));
}

interface RegisteredTool {
  definition: {
    name: string;
    label?: string;
    description?: string;
    parameters?: unknown;
    prepareArguments?: unknown;
    executionMode?: unknown;
    outputSchema?: unknown;
    constrainedSampling?: unknown;
    execute(toolCallId: string, params: unknown, signal?: AbortSignal, onUpdate?: unknown, ctx?: unknown): unknown;
  };
}
interface ToolContextSource {
  createToolContext(toolCallId: string, signal?: AbortSignal): unknown;
}

/** A registered tool in the agent's tool shape; its context comes from `runner` unless the caller passes one. */
export function wrapRegisteredTool(tool: RegisteredTool, runner: ToolContextSource) {
  const def = tool.definition;
  return {
    name: def.name,
    label: def.label,
    description: def.description,
    parameters: def.parameters,
    outputSchema: def.outputSchema,
    constrainedSampling: def.constrainedSampling,
    prepareArguments: def.prepareArguments,
    executionMode: def.executionMode,
    execute: (toolCallId: string, params: unknown, signal?: AbortSignal, onUpdate?: unknown, ctx?: unknown) =>
      def.execute(toolCallId, params, signal, onUpdate, ctx ?? runner.createToolContext(toolCallId, signal)),
  };
}

export const wrapRegisteredTools = (tools: readonly RegisteredTool[], runner: ToolContextSource) => tools.map((t) => wrapRegisteredTool(t, runner));

/**
 * `text` as pi-tui's Text component lays it out at `width` columns: tabs as three spaces, wrapped to
 * the width less `paddingX` on each side (the padding shrinks to fit), each line padded with spaces
 * to the full width. Blank text has no lines.
 */
function visualLines(text: string, width: number, paddingX: number): string[] {
  if (text.trim() === "") return [];
  const pad = Math.min(paddingX, Math.max(0, Math.floor((width - 1) / 2)));
  const margin = " ".repeat(pad);
  return wrapTextWithAnsi(text.replace(/\t/g, "   "), Math.max(1, width - pad * 2)).map((line) => {
    const padded = margin + line + margin;
    return padded + " ".repeat(Math.max(0, width - visibleWidth(padded)));
  });
}

/**
 * At most `maxVisualLines` of the lines `text` takes on a screen `width` columns wide: the last ones
 * (`keep` "end") or the first; `skippedCount` says how many were left out.
 */
export function truncateToVisualLines(text: string, maxVisualLines: number, width: number, paddingX = 0, keep: "start" | "end" = "end") {
  if (!text) return { visualLines: [] as string[], skippedCount: 0 };
  const lines = visualLines(text, width, paddingX);
  if (lines.length <= maxVisualLines) return { visualLines: lines, skippedCount: 0 };
  return { visualLines: keep === "start" ? lines.slice(0, maxVisualLines) : lines.slice(-maxVisualLines), skippedCount: lines.length - maxVisualLines };
}
