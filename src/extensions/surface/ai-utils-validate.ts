/**
 * pi-ai's `validateToolCall` and `validateToolArguments`: a tool call's arguments brought
 * towards the tool's JSON Schema and checked, by the same coercion and validator pion runs for
 * every extension tool (`compileJsonSchema(...).parseNow`, util/json-schema.ts). The thrown
 * message has the reference's layout (one `  - path: problem` line per problem, then the
 * arguments as received), since an extension may pass it on to the model as it is.
 */
import { compileJsonSchema, useJsonSchemaEngine, type SchemaCheck, type SchemaIssue } from "../../util/json-schema.ts";
import * as engine from "../../util/json-schema-engine.ts";

// Checked synchronously, as pi-ai's functions are: the validator comes with this module.
useJsonSchemaEngine(engine);

interface ToolLike {
  name: string;
  parameters: unknown;
}
interface ToolCallLike {
  name: string;
  arguments: unknown;
  argumentsError?: string;
}

/** One compiled check per schema object: a tool's schema lives as long as the tool. */
const compiled = new WeakMap<object, SchemaCheck>();

function checkFor(schema: unknown): SchemaCheck {
  if (typeof schema !== "object" || schema === null) return compileJsonSchema(schema);
  let check = compiled.get(schema);
  if (!check) {
    check = compileJsonSchema(schema);
    compiled.set(schema, check);
  }
  return check;
}

/** `a.0.b` for the model; the whole value is `root`. */
const dotted = (issue: SchemaIssue): string => (issue.path.length ? issue.path.join(".") : "root");

/** The tool call's arguments, coerced to the tool's schema; throws naming each problem. */
export function validateToolArguments(tool: ToolLike, toolCall: ToolCallLike): unknown {
  if (toolCall.argumentsError) throw new Error(`Invalid arguments for tool "${toolCall.name}": ${toolCall.argumentsError}`);
  // A copy: a tool that changes its arguments never changes the call in the transcript.
  const result = checkFor(tool.parameters).parseNow(structuredClone(toolCall.arguments));
  if (result.ok) return result.value;
  const lines = result.issues.map((issue) => `  - ${dotted(issue)}: ${issue.message}`).join("\n");
  throw new Error(`Validation failed for tool "${toolCall.name}":\n${lines}\n\nReceived arguments:\n${JSON.stringify(toolCall.arguments, null, 2)}`);
}

/** `validateToolArguments` with the tool found by the call's name among `tools`. */
export function validateToolCall(tools: readonly ToolLike[], toolCall: ToolCallLike): unknown {
  const tool = tools.find((t) => t.name === toolCall.name);
  if (!tool) throw new Error(`Tool "${toolCall.name}" not found`);
  return validateToolArguments(tool, toolCall);
}
