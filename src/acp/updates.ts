/**
 * pion's session events as ACP `session/update` payloads (stable v1 schema). Pure: the caller
 * keeps the per-call state (file contents before an edit) and sends what this returns.
 */
import type * as acp from "@agentclientprotocol/sdk";
import { resolveToolPath } from "../tools/path.ts";
import type { ToolResult } from "../tools/tool.ts";
import type { TodoPhase } from "../tools/todo.ts";
import type { AgentMessage } from "../store/entries.ts";

type Args = Record<string, unknown>;

const str = (v: unknown): string | undefined => (typeof v === "string" ? v : undefined);

/** The ACP tool kind that fits a pion tool. */
export function toolKind(name: string): acp.ToolKind {
  switch (name) {
    case "read":
    case "ls":
      return "read";
    case "write":
    case "edit":
      return "edit";
    case "bash":
      return "execute";
    case "grep":
    case "find":
      return "search";
    case "todo":
      return "think";
    default:
      return "other";
  }
}

/** A short title for the editor's tool list. */
export function toolTitle(name: string, args: Args): string {
  const path = str(args.path);
  switch (name) {
    case "read":
      return `Read ${path ?? "file"}`;
    case "write":
      return `Write ${path ?? "file"}`;
    case "edit":
      return `Edit ${path ?? "file"}`;
    case "ls":
      return `List ${path ?? "."}`;
    case "bash": {
      const cmd = str(args.command) ?? "";
      return `Run \`${cmd.length > 80 ? `${cmd.slice(0, 77)}...` : cmd}\``;
    }
    case "grep":
      return `Search for ${JSON.stringify(str(args.pattern) ?? "")}${path ? ` in ${path}` : ""}`;
    case "find":
      return `Find ${str(args.pattern) ?? "files"}${path ? ` in ${path}` : ""}`;
    case "todo":
      return "Update the plan";
    default:
      return name;
  }
}

/** Absolute path a file tool's arguments name (undefined for tools without one). */
export function toolPath(name: string, args: Args, cwd: string): string | undefined {
  if (!["read", "write", "edit", "ls", "grep", "find"].includes(name)) return undefined;
  const p = str(args.path);
  if (p === undefined) return name === "ls" || name === "grep" || name === "find" ? cwd : undefined;
  return resolveToolPath(p, cwd);
}

export function toolCallStart(id: string, name: string, args: Args, cwd: string): acp.SessionUpdate {
  const path = toolPath(name, args, cwd);
  const line = name === "read" && typeof args.offset === "number" ? args.offset : undefined;
  return {
    sessionUpdate: "tool_call",
    toolCallId: id,
    title: toolTitle(name, args),
    kind: toolKind(name),
    status: "in_progress",
    ...(path ? { locations: [{ path, ...(line !== undefined ? { line } : {}) }] } : {}),
    rawInput: args,
  };
}

function resultContent(result: ToolResult): acp.ToolCallContent[] {
  const out: acp.ToolCallContent[] = [];
  for (const c of result.content) {
    if (c.type === "text") out.push({ type: "content", content: { type: "text", text: c.text } });
    else out.push({ type: "content", content: { type: "image", data: c.data, mimeType: c.mimeType } });
  }
  return out;
}

/** A call whose command runs in the editor's terminal `terminalId`: the editor shows it there. */
export function toolCallTerminal(id: string, terminalId: string): acp.SessionUpdate {
  return { sessionUpdate: "tool_call_update", toolCallId: id, content: [{ type: "terminal", terminalId }] };
}

/** Each update replaces the call's content: one that ran in a terminal keeps it first. */
export function toolCallProgress(id: string, partial: ToolResult, terminalId?: string): acp.SessionUpdate {
  const content = resultContent(partial);
  if (terminalId) content.unshift({ type: "terminal", terminalId });
  return { sessionUpdate: "tool_call_update", toolCallId: id, status: "in_progress", content };
}

/**
 * The end of a call. Edits and writes carry a `diff` (the file before, as the caller read it at
 * the start, and after); a command run in the editor's terminal that terminal; everything the
 * result's text and images.
 */
export function toolCallEnd(
  id: string,
  result: ToolResult,
  isError: boolean,
  diff?: { path: string; oldText: string | null; newText: string },
  terminalId?: string,
): acp.SessionUpdate {
  const content = resultContent(result);
  if (diff && !isError) content.unshift({ type: "diff", path: diff.path, oldText: diff.oldText, newText: diff.newText });
  if (terminalId) content.unshift({ type: "terminal", terminalId });
  return {
    sessionUpdate: "tool_call_update",
    toolCallId: id,
    status: isError ? "failed" : "completed",
    content,
    rawOutput: {
      content: result.content,
      ...(result.details !== undefined ? { details: result.details } : {}),
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
  };
}

export function planUpdate(phases: readonly TodoPhase[]): acp.SessionUpdate {
  const entries: acp.PlanEntry[] = [];
  for (const phase of phases) {
    for (const t of phase.tasks) {
      if (t.status === "abandoned") continue;
      entries.push({ content: phases.length > 1 ? `${phase.name}: ${t.content}` : t.content, priority: "medium", status: t.status });
    }
  }
  return { sessionUpdate: "plan", entries };
}

/** A stored message as the updates a client replays on session/load. */
export function replayMessage(m: AgentMessage, cwd: string): acp.SessionUpdate[] {
  const out: acp.SessionUpdate[] = [];
  if (m.role === "user") {
    const parts = typeof m.content === "string" ? [{ type: "text" as const, text: m.content }] : m.content;
    for (const c of parts) {
      if (c.type === "text") out.push({ sessionUpdate: "user_message_chunk", content: { type: "text", text: c.text } });
      else if (c.type === "image") out.push({ sessionUpdate: "user_message_chunk", content: { type: "image", data: c.data, mimeType: c.mimeType } });
    }
  } else if (m.role === "assistant") {
    for (const c of m.content) {
      if (c.type === "text" && c.text) out.push({ sessionUpdate: "agent_message_chunk", content: { type: "text", text: c.text } });
      else if (c.type === "thinking" && c.thinking) out.push({ sessionUpdate: "agent_thought_chunk", content: { type: "text", text: c.thinking } });
      else if (c.type === "toolCall") out.push({ ...toolCallStart(c.id, c.name, c.arguments as Args, cwd), status: "pending" } as acp.SessionUpdate);
    }
  } else if (m.role === "toolResult") {
    out.push(toolCallEnd(m.toolCallId, { content: m.content, details: m.details }, m.isError));
  }
  return out;
}
