import type { ToolAnnotations, ToolResult, Tool } from "../tools/tool.ts";
import { ToolArgumentError } from "../tools/tool.ts";
import { PionError } from "../util/errors.ts";
import { compileJsonSchema, JsonSchemaError, type JsonSchema, type SchemaCheck } from "../util/json-schema.ts";

export interface HostToolDef {
  name: string;
  label?: string;
  description: string;
  parameters: JsonSchema;
  annotations?: ToolAnnotations;
}

/** Frames pion writes for the host tool sub-protocol (spec 002). */
export type HostToolFrame =
  | { type: "host_tool_call"; id: string; toolCallId: string; toolName: string; arguments: unknown }
  | { type: "host_tool_cancel"; id: string; targetId: string };

interface Pending {
  resolve: (r: ToolResult) => void;
  onUpdate?: (partial: ToolResult) => void;
}

/**
 * Tools the host owns: a call is sent as `host_tool_call` and waits for the host's
 * `host_tool_result` (with optional `host_tool_update`s on the way); abort sends
 * `host_tool_cancel`. Frames for unknown ids are ignored.
 */
export class HostTools {
  private defs: { def: HostToolDef; schema: SchemaCheck }[] = [];
  private pending = new Map<string, Pending>();
  private seq = 0;
  private cancelSeq = 0;

  constructor(private send: (frame: HostToolFrame) => void) {}

  /**
   * Replace the whole set; returns the registered names. A parameters schema that cannot be
   * checked in full refuses the whole set (the previous one stays).
   */
  set(defs: HostToolDef[]): string[] {
    const compiled = defs.map((def) => {
      try {
        return { def, schema: compileJsonSchema(def.parameters) };
      } catch (err) {
        if (!(err instanceof JsonSchemaError)) throw err;
        throw new PionError(`Host tool "${def.name}": its parameters schema cannot be checked: ${err.message}`, "invalid_argument");
      }
    });
    this.defs = compiled;
    return defs.map((d) => d.name);
  }

  tools(): Tool[] {
    return this.defs.map(({ def, schema }) => this.toTool(def, schema));
  }

  update(id: string, partial: ToolResult): void {
    this.pending.get(id)?.onUpdate?.(partial);
  }

  result(id: string, result: ToolResult, isError?: boolean): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    p.resolve({ content: result.content, details: result.details, isError: isError === true });
  }

  private toTool(def: HostToolDef, schema: SchemaCheck): Tool<Record<string, unknown>> {
    return {
      name: def.name,
      label: def.label,
      ...(def.annotations ? { annotations: def.annotations } : {}),
      description: def.description,
      parameters: def.parameters,
      parse: async (args) => {
        const err = await schema.check(args);
        if (err) throw new ToolArgumentError(err);
        return args as Record<string, unknown>;
      },
      execute: (args, ctx) =>
        new Promise<ToolResult>((resolve) => {
          const id = `host_${++this.seq}`;
          const onAbort = () => {
            if (!this.pending.delete(id)) return;
            this.send({ type: "host_tool_cancel", id: `host_cancel_${++this.cancelSeq}`, targetId: id });
            resolve({ content: [{ type: "text", text: `Tool "${def.name}" was cancelled.` }], isError: true });
          };
          this.pending.set(id, {
            resolve: (r) => {
              ctx.signal.removeEventListener("abort", onAbort);
              resolve(r);
            },
            onUpdate: ctx.onUpdate,
          });
          ctx.signal.addEventListener("abort", onAbort, { once: true });
          this.send({ type: "host_tool_call", id, toolCallId: ctx.callId, toolName: def.name, arguments: args });
          if (ctx.signal.aborted) onAbort();
        }),
    };
  }
}
