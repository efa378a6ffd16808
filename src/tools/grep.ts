import { readFile, stat } from "node:fs/promises";
import { basename } from "node:path";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/grep.md" with { type: "text" };
import { sniffFile } from "./file-kind.ts";
import { defineParams, positiveInt } from "./params.ts";
import { resolveToolPath, withFsErrors } from "./path.ts";
import { READ_ONLY, type Tool } from "./tool.ts";
import { DEFAULT_MAX_BYTES, formatSize, splitLines, truncateHead, truncateLine, type Truncation } from "./truncate.ts";
import { walk } from "./walk.ts";

const Params = v.object({
  pattern: v.pipe(v.string(), v.description("Regular expression to search for (or plain text with literal: true)")),
  path: v.optional(v.pipe(v.string(), v.description("File or folder to search (default: the working directory)"))),
  glob: v.optional(v.pipe(v.string(), v.description("Only search files matching this glob, e.g. '*.ts' or 'src/**/*.md'"))),
  ignoreCase: v.optional(v.pipe(v.boolean(), v.description("Match case-insensitively (default: false)"))),
  literal: v.optional(v.pipe(v.boolean(), v.description("Treat pattern as plain text, not a regular expression"))),
  context: v.optional(
    v.pipe(v.number(), v.integer(), v.minValue(0), v.description("Lines of context before and after each match")),
  ),
  limit: v.optional(positiveInt("Maximum number of matches to return (default: 100)")),
});
export type GrepArgs = v.InferOutput<typeof Params>;

export interface GrepDetails {
  matchLimitReached: number | null;
  truncation: Truncation | null;
  linesTruncated: boolean;
}

export interface GrepToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Whether a path is a folder, asked elsewhere; the search itself reads the local disk. */
  operations?: GrepOperations;
}

/** The reference's shape: only the folder check is pluggable. Throws when the path does not exist. */
export interface GrepOperations {
  isDirectory(abs: string): boolean | Promise<boolean>;
}

export const DEFAULT_GREP_LIMIT = 100;
/** Matching lines are often minified code; this keeps one match from filling the output. */
export const GREP_MAX_LINE_CHARS = 500;

function compile(args: GrepArgs): RegExp {
  const source = args.literal ? args.pattern.replace(/[.*+?^${}()|[\]\\]/g, "\\$&") : args.pattern;
  try {
    return new RegExp(source, args.ignoreCase ? "i" : "");
  } catch (err) {
    const reason = err instanceof Error ? err.message : String(err);
    throw new Error(`Invalid regular expression ${JSON.stringify(args.pattern)}: ${reason}. Use literal: true to search for plain text.`);
  }
}

function globFilter(glob: string | undefined): (rel: string) => boolean {
  if (!glob) return () => true;
  const g = new Bun.Glob(glob);
  return glob.includes("/") ? (rel) => g.match(rel) : (rel) => g.match(rel.slice(rel.lastIndexOf("/") + 1));
}

async function* candidates(abs: string, args: GrepArgs, signal: AbortSignal, ops?: GrepOperations): AsyncGenerator<{ abs: string; rel: string }> {
  const isDir = await withFsErrors(args.path ?? ".", async () => (ops ? ops.isDirectory(abs) : (await stat(abs)).isDirectory()));
  if (!isDir) {
    yield { abs, rel: basename(abs) };
    return;
  }
  const wanted = globFilter(args.glob);
  for await (const entry of walk(abs, signal)) if (!entry.isDir && wanted(entry.rel)) yield entry;
}

export function createGrepTool(options: GrepToolOptions = {}): Tool<GrepArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "grep",
    annotations: READ_ONLY,
    label: "Grep",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const root = resolveToolPath(args.path ?? ".", options.cwd ?? ctx.cwd);
      const re = compile(args);
      const limit = args.limit ?? DEFAULT_GREP_LIMIT;
      const context = args.context ?? 0;
      const out: string[] = [];
      let matches = 0;
      let limitReached = false;
      let linesTruncated = false;
      let outBytes = 0;
      const emit = (line: string) => {
        out.push(line);
        outBytes += line.length + 1;
      };
      search: for await (const file of candidates(root, args, ctx.signal, options.operations)) {
        const bytes = await readFile(file.abs).catch(() => null);
        if (!bytes || sniffFile(bytes.subarray(0, 8192)).kind !== "text") continue;
        const lines = splitLines(new TextDecoder().decode(bytes));
        let shownUpTo = -1;
        for (let i = 0; i < lines.length; i++) {
          if (!re.test(lines[i])) continue;
          if (matches >= limit) {
            limitReached = true;
            break search;
          }
          if (outBytes > DEFAULT_MAX_BYTES) break search;
          matches++;
          if (shownUpTo >= 0 && i - context > shownUpTo + 1) emit("--");
          for (let j = Math.max(i - context, shownUpTo + 1); j <= Math.min(i + context, lines.length - 1); j++) {
            const raw = lines[j].replace(/\r$/, "");
            const text = truncateLine(raw, GREP_MAX_LINE_CHARS);
            linesTruncated ||= text !== raw;
            emit(j === i || re.test(lines[j]) ? `${file.rel}:${j + 1}: ${text}` : `${file.rel}-${j + 1}- ${text}`);
            shownUpTo = j;
          }
        }
      }
      if (out.length === 0) return { content: [{ type: "text", text: "No matches found" }], details: null };

      const t = truncateHead(out.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      const notes: string[] = [];
      if (limitReached) notes.push(`${limit} matches limit reached. Use limit=${limit * 2} for more, or refine the pattern.`);
      if (t.truncated) notes.push(`Output truncated at ${formatSize(t.maxBytes)}. Refine the pattern or path.`);
      if (linesTruncated) notes.push(`Lines longer than ${GREP_MAX_LINE_CHARS} characters were cut; read the file to see them.`);
      const text = notes.length ? `${t.content}\n\n[${notes.join(" ")}]` : t.content;
      const details: GrepDetails = {
        matchLimitReached: limitReached ? limit : null,
        truncation: t.truncated ? t : null,
        linesTruncated,
      };
      return { content: [{ type: "text", text }], details };
    },
  };
}
