/**
 * The MCP tools a model call declares: every `direct` tool, the tools `tool_search` loaded on
 * the branch, `tool_search` itself while a server has `deferred` tools, `codemode` while a
 * server has `codemode` tools, and the resource tools while a connected `direct` server offers
 * resources (with only `codemode` or `deferred` servers offering them, scripts reach them).
 */
import type { Namespace } from "../codemode/tool.ts";
import type { Entry } from "../store/entries.ts";
import type { Tool } from "../tools/tool.ts";
import type { McpServerConfig } from "./config.ts";
import { isSearchable, type Exposure } from "./exposure.ts";
import type { McpManager } from "./manager.ts";
import { createResourceTools } from "./resources.ts";
import { createToolSearchTool, loadedOnBranch, rankTools, searchDoc } from "./tool-search.ts";
import type { McpTool } from "./tools.ts";

/** How long tool_search, codemode and the resource tools wait for servers still connecting. */
const WAIT_MS = 10_000;

/** What the tool set needs of the session. */
export interface SessionPort {
  branchPath(): readonly Entry[];
  appendCustom(customType: string, data?: unknown): void;
}

const has = (c: McpServerConfig, x: Exposure) => c.exposure === x || c.toolExposure.some(([, e]) => e === x);
/** The server could have tools declared directly: the first model call waits for it. */
export const hasDirect = (c: McpServerConfig) => has(c, "direct");

const serverKey = (name: string) => name.replace(/^mcp__/, "").replace(/[^A-Za-z0-9_]/g, "_").toLowerCase();

export function createMcpToolSet(manager: McpManager, o: { maskDeep: <T>(v: T) => T; autoEnableCodemode?: boolean; warn?: (msg: string) => void }) {
  let warned = false;
  let session: SessionPort | undefined;
  const branch = () => session?.branchPath() ?? [];
  const ready = () => manager.waitForStartup(WAIT_MS);
  const summaryOf = (server: string) => {
    const c = manager.connections().find((x) => x.config.name === server);
    return c ? `${c.config.name} ${c.config.description ?? c.summary ?? ""}` : server;
  };
  const docs = (tools: readonly McpTool[]) => tools.map((t) => searchDoc(t, summaryOf(t.server)));
  const search = createToolSearchTool(() => {
    const loaded = new Set(loadedOnBranch(branch()));
    return docs(manager.tools().filter((t) => isSearchable(t.exposure) && !loaded.has(t.name)));
  }, ready);
  // Resources of hidden servers stay out of reach.
  const resourceServers = () => manager.connections().filter((c) => c.config.exposure !== "hidden" && c.hasResources && c.state === "connected");
  const resources = createResourceTools(resourceServers, ready);
  /** Tools scripts reach that are not declared: masked as the declared ones are. */
  const scriptOnly = () =>
    manager
      .tools()
      .filter((t) => isSearchable(t.exposure))
      .map((t): Tool => ({ ...t, execute: async (a, ctx) => o.maskDeep(await t.execute(a as Record<string, unknown>, ctx)) }));
  let codemode: Promise<Tool> | undefined;
  const codemodeTool = () =>
    (codemode ??= import("../codemode/tool.ts").then(({ createCodemodeTool }) =>
      createCodemodeTool({
        servers: manager
          .connections()
          .filter((c) => has(c.config, "codemode") || has(c.config, "deferred"))
          .map((c) => ({ name: c.config.name, ...(c.config.description ? { description: c.config.description } : {}) })),
        callable: () => [...scriptOnly(), ...(resources as Tool[])],
        search: (query, limit, namespace) => {
          const key = namespace === undefined ? undefined : serverKey(namespace);
          const pool = manager.tools().filter((t) => key === undefined || serverKey(t.server) === key);
          return rankTools(query, docs(pool), limit).map((d) => ({ name: d.name, description: d.description }));
        },
        namespace: (name): Namespace | undefined => {
          const c = manager.connections().find((x) => serverKey(x.config.name) === serverKey(name));
          if (!c) return undefined;
          const description = c.config.description ?? c.summary;
          return { name: `mcp__${c.config.name}`, ...(description ? { description } : {}), ...(c.instructions ? { instructions: c.instructions } : {}), tools: manager.tools().filter((t) => t.server === c.config.name).map((t) => t.name) };
        },
        ready: (servers) => manager.waitForStartup(WAIT_MS, (c) => servers === "all" || servers.some((n) => serverKey(n) === serverKey(c.config.name))),
        branch,
        saveWrites: (e) => session?.appendCustom(e.customType, e.data),
        mask: (s) => o.maskDeep(s),
      }),
    ));
  /** The codemode tool's object, loaded before the first model call that declares it. */
  let codemodeLoaded: Tool | undefined;
  return {
    /** `tool_search` over the servers' undeclared tools (declared while a server has `deferred` tools). */
    search,
    /** The `codemode` tool over every server (loaded on first use; declared while a server has `codemode` tools). */
    codemode: codemodeTool,
    /** Loads what the next model call may declare (codemode's module), off the hot path. */
    async prepare(): Promise<void> {
      const codemodeServers = manager.connections().filter((c) => has(c.config, "codemode"));
      if (codemodeServers.length === 0) return;
      if (o.autoEnableCodemode !== false) codemodeLoaded = await codemodeTool();
      else if (!warned) {
        warned = true;
        o.warn?.(`autoEnableCodemode is false: the codemode tools of ${codemodeServers.map((c) => c.config.name).join(", ")} cannot be called (give them "deferred" or "direct" exposure)`);
      }
    },
    /** The tools for the next model call on the session's current branch. */
    tools(port: SessionPort): Tool[] {
      session = port;
      const loaded = new Set(loadedOnBranch(port.branchPath()));
      const out: Tool[] = manager.tools().filter((t) => t.exposure === "direct" || (isSearchable(t.exposure) && loaded.has(t.name)));
      const conns = manager.connections();
      if (conns.some((c) => has(c.config, "deferred"))) out.push(search);
      if (codemodeLoaded && conns.some((c) => has(c.config, "codemode"))) out.push(codemodeLoaded);
      // The resource tools take the widest exposure of the servers they reach: declared when one is direct, else scripts reach them.
      if (resourceServers().some((c) => c.config.exposure === "direct")) out.push(...(resources as Tool[]));
      return out;
    },
  };
}
