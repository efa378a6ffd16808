import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../../src/protocol/commands.ts";
import { EVENT_SCHEMAS, isEventType } from "../../src/protocol/events.ts";
import { SessionHeaderSchema } from "../../src/protocol/messages.ts";
import { FailureResponseSchema, isRequestType, successSchema } from "../../src/protocol/results.ts";
import { compileJsonSchema, type SchemaCheck } from "../../src/util/json-schema.ts";
import { Pion } from "./pion.ts";

/**
 * Checks records pion wrote against the outbound wire contract, twice: with the valibot
 * schemas (src/protocol) and with the committed JSON Schema files (schemas/), so both
 * the code's schemas and what is published are held to pion's real output.
 */

const ROOT = resolve(import.meta.dir, "../..");
const load = (name: string): Record<string, unknown> => JSON.parse(readFileSync(join(ROOT, "schemas", name), "utf8"));
const documents = { responses: load("responses.json"), events: load("events.json") };

/** The same checker host and extension tools get, compiled once per schema and loaded before any check. */
const compiled = new Map<string, SchemaCheck>();
function compiledFor(key: string, schema: Record<string, unknown>): SchemaCheck {
  let c = compiled.get(key);
  if (!c) compiled.set(key, (c = compileJsonSchema(schema)));
  return c;
}
const wholeDocuments = { responses: compiledFor("responses", documents.responses), events: compiledFor("events", documents.events) };
await Promise.all(Object.values(wholeDocuments).map((c) => c.ready));
const validateJsonSchema = (key: string, schema: Record<string, unknown>, value: unknown) => compiledFor(key, schema).checkNow(value);

const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

/** The valibot schema and JSON Schema definition for a record, chosen by `type` (and `command` for responses). */
function schemasFor(rec: Record<string, unknown>): { schema: v.GenericSchema; doc: Record<string, unknown>; docName: "responses" | "events"; def: string } | string {
  const type = rec.type;
  if (type === "response") {
    if (rec.success === false) return { schema: FailureResponseSchema, doc: documents.responses, docName: "responses", def: "failure" };
    const command = rec.command;
    if (typeof command !== "string" || !isRequestType(command)) return `a success response for unknown command ${JSON.stringify(command)}`;
    return { schema: successSchema(command), doc: documents.responses, docName: "responses", def: command };
  }
  if (type === "session") return { schema: SessionHeaderSchema, doc: documents.events, docName: "events", def: "session" };
  if (typeof type !== "string" || !isEventType(type)) return `unknown record type ${JSON.stringify(type)}`;
  return { schema: EVENT_SCHEMAS[type], doc: documents.events, docName: "events", def: type };
}

/** Problems with one stdout record (empty when it conforms). */
export function recordProblems(rec: unknown): string[] {
  if (!isRecord(rec)) return ["not a JSON object"];
  const found = schemasFor(rec);
  if (typeof found === "string") return [found];
  const problems: string[] = [];
  const parsed = v.safeParse(found.schema, rec);
  if (!parsed.success) problems.push(`valibot: ${describeIssues(parsed.issues)}`);
  const defs = found.doc.$defs;
  const one = validateJsonSchema(`${found.docName}#${found.def}`, { $defs: defs, $ref: `#/$defs/${found.def}` }, rec);
  if (one) problems.push(`JSON Schema ${found.def}: ${one}`);
  else {
    const whole = wholeDocuments[found.docName].checkNow(rec);
    if (whole) problems.push(`JSON Schema document: ${whole}`);
  }
  return problems;
}

/** Throws, naming the record and each problem, when `rec` does not conform. */
export function checkRecord(rec: unknown): void {
  const problems = recordProblems(rec);
  if (problems.length > 0) throw new Error(`record does not match the wire schemas:\n  ${problems.join("\n  ")}\nrecord: ${JSON.stringify(rec).slice(0, 2000)}`);
}

/** Every nonconforming record of a run, with its index, for one readable failure. */
export function checkRecords(recs: readonly unknown[]): { index: number; type: unknown; problems: string[] }[] {
  const out: { index: number; type: unknown; problems: string[] }[] = [];
  recs.forEach((rec, index) => {
    const problems = recordProblems(rec);
    if (problems.length > 0) out.push({ index, type: isRecord(rec) ? (rec.command ?? rec.type) : undefined, problems });
  });
  return out;
}

/** A Pion whose every stdout record can be checked at the end (wraps test/support/pion.ts). */
export class CheckedPion extends Pion {
  /** Problems of every record written so far. */
  wireProblems(): ReturnType<typeof checkRecords> {
    return checkRecords(this.records);
  }
}
