import type { Tool, ToolResult } from "../tools/tool.ts";
import type { CredentialGuard } from "./guard.ts";

/**
 * Tools whose results, partial results and error messages are masked before the loop sees
 * them, so a credential printed by any tool (built-in, host, extension, MCP) reaches neither
 * the events, the model's context, the session nor an export. Wrappers are cached per tool.
 */
export function toolMasker(guard: CredentialGuard): (tools: ReadonlyMap<string, Tool>) => Map<string, Tool> {
  const wrapped = new WeakMap<Tool, Tool>();
  const wrap = (tool: Tool): Tool => {
    let w = wrapped.get(tool);
    if (!w) {
      w = {
        ...tool,
        parse: (args) => tool.parse(args),
        async execute(args, ctx) {
          const onUpdate = ctx.onUpdate;
          const inner = onUpdate ? { ...ctx, onUpdate: (p: ToolResult) => onUpdate(guard.maskDeep(p)) } : ctx;
          try {
            return guard.maskDeep(await tool.execute(args, inner));
          } catch (err) {
            if (err instanceof Error) err.message = guard.mask(err.message);
            else err = guard.mask(String(err));
            throw err;
          }
        },
      };
      wrapped.set(tool, w);
    }
    return w;
  };
  return (tools) => new Map([...tools].map(([name, tool]) => [name, wrap(tool)]));
}
