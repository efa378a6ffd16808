/**
 * An extension's `registerTool` definition as a pion Tool: JSON Schema (or TypeBox-built)
 * parameters checked in full before execution (a schema that cannot be checked throws here),
 * after loose arguments are coerced to them as the reference does (`"42"` for a number, one
 * value for an array, a null optional dropped), `prepareArguments` applied first, streaming updates
 * forwarded through ctx.onUpdate. A throwing execute is left to the loop, which turns the
 * message into an error result for the model.
 */
import type { ImageContent, TextContent } from "../providers/types.ts";
import { ToolArgumentError, type Tool, type ToolAnnotations, type ToolResult } from "../tools/tool.ts";
import { compileJsonSchema, describeSchemaIssues } from "../util/json-schema.ts";
import type { ExtensionContext, ToolDefinition } from "./api.ts";
import { toJsonSchema } from "./type-builder.ts";
import type { ExtensionTool } from "./types.ts";

/**
 * A definition carrying a pion Tool under this key (pion's own factories, surface/coding-builtin-extensions.ts)
 * registers that tool itself: it gets the whole ToolContext (nested calls through the loop's pipeline).
 */
export const NATIVE_TOOL: unique symbol = Symbol.for("pion.extensions.nativeTool");

export function adaptTool(def: ToolDefinition, extensionPath: string, context: () => ExtensionContext): ExtensionTool {
  const inactive = def.defaultActive === false ? { defaultActive: false as const } : {};
  const native = (def as { [NATIVE_TOOL]?: Tool })[NATIVE_TOOL];
  if (native) return { ...(native as Tool<Record<string, unknown>>), extensionPath, promptSnippet: def.promptSnippet, promptGuidelines: def.promptGuidelines, ...inactive };
  const parameters = toJsonSchema(def.parameters);
  const schema = compileJsonSchema(parameters);
  return {
    name: def.name,
    label: def.label,
    ...(isAnnotations(def.annotations) ? { annotations: def.annotations } : {}),
    description: typeof def.description === "string" ? def.description : "",
    parameters,
    extensionPath,
    promptSnippet: def.promptSnippet,
    promptGuidelines: def.promptGuidelines,
    ...inactive,
    async parse(args) {
      const prepared: unknown = def.prepareArguments ? def.prepareArguments(args) : args;
      // Coerced as the reference coerces an extension tool's arguments ("42" for a number, ...);
      // a copy, so the call in the transcript keeps what the model sent.
      await schema.ready;
      const result = schema.parseNow(structuredClone(prepared ?? {}));
      if (!result.ok) throw new ToolArgumentError(describeSchemaIssues(result.issues));
      return result.value as Record<string, unknown>;
    },
    async execute(args, ctx) {
      const onUpdate = ctx.onUpdate;
      const result: unknown = await def.execute(
        ctx.callId,
        args,
        ctx.signal,
        onUpdate ? (partial) => onUpdate(toToolResult(partial, def.name)) : undefined,
        { ...context(), cwd: ctx.cwd },
      );
      return toToolResult(result, def.name);
    },
  };
}

function isAnnotations(a: unknown): a is ToolAnnotations {
  return typeof a === "object" && a !== null && !Array.isArray(a);
}

/** Normalize what an extension returned; a bare string is accepted as text. */
export function toToolResult(value: unknown, toolName: string): ToolResult {
  if (typeof value === "string") return { content: [{ type: "text", text: value }] };
  if (!value || typeof value !== "object") throw new Error(`Tool "${toolName}" returned no result`);
  const r = value as { content?: unknown; details?: unknown; isError?: unknown; structuredContent?: unknown };
  const content = Array.isArray(r.content) ? r.content.filter(isContentBlock) : [];
  return {
    content,
    details: r.details,
    ...(r.isError === true ? { isError: true } : {}),
    ...(r.structuredContent !== undefined ? { structuredContent: r.structuredContent } : {}),
  };
}

export function isContentBlock(block: unknown): block is TextContent | ImageContent {
  if (!block || typeof block !== "object") return false;
  const b = block as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown };
  if (b.type === "text") return typeof b.text === "string";
  return b.type === "image" && typeof b.data === "string" && typeof b.mimeType === "string";
}
