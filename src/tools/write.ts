import * as v from "valibot";
import DESCRIPTION from "./descriptions/write.md" with { type: "text" };
import { diskTextOps, type TextFileOps } from "./file-ops.ts";
import { defineParams } from "./params.ts";
import { joinToolPath, withFsErrors } from "./path.ts";
import { writeTarget, type FileBoundary } from "./real-path.ts";
import type { Tool } from "./tool.ts";

const Params = v.object({
  path: v.pipe(v.string(), v.description("Path of the file to write (relative or absolute)")),
  content: v.pipe(v.string(), v.description("The complete new content of the file")),
});
export type WriteArgs = v.InferOutput<typeof Params>;

export interface WriteToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** The sandbox's boundary: a write outside its writable folders is refused. */
  boundary?: FileBoundary;
  /** Where the text goes (default: the disk). */
  files?: TextFileOps;
}

export function createWriteTool(options: WriteToolOptions = {}): Tool<WriteArgs> {
  const { parameters, parse } = defineParams(Params);
  return {
    name: "write",
    label: "Write",
    description: DESCRIPTION,
    parameters,
    parse,
    async execute(args, ctx) {
      const abs = writeTarget(joinToolPath(args.path, options.cwd ?? ctx.cwd), ctx.checkedPath, args.path, options.boundary);
      ctx.signal.throwIfAborted();
      await withFsErrors(args.path, () => (options.files ?? diskTextOps).writeText(abs, args.content));
      const bytes = Buffer.byteLength(args.content);
      return { content: [{ type: "text", text: `Successfully wrote ${bytes} bytes to ${args.path}` }] };
    },
  };
}
