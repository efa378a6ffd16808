import type { JsonSchema } from "@valibot/to-json-schema";
import type { SchemaDocument } from "./gen-schemas.ts";

/**
 * docs/protocol.md, rendered from the generated JSON Schema documents only: every table
 * row is a property of a schema, every marker an origin the schemas carry in
 * `description`. Edit the valibot schemas (and origins.ts), then run `bun run schemas`.
 */

type Node = JsonSchema | boolean | undefined;

const PION = "**[pion]**";
/** Shared definitions in page order; unions name the field that tells their variants apart. */
const SHARED: readonly { name: string; key?: string }[] = [
  { name: "Usage" },
  { name: "AgentMessage", key: "role" },
  { name: "AssistantMessage" },
  { name: "ToolResultMessage" },
  { name: "AssistantMessageEvent", key: "type" },
  { name: "ToolResult" },
  { name: "Entry", key: "type" },
  { name: "TreeNode" },
  { name: "Model" },
  { name: "TodoPhase" },
  { name: "CompactionResult" },
];

const code = (s: string) => `\`${s}\``;
const cell = (s: string) => s.replaceAll("|", "\\|").replaceAll("\n", " ");

function refName(ref: string): string {
  return ref.slice(ref.lastIndexOf("/") + 1);
}

/** A short TypeScript-like spelling of a schema, for table cells. */
function typeOf(node: Node, depth = 0): string {
  if (node === undefined || node === true) return "unknown";
  if (node === false) return "never";
  if (node.$ref) return refName(node.$ref);
  if (node.const !== undefined) return JSON.stringify(node.const);
  if (node.enum) return node.enum.map((e) => JSON.stringify(e)).join(" | ");
  const alts = node.anyOf ?? node.oneOf;
  if (alts) return alts.map((a) => typeOf(a, depth)).join(" | ");
  switch (node.type) {
    case "string":
    case "number":
    case "boolean":
    case "null":
      return node.type;
    case "integer":
      return "integer";
    case "array": {
      const items = Array.isArray(node.items) ? undefined : node.items;
      const inner = typeOf(items, depth);
      return inner.includes(" ") && !inner.startsWith("{") ? `(${inner})[]` : `${inner}[]`;
    }
    case "object": {
      if (!node.properties) {
        const rest = node.additionalProperties;
        return rest === undefined || rest === true ? "object" : `Record<string, ${typeOf(rest, depth)}>`;
      }
      if (depth >= 2) return "object";
      const req = new Set(node.required ?? []);
      const fields = Object.entries(node.properties).map(([k, p]) => `${k}${req.has(k) ? "" : "?"}: ${typeOf(p, depth + 1)}`);
      return `{ ${fields.join("; ")} }`;
    }
    default:
      return "unknown";
  }
}

function note(node: Node): string {
  if (node === undefined || typeof node === "boolean" || !node.description) return "";
  return node.description.startsWith("pion addition: ") ? `${PION} ${node.description.slice(15)}` : node.description;
}

/** One row per property; `skip` leaves out the fields every record of the kind has. */
function fieldTable(node: JsonSchema, skip: readonly string[] = []): string[] {
  const req = new Set(node.required ?? []);
  const rows = Object.entries(node.properties ?? {}).filter(([k]) => !skip.includes(k));
  if (rows.length === 0) return ["No fields."];
  return [
    "| field | type | required | notes |",
    "|---|---|---|---|",
    ...rows.map(([k, p]) => `| ${code(k)} | ${cell(code(typeOf(p)))} | ${req.has(k) ? "yes" : "no"} | ${cell(note(p))} |`),
  ];
}

/** The heading of a record: its name, marked when the whole record is pion's. */
function heading(name: string, node: JsonSchema): string {
  return `### ${code(name)}${node.description?.startsWith("pion addition") ? ` ${PION}` : ""}`;
}

/** Variants of a union (messages, entries, UI requests), each with its discriminator and fields. */
function variants(node: JsonSchema, key: string, skip: readonly string[]): string[] {
  const out: string[] = [];
  for (const alt of node.anyOf ?? node.oneOf ?? []) {
    if (typeof alt === "boolean") continue;
    const tag = alt.properties?.[key];
    const name = tag && typeof tag !== "boolean" && tag.const !== undefined ? String(tag.const) : "?";
    out.push(`#### ${code(`${key}: "${name}"`)}`, "", ...fieldTable(alt, [key, ...skip]), "");
  }
  return out;
}

function commandSection(commands: SchemaDocument, responses: SchemaDocument): string[] {
  const out: string[] = ["## Commands", "", "Every command may carry `id` (a string), echoed on its response. Fields below exclude `id` and `type`.", ""];
  for (const ref of commands.oneOf) {
    const type = refName(ref.$ref);
    const schema = commands.$defs[type]!;
    out.push(heading(type, schema), "", `Origin: ${schema.description ?? ""}`, "", ...fieldTable(schema, ["id", "type"]), "");
    const success = responses.$defs[type];
    if (!success) {
      out.push("No response: this frame answers a request of pion's.", "");
      continue;
    }
    const data = success.properties?.data;
    if (data === undefined || typeof data === "boolean") {
      out.push("Response: success without `data`.", "");
    } else if (data.type === "object" && data.properties) {
      out.push("Response `data`:", "", ...fieldTable(data), "");
    } else {
      out.push(`Response \`data\`: ${code(typeOf(data))}`, "");
    }
  }
  return out;
}

function eventSection(events: SchemaDocument): string[] {
  const out: string[] = ["## Events and requests", "", "Records without `id` unless noted; `type` names each. Fields below exclude `type`.", ""];
  for (const ref of events.oneOf) {
    const type = refName(ref.$ref);
    const schema = events.$defs[type]!;
    out.push(heading(type, schema), "", `Origin: ${schema.description ?? ""}`, "");
    if (schema.oneOf || schema.anyOf) out.push(...variants(schema, "method", ["type", "id"]), "Every request also carries `id` (a string), which an `extension_ui_response` echoes.", "");
    else out.push(...fieldTable(schema, ["type"]), "");
  }
  return out;
}

function sharedSection(events: SchemaDocument, responses: SchemaDocument): string[] {
  const out: string[] = ["## Shared types", "", "Messages and entries are open records: they may carry fields beyond those listed (the spec's formats allow it).", ""];
  for (const { name, key } of SHARED) {
    const schema = events.$defs[name] ?? responses.$defs[name];
    if (!schema) throw new Error(`shared type ${name} is not in the generated schemas`);
    out.push(`### ${name}`, "");
    if (key !== undefined) {
      out.push(...variants(schema, key, name === "Entry" ? ["id", "parentId", "timestamp"] : []));
      if (name === "Entry") out.push("Every entry also carries `id`, `parentId` (string or null) and `timestamp` (ISO string).", "");
    } else {
      out.push(...fieldTable(schema), "");
    }
  }
  return out;
}

export function renderProtocolDoc(docs: { commands: SchemaDocument; responses: SchemaDocument; events: SchemaDocument }): string {
  const { commands, responses, events } = docs;
  const failure = responses.$defs.failure!;
  const lines = [
    "# pion wire protocol",
    "",
    "<!-- Generated by `bun run schemas` (src/protocol/gen-schemas.ts) from the valibot schemas in src/protocol/. Do not edit. -->",
    "",
    "pion speaks the RPC protocol of the spec documents (000: RPC mode; 002: the Bun fork's additive commands; 004: JSON mode).",
    `Everything pion adds is additive (a new optional field, record or command) and marked ${PION}.`,
    "\"reference agent\" marks records the reference implementation writes that the documents do not describe.",
    "The JSON Schemas in `schemas/` (commands.json, responses.json, events.json) are the machine-readable form of this page.",
    "",
    "Framing: one JSON object per line, LF only. A reader must split on the byte 0x0A and nothing else: U+2028 and U+2029",
    "may appear raw inside strings, and a trailing CR is dropped.",
    "",
    "## Responses",
    "",
    "Each command gets exactly one `response` record (`extension_ui_response`, `host_tool_*` and `tool_approval_response` frames get none).",
    'A success is `{id?, type: "response", command, success: true, data?}`; the `data` of each command is listed under it below.',
    "",
    "A failure:",
    "",
    ...fieldTable(failure),
    "",
    ...commandSection(commands, responses),
    ...eventSection(events),
    ...sharedSection(events, responses),
  ];
  return `${lines.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}
