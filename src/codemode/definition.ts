/**
 * What the model sees of the `codemode` tool (name, description, parameters) and its argument
 * check: light, so a tool can be declared before its runner loads (tool.ts).
 */
import { ToolArgumentError } from "../tools/tool.ts";

export const CODEMODE_NAME = "codemode";

export const CODEMODE_DESCRIPTION = `Run JavaScript that calls other tools. The input is raw JavaScript, run as the body of an async function in a QuickJS sandbox (top-level await and return work; no Node APIs, file system, network or timers).
- \`await tools.<name>(args)\` calls a tool (names with characters other than letters, digits, _ and $ use _ instead): MCP tools resolve to their CallToolResult, tools with structured output (bash) to that object, others to their text; a failed or refused call rejects with an Error. Run independent calls together with Promise.allSettled.
- \`text(value)\`, \`image(dataUrlOrImageBlock)\`, \`console.log(...)\` and a top-level \`return\` add output; \`exit()\` ends the script. Only this output reaches you, so filter large results in the script.
- \`store(key, value)\` / \`load(key)\` keep small JSON values across codemode calls on this branch.
- \`ALL_TOOLS\`, \`await searchTools(query, { limit?, namespace? })\`, \`await describeTool(name)\`, \`await describeNamespace(name)\` find tools that are not declared to you, such as MCP tools.
- An optional first line sets limits: \`// @options: {"max_output_tokens": 10000, "timeout_ms": 60000}\``;

export const CODEMODE_PARAMETERS = {
  type: "object",
  properties: { code: { type: "string", description: "Raw JavaScript source." } },
  required: ["code"],
  additionalProperties: false,
};

export function parseCodemodeArgs(raw: unknown): { code: string } {
  const code = (raw as { code?: unknown } | undefined)?.code;
  if (typeof code !== "string" || code.trim() === "") throw new ToolArgumentError("code must be a non-empty string of JavaScript");
  return { code };
}
