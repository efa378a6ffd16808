import type { ImageContent, TextContent } from "../providers/types.ts";

/** What a tool returns; the loop wraps it into a ToolResultMessage. */
export interface ToolResult {
  content: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
}

export interface ToolContext {
  signal: AbortSignal;
  callId: string;
  /** The session's working directory; relative paths resolve against it. */
  cwd: string;
  /** Report a partial result (the whole result so far, not a delta). */
  onUpdate?: (partial: ToolResult) => void;
}

/** Thrown by Tool.parse for arguments that do not match the schema; the message is for the model. */
export class ToolArgumentError extends Error {}

export interface Tool<P = unknown> {
  name: string;
  label?: string;
  description: string;
  /** JSON Schema of the arguments object, as sent to the model. */
  parameters: Record<string, unknown>;
  /** Validate raw model arguments; throws (or rejects with) ToolArgumentError naming the bad field. */
  parse(args: unknown): P | Promise<P>;
  /** Throwing is allowed: the loop turns the error's message into an error result. */
  execute(args: P, ctx: ToolContext): Promise<ToolResult>;
}
