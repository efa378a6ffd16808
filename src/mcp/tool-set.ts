/**
 * The MCP tools a model call declares: every `direct` tool, the `deferred` tools `tool_search`
 * loaded on the branch, `tool_search` itself while a server has tools to search, and the
 * resource tools while a connected server offers resources.
 */
import type { Entry } from "../store/entries.ts";
import type { Tool } from "../tools/tool.ts";
import type { McpServerConfig } from "./config.ts";
import { isSearchable } from "./exposure.ts";
import type { McpManager } from "./manager.ts";
import { createResourceTools } from "./resources.ts";
import { createToolSearchTool, loadedOnBranch, searchDoc } from "./tool-search.ts";

/** How long tool_search and the resource tools wait for servers still connecting. */
const WAIT_MS = 10_000;

/** The server could have tools that are reached by searching (its own exposure or a tool's). */
export const hasSearchable = (c: McpServerConfig) => isSearchable(c.exposure) || c.toolExposure.some(([, x]) => isSearchable(x));
/** The server could have tools declared directly: the first model call waits for it. */
export const hasDirect = (c: McpServerConfig) => c.exposure === "direct" || c.toolExposure.some(([, x]) => x === "direct");

export function createMcpToolSet(manager: McpManager) {
  const ready = () => manager.waitForStartup(WAIT_MS);
  let branchNow: () => readonly Entry[] = () => [];
  const declaredNow = () => new Set([...loadedOnBranch(branchNow())]);
  const search = createToolSearchTool(() => {
    const loaded = declaredNow();
    const summaries = new Map(manager.connections().map((c) => [c.config.name, `${c.config.name} ${c.config.description ?? c.summary ?? ""}`]));
    return manager
      .tools()
      .filter((t) => isSearchable(t.exposure) && !loaded.has(t.name))
      .map((t) => searchDoc(t, summaries.get(t.server) ?? t.server));
  }, ready);
  const resources = createResourceTools(() => manager.connections(), ready);
  return {
    /** The tools for the next model call on the branch `branch()` returns. */
    tools(branch: () => readonly Entry[]): Tool[] {
      branchNow = branch;
      const all = manager.tools();
      const loaded = new Set(loadedOnBranch(branch()));
      const out: Tool[] = all.filter((t) => t.exposure === "direct" || (isSearchable(t.exposure) && loaded.has(t.name)));
      const conns = manager.connections();
      if (conns.some((c) => hasSearchable(c.config))) out.push(search);
      if (conns.some((c) => c.hasResources && c.state === "connected")) out.push(...(resources as Tool[]));
      return out;
    },
  };
}
