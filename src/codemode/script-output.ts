/**
 * A codemode script's options line and what its result looks like to the model: a
 * "Script completed"/"Script failed" header with the wall time, the text and image items in
 * order (`==> text N/M <==` before each when there are several texts), the console lines in one
 * `<console_output>` block, and on failure "Script error:". Text past `max_output_tokens` is cut
 * in the middle with the whole of it in a temp file named in the result.
 */
import type { ImageContent, TextContent } from "../providers/types.ts";
import { cutMiddle, saveTempFile } from "../util/middle-cut.ts";
import type { ScriptOutcome } from "./runner.ts";

export interface ScriptOptions {
  maxOutputTokens: number;
  timeoutMs?: number;
}

const OPTIONS_LINE = /^\s*\/\/\s*@options:(.*)$/;
const CHARS_PER_TOKEN = 4;
const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

/** The options of the first line; an options line elsewhere, or a bad one, is an error before the script runs. */
export function parseOptions(code: string): ScriptOptions {
  const lines = code.split("\n");
  const out: ScriptOptions = { maxOutputTokens: 10_000 };
  lines.forEach((line, i) => {
    const m = OPTIONS_LINE.exec(line);
    if (!m) return;
    if (i !== 0) throw new Error(`an // @options: line must be the script's first line (found on line ${i + 1})`);
    let raw: unknown;
    try {
      raw = JSON.parse(m[1]!);
    } catch {
      throw new Error("the // @options: line is not a JSON object");
    }
    if (!raw || typeof raw !== "object" || Array.isArray(raw)) throw new Error("the // @options: line is not a JSON object");
    const o = raw as Record<string, unknown>;
    for (const k of Object.keys(o)) if (k !== "max_output_tokens" && k !== "timeout_ms") throw new Error(`unknown option "${k}" (max_output_tokens, timeout_ms)`);
    const positive = (k: string) => {
      const v = o[k];
      if (typeof v !== "number" || !Number.isInteger(v) || v <= 0) throw new Error(`${k} must be a positive integer`);
      return v;
    };
    if ("max_output_tokens" in o) out.maxOutputTokens = positive("max_output_tokens");
    if ("timeout_ms" in o) out.timeoutMs = positive("timeout_ms");
  });
  return out;
}

/** An `image()` argument as an image block: a base64 data URL, `{image_url}`, or `{type: "image", data, mimeType}`. */
export function toImage(value: unknown): ImageContent {
  let v = value;
  if (v && typeof v === "object" && "image_url" in v) {
    const u = (v as { image_url: unknown }).image_url;
    v = typeof u === "object" && u && "url" in u ? (u as { url: unknown }).url : u;
  }
  if (typeof v === "string") {
    const m = /^data:([^;,]+);base64,(.*)$/s.exec(v);
    if (!m) throw new Error("image() takes a base64 data: URL, {image_url} or an image block; remote URLs are not supported");
    v = { type: "image", mimeType: m[1], data: m[2] };
  }
  const b = v as { type?: unknown; data?: unknown; mimeType?: unknown };
  if (b?.type !== "image" || typeof b.data !== "string" || typeof b.mimeType !== "string") throw new Error("image() takes a base64 data: URL, {image_url} or an image block");
  if (!IMAGE_TYPES.has(b.mimeType)) throw new Error(`image(): ${b.mimeType} is not PNG, JPEG, GIF or WebP`);
  return { type: "image", data: b.data, mimeType: b.mimeType };
}

export function formatOutcome(r: ScriptOutcome, ms: number, o: ScriptOptions): { content: (TextContent | ImageContent)[]; fullOutputPath?: string; isError: boolean } {
  const texts = r.items.filter((i) => i.kind === "text").length;
  const parts: (string | ImageContent)[] = [];
  let n = 0;
  let imageError: string | undefined;
  for (const item of r.items) {
    if (item.kind === "text") parts.push(texts > 1 ? `==> text ${++n}/${texts} <==\n${item.text}` : item.text);
    else {
      try {
        const img = toImage(item.value);
        const path = saveTempFile(Buffer.from(img.data, "base64"), `.${img.mimeType.split("/")[1]}`);
        parts.push(`[image: ${path}]`, img);
      } catch (err) {
        imageError ??= err instanceof Error ? err.message : String(err);
      }
    }
  }
  if (r.console.length > 0) parts.push(`<console_output>\n${r.console.join("\n")}\n</console_output>`);
  const error = r.error ?? imageError;
  const ok = r.ok && error === undefined;
  if (!ok) parts.push(`Script error: ${error}`);
  const head = `Script ${ok ? "completed" : "failed"} in ${(ms / 1000).toFixed(2)} s`;
  const text = [head, ...parts.filter((p): p is string => typeof p === "string")].join("\n");
  const limit = o.maxOutputTokens * CHARS_PER_TOKEN;
  const images = parts.filter((p): p is ImageContent => typeof p !== "string");
  if (text.length <= limit) return { content: [{ type: "text", text }, ...images], isError: !ok };
  const fullOutputPath = saveTempFile(text, ".txt");
  const cut = cutMiddle(text, limit);
  return { content: [{ type: "text", text: `${cut}\n\n[Full output: ${fullOutputPath}]` }, ...images], fullOutputPath, isError: !ok };
}
