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
          const inner = onUpdate ? { ...ctx, onUpdate: (p: ToolResult) => onUpdate(maskPartial(guard, p)) } : ctx;
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

/**
 * A partial result is the output so far of a tool still running: its text blocks may end in
 * the first piece of a credential the next snapshot completes, so they are masked as
 * unfinished output (that end held back); details and the rest are masked as they are.
 */
export function maskPartial(guard: CredentialGuard, partial: ToolResult): ToolResult {
  const rest = guard.maskDeep({ ...partial, content: [] });
  const content = partial.content.map((c) => {
    if (c.type !== "text") return c;
    const text = guard.maskUnfinished(c.text);
    return text === c.text ? c : { ...c, text };
  });
  return { ...rest, content };
}
