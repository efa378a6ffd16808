import { toJsonSchema } from "@valibot/to-json-schema";
import * as v from "valibot";
import { compileJsonSchema, type SchemaCheck } from "../util/json-schema.ts";
import { ToolArgumentError } from "./tool.ts";

export interface ToolParams<T> {
  /** JSON Schema of the arguments object, as sent to the model (no `$schema` key). */
  parameters: Record<string, unknown>;
  /** Validates raw model arguments; rejects with ToolArgumentError naming the bad field. */
  parse(args: unknown): Promise<T>;
}

/** JSON Schema for the model, without the `$schema` key some providers reject. */
export function modelSchema(schema: v.GenericSchema): Record<string, unknown> {
  const { $schema: _ignored, ...rest } = toJsonSchema(schema) as Record<string, unknown>;
  return rest;
}

/** Turns valibot issues into one sentence that names each bad field and what was expected. */
export function describeIssues(issues: readonly v.BaseIssue<unknown>[]): string {
  const parts = issues.map((issue) => {
    const field = v.getDotPath(issue) ?? "arguments";
    const what =
      issue.kind === "schema" ? `expected ${issue.expected ?? "a valid value"}, received ${issue.received}` : issue.message;
    return `"${field}": ${what}`;
  });
  return `Invalid arguments: ${parts.join("; ")}`;
}

export function parseWith<S extends v.GenericSchema>(schema: S, args: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, args);
  if (!result.success) throw new ToolArgumentError(describeIssues(result.issues));
  return result.output;
}

/** A tool's parameters from its valibot schema; `parse` coerces loose arguments first (see `looseParser`). */
export function defineParams<S extends v.GenericSchema>(schema: S): ToolParams<v.InferOutput<S>> {
  const parameters = modelSchema(schema);
  return { parameters, parse: looseParser(schema, parameters) };
}

/**
 * `parseWith(schema, ...)` after loose arguments are brought towards the JSON Schema the model
 * saw (`"10"` for a number, one value for an array, a null optional dropped), as the reference
 * does for its built-in tools too. The JSON Schema is compiled for that on the first call.
 */
export function looseParser<S extends v.GenericSchema>(schema: S, parameters = modelSchema(schema)): (args: unknown) => Promise<v.InferOutput<S>> {
  let loose: SchemaCheck | undefined;
  return async (args) => {
    loose ??= compileJsonSchema(parameters);
    await loose.ready; // the validator loads with the first call of any tool
    return parseWith(schema, loose.coerceNow(args));
  };
}

/** A positive integer argument, described for the model. */
export const positiveInt = (description: string) =>
  v.pipe(v.number(), v.integer(), v.minValue(1), v.description(description));
