/**
 * `--tools` / `defaultTools` entries that name MCP tools (`mcp__<server>__<tool>`, `*` patterns).
 * MCP tools are all declared unless an entry names one: then only the named ones are (as the
 * reference reads the list). `-mcp__...` removes matches either way. Light: loaded at start-up.
 */
import { wildcardMatch as match } from "../util/wildcard.ts";

export type McpToolFilter = (name: string) => boolean;

const isMcp = (item: string) => item.replace(/^[+-]/, "").startsWith("mcp__");

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
