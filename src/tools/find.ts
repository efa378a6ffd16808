import { stat } from "node:fs/promises";
import { relative, resolve, sep } from "node:path";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/find.md" with { type: "text" };
import { defineParams, positiveInt } from "./params.ts";
import { resolveToolPath, withFsErrors } from "./path.ts";
import { READ_ONLY, type Tool } from "./tool.ts";
import { truncateHead, type Truncation } from "./truncate.ts";
import { walk } from "./walk.ts";

const Params = v.object({
  pattern: v.pipe(v.string(), v.description("Glob to match, e.g. '*.ts', '**/*.json' or 'src/**/*.spec.ts'")),
  path: v.optional(v.pipe(v.string(), v.description("Folder to search in (default: the working directory)"))),
  limit: v.optional(positiveInt("Maximum number of results (default: 1000)")),
});
export type FindArgs = v.InferOutput<typeof Params>;

export interface FindDetails {
  resultLimitReached: number | null;
  truncation: Truncation | null;
}

export interface FindToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Searches elsewhere (e.g. over ssh) instead of walking the local disk. */
  operations?: FindOperations;
}

/** The reference's shape. `glob` returns paths relative to `cwd` or absolute. */
export interface FindOperations {
  exists(abs: string): boolean | Promise<boolean>;
  glob(pattern: string, cwd: string, o: { ignore: string[]; limit: number }): string[] | Promise<string[]>;
}

/** What the local walk skips, for a search elsewhere. */
const IGNORED = ["**/node_modules/**", "**/.git/**"];

export const DEFAULT_FIND_LIMIT = 1000;

export function createFindTool(options: FindToolOptions = {}): Tool<FindArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "find",
    annotations: READ_ONLY,
    label: "Find",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const shown = args.path ?? ".";
      const root = resolveToolPath(shown, options.cwd ?? ctx.cwd);
      const limit = args.limit ?? DEFAULT_FIND_LIMIT;
      const { found, limitReached } = options.operations
        ? await findElsewhere(options.operations, root, shown, args.pattern, limit)
        : await findHere(root, shown, args.pattern, limit, ctx.signal);
      if (found.length === 0) return { content: [{ type: "text", text: "No files found matching pattern" }], details: null };
      found.sort();
      const t = truncateHead(found.join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      const notes: string[] = [];
      if (limitReached) notes.push(`${limit} results limit reached. Use limit=${limit * 2} for more, or refine the pattern.`);
      if (t.truncated) notes.push(`Output truncated at ${t.outputLines} of ${t.totalLines} results (50KB limit).`);
      const text = notes.length ? `${t.content}\n\n[${notes.join(" ")}]` : t.content;
      const details: FindDetails = { resultLimitReached: limitReached ? limit : null, truncation: t.truncated ? t : null };
      return { content: [{ type: "text", text }], details };
    },
  };
}

async function findHere(root: string, shown: string, pattern: string, limit: number, signal: AbortSignal) {
  const info = await withFsErrors(shown, () => stat(root));
  if (!info.isDirectory()) throw new Error(`${shown} is not a directory`);
  const glob = new Bun.Glob(pattern);
  // Like fd: a pattern without "/" is matched against the name, otherwise against the relative path.
  const byName = !pattern.includes("/");
  const found: string[] = [];
  let limitReached = false;
  for await (const entry of walk(root, signal)) {
    const target = byName ? entry.rel.slice(entry.rel.lastIndexOf("/") + 1) : entry.rel;
    if (!glob.match(target)) continue;
    if (found.length >= limit) {
      limitReached = true;
      break;
    }
    found.push(entry.isDir ? `${entry.rel}/` : entry.rel);
  }
  return { found, limitReached };
}

async function findElsewhere(ops: FindOperations, root: string, shown: string, pattern: string, limit: number) {
  if (!(await ops.exists(root))) throw new Error(`File not found: ${shown}`);
  // One more than the limit tells whether it was reached.
  const paths = await ops.glob(pattern, root, { ignore: IGNORED, limit: limit + 1 });
  const rel = paths.map((p) => relative(root, resolve(root, p)).split(sep).join("/"));
  return { found: rel.slice(0, limit), limitReached: rel.length > limit };
}
