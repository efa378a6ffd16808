/**
 * `tool_search`: finds MCP tools that are not declared (`deferred` exposure) and loads the
 * matches, so they are declared from the next model call on. What it loaded is in its result's
 * `details.loaded`, a toolResult message of the branch: `loadedOnBranch` reads it back, so a
 * loaded tool stays declared on that branch (after a reopen too) and not on another.
 */
import type { Entry } from "../store/entries.ts";
import { READ_ONLY, ToolArgumentError, type Tool } from "../tools/tool.ts";

export const TOOL_SEARCH_NAME = "tool_search";
const DEFAULT_LIMIT = 8;

export interface SearchDoc {
  name: string;
  description: string;
  /** The schema's property names and descriptions. */
  schemaText: string;
  /** The server's name and description (or instructions' first line). */
  serverText: string;
}

const STOP = new Set(["a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "it", "of", "on", "or", "the", "this", "to", "with"]);

/** Lower-case words, identifiers split at `_`, `-` and camelCase, a plural's `s` dropped. */
export function words(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((w) => w !== "" && !STOP.has(w))
    .map((w) => (w.length > 4 && w.endsWith("ies") ? `${w.slice(0, -3)}y` : w.length > 3 && w.endsWith("s") && !w.endsWith("ss") ? w.slice(0, -1) : w));
}

function schemaWords(schema: unknown, out: string[], depth = 0): void {
  if (!schema || typeof schema !== "object" || depth > 6) return;
  const s = schema as Record<string, unknown>;
  if (typeof s.description === "string") out.push(s.description);
  if (s.properties && typeof s.properties === "object") {
    for (const [k, val] of Object.entries(s.properties)) {
      out.push(k);
      schemaWords(val, out, depth + 1);
    }
  }
  if (s.items) schemaWords(s.items, out, depth + 1);
}

export function searchDoc(t: { name: string; description: string; parameters: Record<string, unknown> }, serverText: string): SearchDoc {
  const parts: string[] = [];
  schemaWords(t.parameters, parts);
  return { name: t.name, description: t.description, schemaText: parts.join(" "), serverText };
}

/**
 * BM25 over description and schema text, with the tool's name counting more than any number
 * of mentions and the server's text less (it is shared by all its tools). A tool matching more
 * of the query's words ranks first; a query that is a tool's (short) name puts it on top.
 */
export function rankTools(query: string, docs: readonly SearchDoc[], limit: number): SearchDoc[] {
  const terms = [...new Set(words(query))];
  if (terms.length === 0 || docs.length === 0) return [];
  const idx = docs.map((d) => {
    const body = words(`${d.description} ${d.schemaText}`);
    const tf = new Map<string, number>();
    for (const w of body) tf.set(w, (tf.get(w) ?? 0) + 1);
    const local = d.name.split("__").at(-1)!;
    return { d, tf, len: body.length, name: new Set(words(d.name)), local: words(local), server: new Set(words(d.serverText)) };
  });
  const avg = idx.reduce((n, x) => n + x.len, 0) / idx.length || 1;
  const idf = new Map(terms.map((t) => {
    const n = idx.filter((x) => x.tf.has(t) || x.name.has(t) || x.server.has(t)).length;
    return [t, Math.log(1 + (idx.length - n + 0.5) / (n + 0.5))];
  }));
  const bonus = [...idf.values()].reduce((a, b) => a + b, 0);
  const q = query.trim().toLowerCase().replace(/[^a-z0-9_]/g, "_");
  const k1 = 1.2;
  const b = 0.75;
  const scored = idx.flatMap((x, order) => {
    let score = 0;
    let hits = 0;
    for (const t of terms) {
      const f = x.tf.get(t) ?? 0;
      const w = (x.name.has(t) ? 3 : 0) + (x.server.has(t) ? 0.5 : 0) + (f * (k1 + 1)) / (f + k1 * (1 - b + (b * x.len) / avg));
      if (w > 0) hits++;
      score += idf.get(t)! * w;
    }
    if (score === 0) return [];
    if (x.local.length > 0 && x.local.every((w) => terms.includes(w))) score += bonus;
    const lname = x.d.name.toLowerCase();
    const exact = lname === q || lname.endsWith(`__${q}`);
    return [{ doc: x.d, score, hits, exact, order }];
  });
  scored.sort((p, r) => Number(r.exact) - Number(p.exact) || r.hits - p.hits || r.score - p.score || p.order - r.order);
  return scored.slice(0, limit).map((s) => s.doc);
}

/** The tools `tool_search` loaded on the branch, oldest first. */
export function loadedOnBranch(branch: readonly Entry[]): string[] {
  const out = new Set<string>();
  for (const e of branch) {
    if (e.type !== "message" || e.message.role !== "toolResult" || e.message.toolName !== TOOL_SEARCH_NAME) continue;
    const loaded = (e.message.details as { loaded?: unknown } | undefined)?.loaded;
    if (Array.isArray(loaded)) for (const n of loaded) if (typeof n === "string") out.add(n);
  }
  return [...out];
}

/**
 * The tool. `candidates()` are the searchable tools not declared yet; `ready` waits for
 * servers still connecting (a query may match a tool of any of them).
 */
export function createToolSearchTool(candidates: () => SearchDoc[], ready: () => Promise<unknown>): Tool<{ query: string; limit: number }> {
  return {
    name: TOOL_SEARCH_NAME,
    label: TOOL_SEARCH_NAME,
    // It changes only what the next model call declares.
    annotations: READ_ONLY,
    description:
      "Finds tools that were not given to you upfront (such as the tools of MCP servers) by what they do, and makes the matches available from your next call. Search here whenever you need an MCP tool you do not have.",
    parameters: {
      type: "object",
      properties: {
        query: { type: "string", description: "What the tool should do, or its name." },
        limit: { type: "integer", description: `How many tools to load at most (default ${DEFAULT_LIMIT}).` },
      },
      required: ["query"],
      additionalProperties: false,
    },
    parse(raw) {
      const a = (raw ?? {}) as Record<string, unknown>;
      if (typeof a.query !== "string" || a.query.trim() === "") throw new ToolArgumentError("query must be a non-empty string");
      const limit = a.limit ?? DEFAULT_LIMIT;
      if (typeof limit !== "number" || !Number.isInteger(limit) || limit <= 0) throw new ToolArgumentError("limit must be a positive integer");
      return { query: a.query, limit };
    },
    async execute({ query, limit }) {
      await ready();
      const found = rankTools(query, candidates(), limit);
      const text =
        found.length === 0
          ? "No matching tools found."
          : `Loaded ${found.length} tool${found.length === 1 ? "" : "s"}, callable from your next call:\n${found.map((d) => `- ${d.name}: ${d.description.trim().split(/\r?\n/)[0]}`).join("\n")}`;
      return { content: [{ type: "text", text }], details: { loaded: found.map((d) => d.name) } };
    },
  };
}
