import * as v from "valibot";
import {
  AgentMessageSchema,
  AssistantMessageSchema,
  EntrySchema,
  ThinkingLevelSchema,
  TodoPhaseOutSchema,
  ToolCallSchema,
  ToolResultMessageSchema,
  ToolResultSchema,
  UsageSchema,
} from "./messages.ts";

/**
 * Every record pion writes that is not a response: the session's events and the
 * sub-protocol requests (extension UI, host tools). Records are strict objects: a field
 * pion writes that is missing here fails the e2e wire check, so the schemas cannot lag
 * behind the code. `message`, `entry` and `messages` payloads are open (see messages.ts).
 */

const ev = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) => v.strictObject({ type: v.literal(type), ...entries });

const delta = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) =>
  v.strictObject({ type: v.literal(type), contentIndex: v.number(), ...entries });

/** The delta-only events of one assistant message, as `message_update.assistantMessageEvent`. */
export const AssistantMessageEventSchema = v.variant("type", [
  delta("text_start", {}),
  delta("text_delta", { delta: v.string() }),
  delta("text_end", { content: v.string() }),
  delta("thinking_start", {}),
  delta("thinking_delta", { delta: v.string() }),
  delta("thinking_end", { content: v.string() }),
  delta("toolcall_start", { id: v.string(), toolName: v.string() }),
  delta("toolcall_delta", { delta: v.string() }),
  delta("toolcall_end", { toolCall: ToolCallSchema }),
]);

const reason = v.picklist(["manual", "threshold", "overflow"]);

/** One MCP server as get_mcp_status and mcp_status report it. */
export const McpServerStatusSchema = v.strictObject({
  name: v.string(),
  state: v.picklist(["connecting", "connected", "failed", "disabled"]),
  transport: v.picklist(["stdio", "http", "unknown"]),
  toolCount: v.number(),
  source: v.string(),
  error: v.optional(v.string()),
  /** An HTTP server that wants an OAuth sign-in (`pion mcp login NAME`). */
  needsSignIn: v.optional(v.boolean()),
  message: v.optional(v.string()),
});

export const CompactionResultSchema = v.strictObject({
  summary: v.string(),
  firstKeptEntryId: v.string(),
  tokensBefore: v.number(),
  estimatedTokensAfter: v.number(),
  usage: UsageSchema,
  details: v.strictObject({ readFiles: v.array(v.string()), modifiedFiles: v.array(v.string()) }),
});

const ui = <M extends string, E extends v.ObjectEntries>(method: M, entries: E) =>
  v.strictObject({ type: v.literal("extension_ui_request"), id: v.string(), method: v.literal(method), ...entries });
/** Milliseconds after which pion resolves the dialog with its default. */
const timeout = v.optional(v.number());

/** One record per `ctx.ui` call; dialogs (select, confirm, input, editor) wait for an `extension_ui_response`. */
export const ExtensionUiRequestSchema = v.variant("method", [
  ui("select", { title: v.string(), options: v.array(v.string()), timeout }),
  ui("confirm", { title: v.string(), message: v.string(), timeout }),
  ui("input", { title: v.string(), placeholder: v.optional(v.string()), timeout }),
  ui("editor", { title: v.string(), prefill: v.optional(v.string()), timeout }),
  ui("notify", { message: v.string(), notifyType: v.optional(v.picklist(["info", "warning", "error"])) }),
  ui("setStatus", { statusKey: v.string(), statusText: v.optional(v.string()) }),
  ui("setWidget", {
    widgetKey: v.string(),
    widgetLines: v.optional(v.array(v.string())),
    widgetPlacement: v.optional(v.picklist(["aboveEditor", "belowEditor"])),
  }),
  ui("setTitle", { title: v.string() }),
  ui("set_editor_text", { text: v.string() }),
]);

export const UI_DIALOG_METHODS = ["select", "confirm", "input", "editor"] as const;

export const EVENT_SCHEMAS = {
  agent_start: ev("agent_start", {}),
  agent_end: ev("agent_end", { messages: v.array(AgentMessageSchema), willRetry: v.boolean() }),
  agent_settled: ev("agent_settled", {
    aborted: v.boolean(),
    usage: UsageSchema,
    cost: v.number(),
    stopReason: v.optional(v.literal("limit")),
    errorMessage: v.optional(v.string()),
  }),
  turn_start: ev("turn_start", {}),
  turn_end: ev("turn_end", { message: AssistantMessageSchema, toolResults: v.array(ToolResultMessageSchema) }),
  message_start: ev("message_start", { message: AgentMessageSchema }),
  message_update: ev("message_update", { assistantMessageEvent: AssistantMessageEventSchema }),
  message_end: ev("message_end", { message: AgentMessageSchema, entryId: v.string() }),
  // parentToolCallId (additive): a call a tool made (a codemode script's), not one of the model's.
  tool_execution_start: ev("tool_execution_start", { toolCallId: v.string(), toolName: v.string(), args: v.unknown(), parentToolCallId: v.optional(v.string()) }),
  tool_execution_update: ev("tool_execution_update", {
    toolCallId: v.string(),
    toolName: v.string(),
    args: v.unknown(),
    partialResult: ToolResultSchema,
    parentToolCallId: v.optional(v.string()),
  }),
  tool_execution_end: ev("tool_execution_end", {
    toolCallId: v.string(),
    toolName: v.string(),
    parentToolCallId: v.optional(v.string()),
    result: ToolResultSchema,
    isError: v.boolean(),
    durationMs: v.number(),
  }),
  queue_update: ev("queue_update", { steering: v.array(v.string()), followUp: v.array(v.string()) }),
  compaction_start: ev("compaction_start", { reason }),
  compaction_end: ev("compaction_end", {
    reason,
    result: v.optional(CompactionResultSchema),
    aborted: v.boolean(),
    willRetry: v.boolean(),
    errorMessage: v.optional(v.string()),
  }),
  auto_retry_start: ev("auto_retry_start", { attempt: v.number(), maxAttempts: v.number(), delayMs: v.number(), errorMessage: v.string() }),
  auto_retry_end: ev("auto_retry_end", { success: v.boolean(), attempt: v.number(), finalError: v.optional(v.string()) }),
  summarization_retry_scheduled: ev("summarization_retry_scheduled", {
    attempt: v.number(),
    maxAttempts: v.number(),
    delayMs: v.number(),
    errorMessage: v.string(),
  }),
  // A branch summary (tree navigation) has no reason.
  summarization_retry_attempt_start: ev("summarization_retry_attempt_start", { source: v.picklist(["compaction", "branchSummary"]), reason: v.optional(reason) }),
  summarization_retry_finished: ev("summarization_retry_finished", {}),
  bash_execution_update: ev("bash_execution_update", { id: v.optional(v.string()), delta: v.string() }),
  session_info_changed: ev("session_info_changed", { name: v.string(), entryId: v.string() }),
  thinking_level_changed: ev("thinking_level_changed", { level: ThinkingLevelSchema, requested: v.optional(ThinkingLevelSchema) }),
  entry_appended: ev("entry_appended", { entry: EntrySchema }),
  todo_update: ev("todo_update", { phases: v.array(TodoPhaseOutSchema) }),
  mcp_status: ev("mcp_status", McpServerStatusSchema.entries),
  /** pion's sandbox cannot start here: announced once; every bash call then needs the host's approval. */
  sandbox_status: ev("sandbox_status", {
    mode: v.picklist(["read-only", "workspace-write"]),
    available: v.boolean(),
    reason: v.string(),
    remedy: v.string(),
  }),
  /** The session database was unusable (damaged, not a database): moved aside and rebuilt from the session files. */
  session_store_recovered: ev("session_store_recovered", {
    movedTo: v.string(),
    recovered: v.number(),
    unreadable: v.nullable(v.number()),
    message: v.string(),
  }),
  host_tool_call: ev("host_tool_call", { id: v.string(), toolCallId: v.string(), toolName: v.string(), arguments: v.unknown() }),
  host_tool_cancel: ev("host_tool_cancel", { id: v.string(), targetId: v.string() }),
  tool_approval_request: ev("tool_approval_request", {
    id: v.string(),
    toolCallId: v.string(),
    toolName: v.string(),
    args: v.record(v.string(), v.unknown()),
    reason: v.string(),
    options: v.array(v.picklist(["allow", "allow_always", "deny"])),
  }),
  prompt_result: ev("prompt_result", {
    id: v.string(),
    stopReason: v.picklist(["stop", "length", "toolUse", "error", "aborted", "limit"]),
    aborted: v.boolean(),
    errorMessage: v.optional(v.string()),
    usage: UsageSchema,
    cost: v.number(),
  }),
  extension_error: ev("extension_error", {
    extensionPath: v.string(),
    event: v.pipe(
      v.string(),
      v.description(
        "pion addition: the hook that failed (`session_start`, `tool_call`, ...), `load` for a failure while loading, `unhandledRejection` / `uncaughtException` for the extension's later asynchronous work (a promise it left rejected, a throw in a timer or watcher callback)",
      ),
    ),
    error: v.string(),
  }),
  extension_ui_request: ExtensionUiRequestSchema,
} as const;

export type EventType = keyof typeof EVENT_SCHEMAS;
export type EventOf<T extends EventType> = v.InferOutput<(typeof EVENT_SCHEMAS)[T]>;
export type WireEvent = { [T in EventType]: EventOf<T> }[EventType];
export type ExtensionUiRequest = EventOf<"extension_ui_request">;
export type AssistantMessageEvent = v.InferOutput<typeof AssistantMessageEventSchema>;

export const isEventType = (t: string): t is EventType => Object.hasOwn(EVENT_SCHEMAS, t);
