/**
 * `--tools` / `defaultTools` entries that name MCP tools (`mcp__<server>__<tool>`, `*` patterns,
 * and `codemode`, `tool_search` and the resource tools).
 * MCP tools are all declared unless an entry names one: then only the named ones are (as the
 * reference reads the list). `-mcp__...` removes matches either way. Light: loaded at start-up.
 */
import { wildcardMatch as match } from "../util/wildcard.ts";

export type McpToolFilter = (name: string) => boolean;

/** The tools that reach MCP servers without being one of theirs: listed in `--tools` like theirs. */
const MCP_SIDE_TOOLS = new Set(["codemode", "tool_search", "list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"]);

const isMcp = (item: string) => {
  const name = item.replace(/^[+-]/, "");
  return name.startsWith("mcp__") || MCP_SIDE_TOOLS.has(name);
};

export function splitMcpToolSpec(spec: string | readonly string[] | undefined): { rest: string | string[] | undefined; mcp: McpToolFilter } {
  if (spec === undefined) return { rest: undefined, mcp: () => true };
  const items = (typeof spec === "string" ? [spec] : spec)
    .flatMap((s) => s.split(","))
    .map((s) => s.trim())
    .filter((s) => s !== "");
  const mcpItems = items.filter(isMcp);
  if (mcpItems.length === 0) return { rest: typeof spec === "string" ? spec : [...spec], mcp: () => true };
  const others = items.filter((s) => !isMcp(s));
  const plain = (s: string) => !s.startsWith("+") && !s.startsWith("-");
  // A list with a plain MCP entry is an allowlist for the built-ins too.
  let rest: string[] = others;
  if (items.some(plain) && !others.some(plain)) rest = others.filter((s) => !s.startsWith("-")).map((s) => s.replace(/^\+/, ""));
  const allow = mcpItems.filter((s) => !s.startsWith("-")).map((s) => s.replace(/^\+/, ""));
  const deny = mcpItems.filter((s) => s.startsWith("-")).map((s) => s.slice(1));
  const allowlist = mcpItems.some(plain);
  return {
    rest: rest.length === 0 && items.some(plain) ? "" : rest,
    mcp: (name) => !deny.some((p) => match(p, name)) && (!allowlist || allow.some((p) => match(p, name))),
  };
}
