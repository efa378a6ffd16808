import type { ImageContent, TextContent } from "../providers/types.ts";

/** What a tool returns; the loop wraps it into a ToolResultMessage. */
export interface ToolResult {
  content: (TextContent | ImageContent)[];
  details?: unknown;
  isError?: boolean;
  /**
   * The result as data, for hosts and scripts that read it instead of parsing `content`
   * (bash: output and exit code; read: the text, or the image). It reaches tool_execution_end
   * and ACP's rawOutput, not the stored toolResult message (as in the reference).
   */
  structuredContent?: unknown;
}

export interface ToolContext {
  signal: AbortSignal;
  callId: string;
  /** The session's working directory; relative paths resolve against it. */
  cwd: string;
  /**
   * The path the permission rules judged for this call, symlinks resolved (the gate's
   * checkedPath): a file tool writes there, and refuses when the path now leads elsewhere.
   */
  checkedPath?: string;
  /**
   * The host approved running this call outside pion's sandbox, which cannot start here (the
   * gate asked, the sandbox named as the reason); without it a sandboxed tool refuses then.
   */
  sandboxWaived?: boolean;
  /** Report a partial result (the whole result so far, not a delta). */
  onUpdate?: (partial: ToolResult) => void;
  /**
   * Run another tool as a call nested in this one (a codemode script's): through the loop's
   * whole pipeline (arguments checked, permission gate, hooks), its events carrying this call's
   * id as `parentToolCallId`. A name is looked up among the declared tools; a tool object runs
   * as given (a tool reached only from scripts). Failures are error results, never throws.
   */
  runTool?: (tool: string | Tool, args: unknown, signal: AbortSignal) => Promise<ToolResult>;
  /** The tools declared on this model call (what `runTool` finds by name). */
  tools?: () => ReadonlyMap<string, Tool>;
}

/** Thrown by Tool.parse for arguments that do not match the schema; the message is for the model. */
export class ToolArgumentError extends Error {}

/**
 * Hints about what a tool does, with MCP's meaning of its tool annotations (an MCP tool
 * carries its server's). Permissions read `readOnlyHint`: a tool without it counts as one
 * that can change something.
 */
export interface ToolAnnotations {
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/** The annotations of a tool that only looks. */
export const READ_ONLY: ToolAnnotations = Object.freeze({ readOnlyHint: true });

export interface Tool<P = unknown> {
  name: string;
  label?: string;
  annotations?: ToolAnnotations;
  description: string;
  /** JSON Schema of the arguments object, as sent to the model. */
  parameters: Record<string, unknown>;
  /** Validate raw model arguments; throws (or rejects with) ToolArgumentError naming the bad field. */
  parse(args: unknown): P | Promise<P>;
  /** Throwing is allowed: the loop turns the error's message into an error result. */
  execute(args: P, ctx: ToolContext): Promise<ToolResult>;
}
