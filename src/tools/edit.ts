import * as v from "valibot";
import DESCRIPTION from "./descriptions/edit.md" with { type: "text" };
import { editDiff, type EditDiff } from "./diff.ts";
import { diskTextOps, type TextFileOps } from "./file-ops.ts";
import { applyEdits, EditError, type TextEdit } from "./edit-match.ts";
import { looseParser, modelSchema, parseWith } from "./params.ts";
import { joinToolPath, withFsErrors } from "./path.ts";
import { writeTarget, type FileBoundary } from "./real-path.ts";
import type { Tool } from "./tool.ts";

const EditItem = v.object({
  oldText: v.pipe(v.string(), v.description("Exact text to replace; must occur exactly once in the file")),
  newText: v.pipe(v.string(), v.description("The text to put in its place")),
});

const pathField = v.pipe(v.string(), v.description("Path of the file to edit (relative or absolute)"));

/** What the model is shown. */
const Params = v.object({
  path: pathField,
  edits: v.pipe(
    v.array(EditItem),
    v.minLength(1, "at least one edit is required"),
    v.description("Replacements, each matched against the original file; they must not overlap"),
  ),
});

/** The older single-replacement form, still accepted. */
const LegacyParams = v.object({ path: pathField, oldText: v.string(), newText: v.string() });

export interface EditArgs {
  path: string;
  edits: TextEdit[];
}

/** As the reference's edit reports it: `diff` in its numbered display form, `patch` unified. */
export type EditDetails = EditDiff;

export interface EditToolOptions {
  /** Pins the tool to this folder instead of each call's ctx.cwd. */
  cwd?: string;
  /** The sandbox's boundary: a write outside its writable folders is refused. */
  boundary?: FileBoundary;
  /** Where the text comes from and goes (default: the disk). */
  files?: TextFileOps;
}

const isLegacy = (args: unknown): boolean =>
  typeof args === "object" && args !== null && !("edits" in args) && ("oldText" in args || "newText" in args);

/** The older single-replacement form (`oldText`/`newText`) as the current one; anything else as it is. */
export function currentEditForm(args: unknown): unknown {
  if (!isLegacy(args)) return args;
  const r = v.safeParse(LegacyParams, args);
  return r.success ? { path: r.output.path, edits: [{ oldText: r.output.oldText, newText: r.output.newText }] } : args;
}

async function parseEditArgs(args: unknown): Promise<EditArgs> {
  if (isLegacy(args)) {
    const { path, oldText, newText } = parseWith(LegacyParams, args);
    return { path, edits: [{ oldText, newText }] };
  }
  parseEdits ??= looseParser(Params);
  return parseEdits(args);
}
let parseEdits: ((args: unknown) => Promise<EditArgs>) | undefined;

export function createEditTool(options: EditToolOptions = {}): Tool<EditArgs> {
  return {
    name: "edit",
    label: "Edit",
    description: DESCRIPTION,
    parameters: modelSchema(Params),
    parse: parseEditArgs,
    async execute(args, ctx) {
      const abs = writeTarget(joinToolPath(args.path, options.cwd ?? ctx.cwd), ctx.checkedPath, args.path, options.boundary);
      const files = options.files ?? diskTextOps;
      const original = await withFsErrors(args.path, () => files.readText(abs));
      let result: ReturnType<typeof applyEdits>;
      try {
        result = applyEdits(original, args.edits);
      } catch (err) {
        if (err instanceof EditError) throw new Error(`Edit of ${args.path} failed: ${err.message}`);
        throw err;
      }
      ctx.signal.throwIfAborted();
      await withFsErrors(args.path, () => files.writeText(abs, result.content));
      const details: EditDetails = editDiff(result.before, result.after, args.path);
      const n = args.edits.length;
      const text = `Successfully replaced ${n} ${n === 1 ? "block" : "blocks"} of text in ${args.path}.`;
      return { content: [{ type: "text", text }], details };
    },
  };
}
