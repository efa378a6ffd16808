import * as v from "valibot";
import { COMMAND_TYPES, SILENT_FRAMES, type CommandType } from "./commands.ts";
import { CompactionResultSchema, McpServerStatusSchema } from "./events.ts";
import { AgentMessageSchema, EntrySchema, ModelSchema, ThinkingLevelSchema, TodoPhaseOutSchema } from "./messages.ts";

/**
 * The response records: the spec's envelope (`{id?, type: "response", command, success}`)
 * and, per command, the `data` a success carries (what src/rpc/handlers.ts returns).
 * Commands whose success carries no data map to `undefined`.
 */

const queueMode = v.picklist(["all", "one-at-a-time"]);
const disposition = v.strictObject({ disposition: v.picklist(["started", "queued", "handled"]) });
const cancelled = v.strictObject({ cancelled: v.boolean() });
const forkMessages = v.strictObject({ messages: v.array(v.strictObject({ entryId: v.string(), text: v.string() })) });
const forkResult = v.strictObject({ text: v.string(), cancelled: v.boolean() });

export interface WireTreeNode {
  entry: v.InferOutput<typeof EntrySchema>;
  children: WireTreeNode[];
  label?: string;
  labelTimestamp?: string;
}
export const TreeNodeSchema: v.GenericSchema<WireTreeNode> = v.strictObject({
  entry: EntrySchema,
  children: v.array(v.lazy(() => TreeNodeSchema)),
  label: v.optional(v.string()),
  labelTimestamp: v.optional(v.string()),
});

const sourceInfo = v.strictObject({
  path: v.string(),
  source: v.string(),
  scope: v.picklist(["user", "project", "temporary"]),
  origin: v.picklist(["package", "top-level"]),
  baseDir: v.optional(v.string()),
});
const CommandInfoSchema = v.variant("source", [
  v.strictObject({
    name: v.string(),
    description: v.optional(v.string()),
    source: v.literal("extension"),
    path: v.string(),
    sourceInfo,
  }),
  v.strictObject({
    name: v.string(),
    description: v.string(),
    source: v.picklist(["prompt", "skill"]),
    location: v.picklist(["user", "project", "path"]),
    path: v.string(),
    sourceInfo,
  }),
]);

export const StateSchema = v.strictObject({
  model: v.nullable(ModelSchema),
  thinkingLevel: ThinkingLevelSchema,
  isStreaming: v.boolean(),
  isCompacting: v.boolean(),
  steeringMode: queueMode,
  followUpMode: queueMode,
  sessionFile: v.optional(v.string()),
  sessionId: v.string(),
  sessionName: v.optional(v.string()),
  autoCompactionEnabled: v.boolean(),
  messageCount: v.number(),
  pendingMessageCount: v.number(),
  queuedMessageCount: v.number(),
  interruptMode: v.picklist(["immediate", "wait"]),
  todoPhases: v.array(TodoPhaseOutSchema),
  /** pion: whether the cwd's own .pion/ resources loaded; "none" when it has none. */
  projectTrust: v.picklist(["trusted", "untrusted", "none"]),
  permissionMode: v.picklist(["auto", "ask", "read-only"]),
  sandboxMode: v.picklist(["off", "read-only", "workspace-write"]),
  sandboxNetwork: v.boolean(),
});

export const SessionStatsSchema = v.strictObject({
  sessionFile: v.optional(v.string()),
  sessionId: v.string(),
  userMessages: v.number(),
  assistantMessages: v.number(),
  toolCalls: v.number(),
  toolResults: v.number(),
  totalMessages: v.number(),
  tokens: v.strictObject({ input: v.number(), output: v.number(), cacheRead: v.number(), cacheWrite: v.number(), total: v.number() }),
  cost: v.number(),
  contextUsage: v.optional(
    v.strictObject({ tokens: v.nullable(v.number()), contextWindow: v.number(), percent: v.nullable(v.number()) }),
  ),
});

export const CapabilitiesSchema = v.strictObject({
  name: v.literal("pion"),
  version: v.string(),
  protocols: v.array(v.strictObject({ id: v.string(), document: v.string(), description: v.string() })),
  commands: v.array(v.string()),
  inboundFrames: v.array(v.string()),
  events: v.array(v.string()),
  features: v.record(v.string(), v.boolean()),
});

const SessionSummarySchema = v.strictObject({
  sessionId: v.string(),
  sessionFile: v.optional(v.string()),
  cwd: v.string(),
  name: v.optional(v.string()),
  firstMessage: v.optional(v.string()),
  messageCount: v.number(),
  createdAt: v.string(),
  updatedAt: v.string(),
  parentSession: v.optional(v.string()),
});

const SearchHitSchema = v.strictObject({
  sessionId: v.string(),
  sessionFile: v.optional(v.string()),
  entryId: v.string(),
  role: v.string(),
  snippet: v.string(),
  timestamp: v.string(),
});

/** `data` of a successful response, per command; `undefined` when the success carries none. */
export const RESULT_SCHEMAS = {
  prompt: disposition,
  steer: disposition,
  follow_up: disposition,
  abort: undefined,
  abort_and_prompt: disposition,
  new_session: cancelled,
  get_state: StateSchema,
  get_messages: v.strictObject({ messages: v.array(AgentMessageSchema) }),
  set_todos: v.strictObject({ phases: v.array(TodoPhaseOutSchema) }),
  set_host_tools: v.strictObject({ toolNames: v.array(v.string()) }),
  set_model: ModelSchema,
  cycle_model: v.nullable(v.strictObject({ model: ModelSchema, thinkingLevel: ThinkingLevelSchema, isScoped: v.boolean() })),
  get_available_models: v.strictObject({ models: v.array(ModelSchema) }),
  set_thinking_level: undefined,
  cycle_thinking_level: v.nullable(v.strictObject({ level: ThinkingLevelSchema })),
  get_available_thinking_levels: v.strictObject({ levels: v.array(ThinkingLevelSchema) }),
  set_steering_mode: undefined,
  set_follow_up_mode: undefined,
  set_interrupt_mode: undefined,
  clear_queue: v.strictObject({ steering: v.array(v.string()), followUp: v.array(v.string()) }),
  compact: CompactionResultSchema,
  set_auto_compaction: undefined,
  set_auto_retry: undefined,
  abort_retry: undefined,
  bash: v.strictObject({
    output: v.string(),
    exitCode: v.optional(v.number()),
    cancelled: v.boolean(),
    truncated: v.boolean(),
    fullOutputPath: v.optional(v.string()),
  }),
  abort_bash: undefined,
  get_session_stats: SessionStatsSchema,
  export_html: v.strictObject({ path: v.string() }),
  switch_session: cancelled,
  fork: forkResult,
  branch: forkResult,
  clone: cancelled,
  get_fork_messages: forkMessages,
  get_branch_messages: forkMessages,
  get_entries: v.strictObject({ entries: v.array(EntrySchema), leafId: v.nullable(v.string()), hasMore: v.optional(v.boolean()) }),
  get_tree: v.strictObject({ tree: v.array(TreeNodeSchema), leafId: v.nullable(v.string()) }),
  get_last_assistant_text: v.strictObject({ text: v.nullable(v.string()) }),
  set_session_name: undefined,
  get_commands: v.strictObject({ commands: v.array(CommandInfoSchema) }),
  get_capabilities: CapabilitiesSchema,
  get_mcp_status: v.strictObject({ servers: v.array(McpServerStatusSchema) }),
  list_sessions: v.strictObject({ sessions: v.array(SessionSummarySchema), nextCursor: v.optional(v.string()) }),
  search_sessions: v.strictObject({ results: v.array(SearchHitSchema) }),
} as const satisfies Record<Exclude<CommandType, "extension_ui_response" | "host_tool_update" | "host_tool_result" | "tool_approval_response">, v.GenericSchema | undefined>;

export type RequestType = keyof typeof RESULT_SCHEMAS;
type ResultSchemaOf<T extends RequestType> = (typeof RESULT_SCHEMAS)[T];
/** The `data` of a successful response to command `T` (`undefined` when it carries none). */
export type ResultOf<T extends RequestType> = ResultSchemaOf<T> extends v.GenericSchema ? v.InferOutput<ResultSchemaOf<T>> : undefined;

export const REQUEST_TYPES = COMMAND_TYPES.filter((t): t is RequestType => !SILENT_FRAMES.has(t));
export const isRequestType = (t: string): t is RequestType => Object.hasOwn(RESULT_SCHEMAS, t);

const id = v.optional(v.string());

/** The success record of command `type`, with its `data` (absent when the command returns none). */
export function successSchema<T extends RequestType>(type: T) {
  const data = RESULT_SCHEMAS[type];
  const base = { id, type: v.literal("response"), command: v.literal(type), success: v.literal(true) } as const;
  return data === undefined ? v.strictObject(base) : v.strictObject({ ...base, data });
}

/** Every failure: `command` is absent only when the record had no type to name (or "parse" for a bad line). */
export const FailureResponseSchema = v.strictObject({
  id,
  type: v.literal("response"),
  command: v.optional(v.string()),
  success: v.literal(false),
  error: v.string(),
});

export type SuccessOf<T extends RequestType> = { id?: string; type: "response"; command: T; success: true; data?: ResultOf<T> };
export type WireFailure = v.InferOutput<typeof FailureResponseSchema>;
