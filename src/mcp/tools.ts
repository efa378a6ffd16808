/**
 * MCP tools as pion tools: named `mcp__<server>__<tool>`, described and parameterised by the
 * server, results mapped to text and image content (resources as text, `structuredContent`
 * kept in `details`), progress notifications as partial results.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { ImageContent, TextContent } from "../providers/types.ts";
import { ToolArgumentError, type Tool, type ToolResult } from "../tools/tool.ts";
import { compileJsonSchema, type SchemaCheck } from "../util/json-schema.ts";
import type { McpConnection, McpToolInfo } from "./connection.ts";
import { exposureOf, type Exposure } from "./exposure.ts";
import { limitContent } from "./output-limit.ts";

export interface McpTool extends Tool<Record<string, unknown>> {
  server: string;
  mcpName: string;
  /** The server annotated the tool `readOnlyHint: true`. */
  readOnly: boolean;
  /** How the model reaches it (never `hidden`: hidden tools are not adapted). */
  exposure: Exposure;
}

const MAX_NAME = 64;
const sanitize = (s: string) => s.replace(/[^A-Za-z0-9_]/g, "_");
const shortHash = (s: string) => (Bun.hash(s) & 0xffffffn).toString(16).padStart(6, "0");

export const toolPrefix = (server: string) => `mcp__${sanitize(server)}__`;

/** Model-facing names for one server's tools; names that collide (or are too long) get a hash suffix. */
export function toolNames(server: string, tools: readonly string[]): Map<string, string> {
  const prefix = toolPrefix(server);
  const plain = tools.map((t) => prefix + sanitize(t));
  const counts = new Map<string, number>();
  for (const n of plain) counts.set(n, (counts.get(n) ?? 0) + 1);
  const out = new Map<string, string>();
  tools.forEach((t, i) => {
    let name = plain[i]!;
    if (counts.get(name)! > 1 || name.length > MAX_NAME) name = `${name.slice(0, MAX_NAME - 7)}_${shortHash(t)}`;
    out.set(t, name);
  });
  return out;
}

/**
 * The reachable tools of a connection (hidden ones left out). Names are made from every tool of
 * the server, so hiding one never renames another.
 */
export function adaptServerTools(conn: McpConnection, tools: readonly McpToolInfo[] = conn.tools): McpTool[] {
  const names = toolNames(conn.config.name, tools.map((t) => t.name));
  return tools.flatMap((t) => {
    const exposure = exposureOf(conn.config, t.name);
    return exposure === "hidden" ? [] : [adaptTool(conn, t, names.get(t.name)!, exposure)];
  });
}

function adaptTool(conn: McpConnection, info: McpToolInfo, name: string, exposure: Exposure): McpTool {
  const parameters = (info.inputSchema ?? { type: "object", properties: {} }) as Record<string, unknown>;
  // A schema pion's validator cannot check fully is left to the server, which checks its own
  // arguments and answers an error result: nothing passes unchecked either way.
  let schema: SchemaCheck | undefined;
  try {
    schema = compileJsonSchema(parameters);
  } catch {
    schema = undefined;
  }
  return {
    name,
    label: `${conn.config.name}: ${info.name}`,
    description: info.description ?? `Tool ${info.name} of the MCP server ${conn.config.name}`,
    parameters,
    server: conn.config.name,
    mcpName: info.name,
    readOnly: info.annotations?.readOnlyHint === true,
    exposure,
    // The server's hints, as every tool carries them: permissions read readOnlyHint.
    ...(info.annotations ? { annotations: info.annotations } : {}),
    async parse(args) {
      const value = args ?? {};
      const err = schema ? await schema.check(value) : undefined;
      if (err) throw new ToolArgumentError(err);
      return value as Record<string, unknown>;
    },
    async execute(args, ctx) {
      const progress: string[] = [];
      const result = await conn.callTool(info.name, args, {
        signal: ctx.signal,
        onProgress: ctx.onUpdate
          ? (p) => {
              const of = p.total !== undefined ? `${p.progress}/${p.total}` : `${p.progress}`;
              progress.push(`progress ${of}${p.message ? `: ${p.message}` : ""}`);
              ctx.onUpdate!({ content: [{ type: "text", text: progress.join("\n") }], details: { progress: p.progress, total: p.total } });
            }
          : undefined,
      });
      const r = limitResult(toToolResult(result, conn.config.name));
      // The server answered (an isError result included): scripts tell it from a refused call by this.
      return { ...r, details: { ...((r.details as Record<string, unknown> | undefined) ?? {}), server: conn.config.name } };
    },
  };
}

/** A result whose text is over the limit, cut, with the full text's file in `details.fullOutputPath`. */
export function limitResult(r: ToolResult): ToolResult {
  const { content, fullOutputPath } = limitContent(r.content);
  if (!fullOutputPath && content === r.content) return r;
  const details = { ...((r.details as Record<string, unknown> | undefined) ?? {}), ...(fullOutputPath ? { fullOutputPath } : {}) };
  return { ...r, content, details };
}

/** Maps an MCP CallToolResult to pion's result content; resource links name the server to read them from. */
export function toToolResult(r: CallToolResult, server?: string): ToolResult {
  const content: (TextContent | ImageContent)[] = [];
  for (const block of r.content ?? []) {
    switch (block.type) {
      case "text":
        content.push({ type: "text", text: block.text });
        break;
      case "image":
        content.push({ type: "image", data: block.data, mimeType: block.mimeType });
        break;
      case "audio":
        content.push({ type: "text", text: `[audio: ${block.mimeType}, ${Math.round((block.data.length * 3) / 4)} bytes]` });
        break;
      case "resource": {
        const res = block.resource;
        if ("text" in res && typeof res.text === "string") content.push({ type: "text", text: res.text });
        else content.push({ type: "text", text: `[resource ${res.uri}${res.mimeType ? ` (${res.mimeType})` : ""}: binary content not shown]` });
        break;
      }
      case "resource_link":
        content.push({
          type: "text",
          text: `[resource link: ${block.uri}${block.name ? ` (${block.name})` : ""}${block.description ? `: ${block.description}` : ""}${server ? `; read it with read_mcp_resource {"server": ${JSON.stringify(server)}, "uri": ${JSON.stringify(block.uri)}}` : ""}]`,
        });
        break;
    }
  }
  const details: Record<string, unknown> = {};
  if (r.structuredContent !== undefined) details.structuredContent = r.structuredContent;
  if (content.length === 0 && r.structuredContent !== undefined) content.push({ type: "text", text: JSON.stringify(r.structuredContent) });
  return {
    content,
    ...(Object.keys(details).length > 0 ? { details } : {}),
    ...(r.isError === true ? { isError: true } : {}),
  };
}
