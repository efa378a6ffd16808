/**
 * pi-ai's JSON helpers for tool-call arguments, on the lenient parse pion's providers use when a
 * tool call ends (providers/transform.ts): JSON.parse, retried once with string literals mended.
 */
import { mendStrings, parseLenient } from "../../providers/transform.ts";

export const repairJson = (json: string): string => mendStrings(json);

export const parseJsonWithRepair = <T>(json: string): T => parseLenient(json) as T;

/**
 * A finished call's arguments text as the reference reports it: `{}` for blank text; text that is
 * not a JSON object gives `{}` and an `argumentsError` quoting all of it. (pion's own loop words
 * that error for its model itself, in setToolArguments.)
 */
export function parseToolCallArguments(json: string | undefined): { arguments: Record<string, unknown>; argumentsError?: string } {
  if (!json?.trim()) return { arguments: {} };
  try {
    const value = parseLenient(json);
    if (typeof value !== "object" || value === null || Array.isArray(value)) throw new Error("Tool arguments must be a JSON object");
    return { arguments: value as Record<string, unknown> };
  } catch (err) {
    return { arguments: {}, argumentsError: `${err instanceof Error ? err.message : String(err)}\n\nReceived arguments:\n${json}` };
  }
}
