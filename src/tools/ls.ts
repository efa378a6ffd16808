import { readdir, stat } from "node:fs/promises";
import { join } from "node:path";
import * as v from "valibot";
import DESCRIPTION from "./descriptions/ls.md" with { type: "text" };
import { defineParams, positiveInt } from "./params.ts";
import { resolveToolPath, withFsErrors } from "./path.ts";
import { READ_ONLY, type Tool } from "./tool.ts";
import { truncateHead, type Truncation } from "./truncate.ts";

const Params = v.object({
  path: v.optional(v.pipe(v.string(), v.description("Folder to list (default: the working directory)"))),
  limit: v.optional(positiveInt("Maximum number of entries (default: 500)")),
});
export type LsArgs = v.InferOutput<typeof Params>;

export interface LsDetails {
  entryLimitReached: number | null;
  truncation: Truncation | null;
}

export interface LsToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** Lists folders elsewhere (e.g. over ssh) instead of the local disk. */
  operations?: LsOperations;
}

/** The reference's shape. `stat` throws when the path does not exist. */
export interface LsOperations {
  exists(abs: string): boolean | Promise<boolean>;
  stat(abs: string): { isDirectory(): boolean } | Promise<{ isDirectory(): boolean }>;
  readdir(abs: string): string[] | Promise<string[]>;
}

export const DEFAULT_LS_LIMIT = 500;

const byName = (a: string, b: string) => {
  const [x, y] = [a.toLowerCase(), b.toLowerCase()];
  return x < y ? -1 : x > y ? 1 : a < b ? -1 : a > b ? 1 : 0;
};

export function createLsTool(options: LsToolOptions = {}): Tool<LsArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "ls",
    annotations: READ_ONLY,
    label: "ls",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const shown = args.path ?? ".";
      const dir = resolveToolPath(shown, options.cwd ?? ctx.cwd);
      const names = options.operations ? await listElsewhere(options.operations, dir, shown) : await listHere(dir, shown);
      if (names.length === 0) return { content: [{ type: "text", text: "(empty directory)" }], details: null };
      names.sort(byName);
      const limit = args.limit ?? DEFAULT_LS_LIMIT;
      const limitReached = names.length > limit;
      const t = truncateHead(names.slice(0, limit).join("\n"), { maxLines: Number.MAX_SAFE_INTEGER });
      const notes: string[] = [];
      if (limitReached) notes.push(`${limit} of ${names.length} entries shown. Use limit=${names.length} to see all.`);
      if (t.truncated) notes.push(`Output truncated at ${t.outputLines} entries (50KB limit).`);
      const text = notes.length ? `${t.content}\n\n[${notes.join(" ")}]` : t.content;
      const details: LsDetails = { entryLimitReached: limitReached ? limit : null, truncation: t.truncated ? t : null };
      return { content: [{ type: "text", text }], details };
    },
  };
}

/** Entry names, folders marked with a trailing "/" (a symlink to a folder counts as one). */
async function listHere(dir: string, shown: string): Promise<string[]> {
  const info = await withFsErrors(shown, () => stat(dir));
  if (!info.isDirectory()) throw new Error(`${shown} is not a directory`);
  const entries = await withFsErrors(shown, () => readdir(dir, { withFileTypes: true }));
  return Promise.all(
    entries.map(async (e) => {
      const isDir = e.isDirectory() || (e.isSymbolicLink() && (await stat(join(dir, e.name)).catch(() => null))?.isDirectory());
      return isDir ? `${e.name}/` : e.name;
    }),
  );
}

async function listElsewhere(ops: LsOperations, dir: string, shown: string): Promise<string[]> {
  if (!(await ops.exists(dir))) throw new Error(`File not found: ${shown}`);
  if (!(await ops.stat(dir)).isDirectory()) throw new Error(`${shown} is not a directory`);
  const names = await ops.readdir(dir);
  return Promise.all(
    names.map(async (name) => {
      // An entry that vanished or cannot be examined is listed as a file.
      const isDir = await Promise.resolve(ops.stat(join(dir, name))).then((st) => st.isDirectory(), () => false);
      return isDir ? `${name}/` : name;
    }),
  );
}
