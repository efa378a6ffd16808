/**
 * The `codemode` tool: the model's JavaScript runs in a QuickJS sandbox (runner.ts, loaded on
 * the first call) and calls pion's tools as `tools.<name>(args)`. Each call goes through the
 * loop's own pipeline (ToolContext.runTool: arguments, permission gate, hooks, masking) as a
 * call nested in the codemode call. Only the script's output reaches the model.
 *
 * What a call resolves to: an MCP tool's CallToolResult (`content`, `structuredContent`,
 * `isError`; the whole text, also when the model would see it cut); a tool's
 * `structuredContent` when it has one (bash); an image block for an image (read); otherwise
 * the text. A failed, refused or invalid call rejects with its error text.
 */
import { readFileSync } from "node:fs";
import type { ImageContent, TextContent } from "../providers/types.ts";
import type { Entry } from "../store/entries.ts";
import { READ_ONLY, type Tool, type ToolContext, type ToolResult } from "../tools/tool.ts";
import { CODEMODE_DESCRIPTION, CODEMODE_NAME, CODEMODE_PARAMETERS, parseCodemodeArgs } from "./definition.ts";
import { toolDeclaration } from "./declaration.ts";
import type { CallMessage } from "./protocol.ts";
import { formatOutcome, parseOptions } from "./script-output.ts";
import { STORE_ENTRY_TYPE, storeOnBranch } from "./script-store.ts";

export { CODEMODE_NAME } from "./definition.ts";

export interface Namespace {
  name: string;
  description?: string;
  instructions?: string;
  tools: string[];
}

export interface CodemodeDeps {
  /** The configured servers whose tools scripts reach, for the description (fixed for the session). */
  servers: { name: string; description?: string }[];
  /** Every tool a script may call (the declared ones and those reached only from scripts). */
  callable: () => Tool[];
  search: (query: string, limit: number, namespace?: string) => { name: string; description: string }[];
  namespace: (name: string) => Namespace | undefined;
  /** Waits for the servers a script names (all of them for `all`). */
  ready: (servers: string[] | "all") => Promise<unknown>;
  branch: () => readonly Entry[];
  /** Keeps a successful script's `store()` writes (a custom entry on the branch). */
  saveWrites: (entry: { customType: string; data: unknown }) => void;
  mask: (text: string) => string;
}


const ident = (name: string) => name.replace(/[^A-Za-z0-9_$]/g, "_");
const DISCOVERY = /\b(searchTools|describeNamespace|describeTool|ALL_TOOLS)\b/;

/** The MCP servers a script can reach: all of them when it searches, else those it names. */
export function scriptReach(code: string): string[] | "all" {
  if (DISCOVERY.test(code)) return "all";
  return [...new Set([...code.matchAll(/mcp__([A-Za-z0-9_$]+?)__/g)].map((m) => m[1]!))];
}

const textOf = (r: ToolResult) => r.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");

export function createCodemodeTool(deps: CodemodeDeps): Tool<{ code: string }> {
  return {
    name: CODEMODE_NAME,
    label: CODEMODE_NAME,
    description: deps.servers.length === 0 ? CODEMODE_DESCRIPTION : `${CODEMODE_DESCRIPTION}\n\nMCP servers (tools \`mcp__<server>__<tool>\`; \`describeNamespace("mcp__<server>")\` lists them):\n${deps.servers.map((s) => `- mcp__${ident(s.name)}${s.description ? `: ${s.description}` : ""}`).join("\n")}`,
    // The script itself touches nothing: each call it makes is judged on its own.
    annotations: READ_ONLY,
    parameters: CODEMODE_PARAMETERS,
    parse: parseCodemodeArgs,
    async execute({ code }, ctx) {
      const started = performance.now();
      const options = parseOptions(code);
      const runTool = ctx.runTool;
      if (!runTool) throw new Error("codemode cannot call tools here");
      await deps.ready(scriptReach(code));
      // The declared tools (as the model would call them), then those only scripts reach.
      const all = new Map(ctx.tools?.() ?? []);
      for (const t of deps.callable()) if (!all.has(t.name)) all.set(t.name, t);
      const tools = [...all.values()].filter((t) => t.name !== CODEMODE_NAME && t.name !== "tool_search");
      const byIdent = new Map(tools.map((t) => [ident(t.name), t]));
      const { runScript } = await import("./runner.ts");
      // Calls still running when the script ends are cancelled with it.
      const calls = new AbortController();
      const stop = () => calls.abort();
      ctx.signal.addEventListener("abort", stop, { once: true });
      const answer = async (method: CallMessage["method"], payload: unknown): Promise<unknown> => {
        const p = (payload ?? {}) as Record<string, unknown>;
        if (method === "tool") return callTool(byIdent, String(p.name), p.args, runTool, calls.signal, deps.mask);
        if (method === "searchTools") {
          const limit = typeof p.limit === "number" && p.limit > 0 ? Math.floor(p.limit) : 8;
          return deps.search(String(p.query ?? ""), limit, typeof p.namespace === "string" ? p.namespace : undefined);
        }
        if (method === "describeTool") {
          const t = byIdent.get(ident(String(p.name)));
          if (!t) return undefined;
          const result = "mcpName" in t ? "CallToolResult" : t.name === "bash" ? "{ output: string; truncated: boolean; full_output_path?: string; exit_code: number; wall_time_seconds: number }" : "string";
          return { name: t.name, description: t.description, declaration: toolDeclaration(ident(t.name), t.description, t.parameters, result), inputSchema: t.parameters };
        }
        return deps.namespace(String(p.name));
      };
      const outcome = await runScript({
        code,
        store: storeOnBranch(deps.branch()),
        allTools: tools.map((t) => ({ name: t.name, description: t.description })),
        answer,
        signal: ctx.signal,
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      }).finally(() => {
        ctx.signal.removeEventListener("abort", stop);
        calls.abort();
      });
      if (outcome.ok && Object.keys(outcome.writes).length > 0) deps.saveWrites({ customType: STORE_ENTRY_TYPE, data: { writes: outcome.writes } });
      const r = formatOutcome(outcome, performance.now() - started, options);
      return { content: r.content, ...(r.fullOutputPath ? { details: { fullOutputPath: r.fullOutputPath } } : {}), ...(r.isError ? { isError: true } : {}) };
    },
  };
}

async function callTool(byIdent: Map<string, Tool>, name: string, args: unknown, runTool: NonNullable<ToolContext["runTool"]>, signal: AbortSignal, mask: (s: string) => string): Promise<unknown> {
  const tool = byIdent.get(ident(name));
  if (!tool) throw new Error(`tools.${name} is not a tool; see ALL_TOOLS or searchTools()`);
  const r = await runTool(tool, args ?? {}, signal);
  const details = (r.details ?? {}) as { structuredContent?: unknown; fullOutputPath?: unknown; server?: unknown };
  // An MCP server's answer (its isError results too); a refused or invalid call has no server.
  if ("mcpName" in tool && typeof details.server === "string") {
    let content: (TextContent | ImageContent)[] = r.content;
    // The model saw the text cut; a script gets all of it.
    if (typeof details.fullOutputPath === "string") {
      content = [{ type: "text", text: mask(readFileSync(details.fullOutputPath, "utf8")) }, ...r.content.filter((c) => c.type === "image")];
    }
    return { content, ...(details.structuredContent !== undefined ? { structuredContent: details.structuredContent } : {}), ...(r.isError ? { isError: true } : {}) };
  }
  if (r.isError) throw new Error(textOf(r) || `${tool.name} failed`);
  if (r.structuredContent !== undefined) return r.structuredContent;
  const image = r.content.find((c): c is ImageContent => c.type === "image");
  if (image) return { type: "image", data: image.data, mimeType: image.mimeType, note: textOf(r) };
  return textOf(r);
}
