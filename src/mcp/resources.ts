/**
 * MCP resources through the three tools Codex and opencode give models: `list_mcp_resources`,
 * `list_mcp_resource_templates` and `read_mcp_resource`, over every enabled server that offers
 * resources. Listings are JSON (`{server?, resources: [{server, uri, name, ...}], nextCursor?}`);
 * one server lists one page (`cursor` continues it), no server lists every page of every server.
 * Text reaches the model as text, images as images, other binaries as temp files. Read-only.
 */
import type { ImageContent, TextContent } from "../providers/types.ts";
import { READ_ONLY, ToolArgumentError, type Tool, type ToolResult } from "../tools/tool.ts";
import type { McpConnection, McpPage } from "./connection.ts";
import { saveTempFile } from "../util/middle-cut.ts";
import { limitContent } from "./output-limit.ts";

export const RESOURCE_TOOL_NAMES = ["list_mcp_resources", "list_mcp_resource_templates", "read_mcp_resource"] as const;

type Args = { server?: string; cursor?: string; uri?: string };

const str = (description: string) => ({ type: "string", description });
const LIST_PARAMS = {
  type: "object",
  properties: { server: str("Name of an MCP server; leave out to list every server's resources."), cursor: str("The nextCursor of an earlier call for the same server, for the next page.") },
  additionalProperties: false,
};
const READ_PARAMS = {
  type: "object",
  properties: { server: str("The server's name, as in the server field of list_mcp_resources."), uri: str("The resource's URI, as listed by list_mcp_resources.") },
  required: ["server", "uri"],
  additionalProperties: false,
};

function parseArgs(raw: unknown, required: readonly string[]): Args {
  const a = (raw ?? {}) as Record<string, unknown>;
  if (typeof a !== "object" || Array.isArray(a)) throw new ToolArgumentError("arguments must be an object");
  const out: Args = {};
  for (const k of ["server", "cursor", "uri"] as const) {
    const val = a[k];
    if (val === undefined || val === null) continue;
    if (typeof val !== "string") throw new ToolArgumentError(`${k} must be a string`);
    if (val.trim() !== "") out[k] = val.trim();
  }
  for (const k of required) if (!(k in out)) throw new ToolArgumentError(`${k} is required`);
  return out;
}

/** Apps' user interfaces (`ui://`, `profile=mcp-app` HTML) are for hosts that render them. */
const isAppResource = (r: { uri?: string; uriTemplate?: string; mimeType?: string }) =>
  (r.uri ?? r.uriTemplate ?? "").startsWith("ui://") || /;\s*profile\s*=\s*"?mcp-app"?/i.test(r.mimeType ?? "");

function listed(server: string, item: Record<string, unknown>): Record<string, unknown> {
  const { _meta, icons, ...rest } = item;
  return { server, ...rest };
}

function jsonResult(payload: Record<string, unknown>): ToolResult {
  const { content, fullOutputPath } = limitContent([{ type: "text", text: JSON.stringify(payload) }]);
  return { content, structuredContent: payload, ...(fullOutputPath ? { details: { fullOutputPath } } : {}) };
}

/**
 * The resource tools over `servers()` (read when called: servers that connect later count).
 * `ready` waits for servers still connecting before a call.
 */
export function createResourceTools(servers: () => readonly McpConnection[], ready: () => Promise<unknown>): Tool<Args>[] {
  const find = (name: string) => {
    const all = servers().filter((c) => c.hasResources);
    const s = all.find((c) => c.config.name === name);
    if (s) return s;
    const names = all.map((c) => c.config.name).join(", ");
    throw new Error(`MCP server "${name}" has no resources${names ? `; servers with resources: ${names}` : ""}`);
  };
  const lister = (key: string, page: (c: McpConnection, cursor: string | undefined, signal: AbortSignal) => Promise<McpPage<Record<string, unknown>>>) =>
    async (a: Args, signal: AbortSignal): Promise<ToolResult> => {
      await ready();
      const keep = (item: Record<string, unknown>) => !isAppResource(item as { uri?: string });
      if (a.server) {
        const c = find(a.server);
        const p = await page(c, a.cursor, signal);
        return jsonResult({ server: c.config.name, [key]: p.items.filter(keep).map((i) => listed(c.config.name, i)), ...(p.nextCursor ? { nextCursor: p.nextCursor } : {}) });
      }
      if (a.cursor) throw new Error("cursor needs the server it came from");
      const all = servers().filter((c) => c.hasResources).sort((x, y) => x.config.name.localeCompare(y.config.name));
      const items: Record<string, unknown>[] = [];
      const errors: { server: string; error: string }[] = [];
      await Promise.all(
        all.map(async (c) => {
          try {
            let cursor: string | undefined;
            do {
              const p = await page(c, cursor, signal);
              items.push(...p.items.filter(keep).map((i) => listed(c.config.name, i)));
              cursor = p.nextCursor;
            } while (cursor);
          } catch (err) {
            errors.push({ server: c.config.name, error: err instanceof Error ? err.message : String(err) });
          }
        }),
      );
      items.sort((x, y) => String(x.server).localeCompare(String(y.server)));
      return jsonResult({ [key]: items, ...(errors.length > 0 ? { errors } : {}) });
    };
  const tool = (name: string, description: string, parameters: Record<string, unknown>, required: string[], run: (a: Args, signal: AbortSignal) => Promise<ToolResult>): Tool<Args> => ({
    name,
    label: name,
    description,
    parameters,
    annotations: READ_ONLY,
    parse: (raw) => parseArgs(raw, required),
    execute: (a, ctx) => run(a, ctx.signal),
  });
  return [
    tool(
      "list_mcp_resources",
      "Lists the resources MCP servers offer: data a server shares as context, such as files, database schemas or application records. Prefer resources to a web search when one fits.",
      LIST_PARAMS,
      [],
      lister("resources", (c, cursor, signal) => c.resourcesPage(cursor, signal) as Promise<McpPage<Record<string, unknown>>>),
    ),
    tool(
      "list_mcp_resource_templates",
      "Lists the resource templates MCP servers offer: URI templates (RFC 6570) for resources that take parameters and are not listed one by one.",
      LIST_PARAMS,
      [],
      lister("resourceTemplates", (c, cursor, signal) => c.templatesPage(cursor, signal) as Promise<McpPage<Record<string, unknown>>>),
    ),
    tool("read_mcp_resource", "Reads one resource of an MCP server, given the server's name and the resource's URI.", READ_PARAMS, ["server", "uri"], async (a, signal) => {
      await ready();
      const c = find(a.server!);
      const r = await c.readResource(a.uri!, signal);
      const blocks: (TextContent | ImageContent)[] = [];
      for (const item of r.contents) {
        if (r.contents.length > 1) blocks.push({ type: "text", text: `${item.uri}:` });
        if ("text" in item && typeof item.text === "string") blocks.push({ type: "text", text: item.text });
        else if ("blob" in item && typeof item.blob === "string") {
          if (item.mimeType?.startsWith("image/")) blocks.push({ type: "image", data: item.blob, mimeType: item.mimeType });
          else {
            const path = saveTempFile(Buffer.from(item.blob, "base64"), "", "pion-mcp-");
            blocks.push({ type: "text", text: `[binary resource ${item.uri}${item.mimeType ? ` (${item.mimeType})` : ""} saved to ${path}]` });
          }
        }
      }
      const { content, fullOutputPath } = limitContent(blocks.length > 0 ? blocks : [{ type: "text", text: `Resource ${a.uri} is empty.` }]);
      const contents = r.contents.map(({ _meta, ...rest }) => rest);
      return { content, structuredContent: { server: c.config.name, uri: a.uri, contents }, details: { server: c.config.name, uri: a.uri, ...(fullOutputPath ? { fullOutputPath } : {}) } };
    }),
  ];
}
