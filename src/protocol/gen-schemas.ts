import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { toJsonSchemaDefs, type ConversionConfig, type JsonSchema } from "@valibot/to-json-schema";
import type * as v from "valibot";
import { allCommandSchemas, COMMAND_TYPES } from "./commands.ts";
import { AssistantMessageEventSchema, CompactionResultSchema, EVENT_SCHEMAS, type EventType } from "./events.ts";
import { SessionHeaderSchema, SHARED_DEFINITIONS } from "./messages.ts";
import { COMMAND_ORIGIN, EVENT_ORIGIN, ORIGIN_LABEL, PION_FIELDS } from "./origins.ts";
import { renderProtocolDoc } from "./protocol-doc.ts";
import { FailureResponseSchema, REQUEST_TYPES, successSchema, TreeNodeSchema } from "./results.ts";

/**
 * Writes the wire contract as JSON Schema (schemas/*.json) and docs/protocol.md, both
 * generated from the valibot schemas in this folder so neither can drift from the code.
 * Run with `bun run schemas`; test/unit/protocol/schemas.test.ts fails when the committed
 * files differ from what this produces.
 */

/** A generated schema document: `oneOf` over `$defs`, one definition per record. */
export interface SchemaDocument {
  $schema: string;
  title: string;
  description: string;
  oneOf: { $ref: string }[];
  $defs: Record<string, JsonSchema>;
}

const CONFIG: ConversionConfig = { target: "draft-2020-12", errorMode: "throw" };
const DRAFT = "https://json-schema.org/draft/2020-12/schema";

type Defs = Record<string, v.GenericSchema>;

function convert(defs: Defs): Record<string, JsonSchema> {
  const out = toJsonSchemaDefs(defs, CONFIG) as Record<string, JsonSchema>;
  for (const s of Object.values(out)) delete s.$schema;
  return out;
}

function document(title: string, description: string, records: string[], defs: Record<string, JsonSchema>): SchemaDocument {
  const sorted: Record<string, JsonSchema> = {};
  for (const k of Object.keys(defs).sort()) sorted[k] = defs[k]!;
  return {
    $schema: DRAFT,
    title,
    description,
    oneOf: records.map((r) => ({ $ref: `#/$defs/${r}` })),
    $defs: sorted,
  };
}

/** Mark pion's fields inside a record (its own properties, or those of `data` for a response). */
function annotate(schema: JsonSchema, origin: string, fields: Readonly<Record<string, string>> | undefined, inData = false): void {
  schema.description = origin;
  if (!fields) return;
  const target = inData ? (schema.properties?.data as JsonSchema | undefined) : schema;
  for (const [name, text] of Object.entries(fields)) {
    const prop = target?.properties?.[name];
    if (prop === undefined || typeof prop === "boolean") throw new Error(`PION_FIELDS names a missing field: ${name}`);
    prop.description = `pion addition: ${text}`;
  }
}

export function commandsDocument(): SchemaDocument {
  const types = COMMAND_TYPES;
  const defs = convert(allCommandSchemas());
  for (const t of types) annotate(defs[t]!, `${ORIGIN_LABEL[COMMAND_ORIGIN[t]]}.`, PION_FIELDS[`command ${t}`]);
  return document(
    "pion commands",
    "Every record a client writes to pion's stdin: the commands, and the answers to extension UI and host tool requests.",
    types,
    defs,
  );
}

export function responsesDocument(): SchemaDocument {
  const records: Defs = {};
  for (const t of REQUEST_TYPES) records[t] = successSchema(t);
  const defs = convert({
    ...SHARED_DEFINITIONS,
    TreeNode: TreeNodeSchema,
    CompactionResult: CompactionResultSchema,
    ...records,
    failure: FailureResponseSchema,
  });
  for (const t of REQUEST_TYPES) annotate(defs[t]!, `Success of ${t} (${ORIGIN_LABEL[COMMAND_ORIGIN[t]]}).`, PION_FIELDS[`response ${t}`], true);
  defs.failure!.description = "Any command that failed (spec 000). command is \"parse\" for a line that is not JSON.";
  return document(
    "pion responses",
    "The one response record pion writes per command (sub-protocol answers get none), tied to the command by id.",
    [...REQUEST_TYPES, "failure"],
    defs,
  );
}

export function eventsDocument(): SchemaDocument {
  const types = Object.keys(EVENT_SCHEMAS) as EventType[];
  const defs = convert({
    ...SHARED_DEFINITIONS,
    CompactionResult: CompactionResultSchema,
    AssistantMessageEvent: AssistantMessageEventSchema,
    ...EVENT_SCHEMAS,
    session: SessionHeaderSchema,
  });
  for (const t of types) annotate(defs[t]!, `${ORIGIN_LABEL[EVENT_ORIGIN[t]]}.`, PION_FIELDS[`event ${t}`]);
  defs.session!.description = `${ORIGIN_LABEL["004"]}: the first line of JSON mode's output (the session header).`;
  return document(
    "pion events",
    "Every record pion writes that is not a response: session events, prompt results, extension UI and host tool requests, and JSON mode's session header.",
    [...types, "session"],
    defs,
  );
}

/** Every generated file, by path relative to the repository root. */
export function generatedFiles(): Map<string, string> {
  const json = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`;
  const commands = commandsDocument();
  const responses = responsesDocument();
  const events = eventsDocument();
  const files = new Map<string, string>([
    ["schemas/commands.json", json(commands)],
    ["schemas/responses.json", json(responses)],
    ["schemas/events.json", json(events)],
  ]);
  for (const t of Object.keys(commands.$defs)) {
    files.set(`schemas/commands/${t}.json`, json({ $schema: DRAFT, title: t, ...commands.$defs[t] }));
  }
  files.set("docs/protocol.md", renderProtocolDoc({ commands, responses, events }));
  return files;
}

export const REPO_ROOT = resolve(import.meta.dir, "../..");

if (import.meta.main) {
  const files = generatedFiles();
  // a command that was removed leaves no stale per-command file behind
  rmSync(join(REPO_ROOT, "schemas/commands"), { recursive: true, force: true });
  for (const [path, text] of files) {
    const target = join(REPO_ROOT, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, text);
  }
  const perCommand = readdirSync(join(REPO_ROOT, "schemas/commands")).length;
  process.stdout.write(`wrote ${files.size} files (${perCommand} per-command schemas) under schemas/ and docs/protocol.md\n`);
}
