import * as v from "valibot";
export { describeIssues } from "../util/issues.ts";

/**
 * Every inbound record of the protocol (documents 000 and 002, plus pion's additive
 * commands), one valibot schema each. Types are inferred from the schemas.
 */

const id = v.optional(v.string());
const nonEmpty = v.pipe(v.string(), v.minLength(1));

export const ImageContentSchema = v.object({
  type: v.literal("image"),
  data: v.string(),
  mimeType: v.string(),
});
const images = v.optional(v.array(ImageContentSchema));

export const THINKING_LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"] as const;
const queueMode = v.picklist(["all", "one-at-a-time"]);

const TodoTaskSchema = () => v.object({
  id: v.optional(v.string()),
  content: v.string(),
  status: v.optional(v.picklist(["pending", "in_progress", "completed", "abandoned"])),
});
const todoPhaseSchema = () =>
  v.object({
    id: v.optional(v.string()),
    name: v.string(),
    tasks: v.array(TodoTaskSchema()),
  });

/** MCP's tool annotations; `readOnlyHint: true` lets the tool run without approval in ask mode and in read-only mode. */
const toolAnnotationsSchema = () => v.object({
  readOnlyHint: v.optional(v.boolean()),
  destructiveHint: v.optional(v.boolean()),
  idempotentHint: v.optional(v.boolean()),
  openWorldHint: v.optional(v.boolean()),
});

const HostToolSchema = () => v.object({
  name: nonEmpty,
  label: v.optional(v.string()),
  description: v.string(),
  parameters: v.record(v.string(), v.unknown()),
  annotations: v.optional(toolAnnotationsSchema()),
});

const ToolResultPayload = () => v.object({
  content: v.array(v.union([v.object({ type: v.literal("text"), text: v.string() }), ImageContentSchema])),
  details: v.optional(v.unknown()),
});

const cmd = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) =>
  v.object({ id, type: v.literal(type), ...entries });

/**
 * Each command's schema, built the first time a record of that type arrives (a process that
 * answers get_state builds one schema, not the protocol's seventy).
 */
const COMMAND_BUILDERS = {
  // prompting
  prompt: () => cmd("prompt", {
    message: v.string(),
    images,
    streamingBehavior: v.optional(v.picklist(["steer", "followUp"])),
    // run limits for the run this prompt starts (pion's addition)
    maxTurns: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    maxCostUsd: v.optional(v.pipe(v.number(), v.gtValue(0))),
  }),
  steer: () => cmd("steer", { message: v.string(), images }),
  follow_up: () => cmd("follow_up", { message: v.string(), images }),
  abort: () => cmd("abort", {}),
  abort_and_prompt: () => cmd("abort_and_prompt", { message: v.string(), images }),
  new_session: () => cmd("new_session", { parentSession: v.optional(v.string()) }),
  // state
  get_state: () => cmd("get_state", {}),
  get_messages: () => cmd("get_messages", {}),
  set_todos: () => cmd("set_todos", { phases: v.array(todoPhaseSchema()) }),
  set_host_tools: () => cmd("set_host_tools", { tools: v.array(HostToolSchema()) }),
  // model
  set_model: () => cmd("set_model", { provider: v.string(), modelId: v.string() }),
  cycle_model: () => cmd("cycle_model", {}),
  get_available_models: () => cmd("get_available_models", {}),
  // thinking
  set_thinking_level: () => cmd("set_thinking_level", { level: v.picklist(THINKING_LEVELS) }),
  cycle_thinking_level: () => cmd("cycle_thinking_level", {}),
  get_available_thinking_levels: () => cmd("get_available_thinking_levels", {}),
  // queue modes
  set_steering_mode: () => cmd("set_steering_mode", { mode: queueMode }),
  set_follow_up_mode: () => cmd("set_follow_up_mode", { mode: queueMode }),
  set_interrupt_mode: () => cmd("set_interrupt_mode", { mode: v.picklist(["immediate", "wait"]) }),
  clear_queue: () => cmd("clear_queue", {}),
  // compaction
  compact: () => cmd("compact", { customInstructions: v.optional(v.string()) }),
  set_auto_compaction: () => cmd("set_auto_compaction", { enabled: v.boolean() }),
  // retry
  set_auto_retry: () => cmd("set_auto_retry", { enabled: v.boolean() }),
  abort_retry: () => cmd("abort_retry", {}),
  // bash
  bash: () => cmd("bash", { command: v.string(), excludeFromContext: v.optional(v.boolean()) }),
  abort_bash: () => cmd("abort_bash", {}),
  // session
  get_session_stats: () => cmd("get_session_stats", {}),
  export_html: () => cmd("export_html", { outputPath: v.optional(v.string()) }),
  switch_session: () => cmd("switch_session", { sessionPath: v.string() }),
  fork: () => cmd("fork", { entryId: v.string() }),
  branch: () => cmd("branch", { entryId: v.string() }),
  clone: () => cmd("clone", {}),
  get_fork_messages: () => cmd("get_fork_messages", {}),
  get_branch_messages: () => cmd("get_branch_messages", {}),
  get_entries: () => cmd("get_entries", {
    since: v.optional(v.string()),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  get_tree: () => cmd("get_tree", {}),
  get_last_assistant_text: () => cmd("get_last_assistant_text", {}),
  set_session_name: () => cmd("set_session_name", { name: v.string() }),
  get_commands: () => cmd("get_commands", {}),
  get_capabilities: () => cmd("get_capabilities", {}),
  get_mcp_status: () => cmd("get_mcp_status", {}),
  list_sessions: () => cmd("list_sessions", {
    cwd: v.optional(v.string()),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
    cursor: v.optional(v.string()),
  }),
  search_sessions: () => cmd("search_sessions", {
    query: v.string(),
    cwd: v.optional(v.string()),
    limit: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1))),
  }),
  // sub-protocol frames from the host
  extension_ui_response: () => v.object({
    type: v.literal("extension_ui_response"),
    id: v.string(),
    value: v.optional(v.string()),
    confirmed: v.optional(v.boolean()),
    cancelled: v.optional(v.boolean()),
  }),
  host_tool_update: () => v.object({ type: v.literal("host_tool_update"), id: v.string(), partialResult: ToolResultPayload() }),
  host_tool_result: () => v.object({
    type: v.literal("host_tool_result"),
    id: v.string(),
    result: ToolResultPayload(),
    isError: v.optional(v.boolean()),
  }),
  tool_approval_response: () => v.object({
    type: v.literal("tool_approval_response"),
    id: v.string(),
    decision: v.picklist(["allow", "allow_always", "deny"]),
    message: v.optional(v.string()),
  }),
} as const;

type Builders = typeof COMMAND_BUILDERS;
export type CommandType = keyof Builders;
export type CommandSchema<T extends CommandType> = ReturnType<Builders[T]>;
export type CommandOf<T extends CommandType> = v.InferOutput<CommandSchema<T>>;
export type Command = { [T in CommandType]: CommandOf<T> }[CommandType];
export type ImageInput = v.InferOutput<typeof ImageContentSchema>;
export type TodoPhaseInput = v.InferOutput<ReturnType<typeof todoPhaseSchema>>;

/** Frames that answer a sub-protocol request: they get no response record. */
export const SILENT_FRAMES: ReadonlySet<string> = new Set(["extension_ui_response", "host_tool_update", "host_tool_result", "tool_approval_response"]);

export const isCommandType = (t: string): t is CommandType => Object.hasOwn(COMMAND_BUILDERS, t);

/** Every inbound record type, in the protocol's order. */
export const COMMAND_TYPES = Object.keys(COMMAND_BUILDERS) as CommandType[];

const built = new Map<CommandType, v.GenericSchema>();

/** The schema of one record type (built on first use, then kept). */
export function commandSchema<T extends CommandType>(type: T): CommandSchema<T> {
  let schema = built.get(type);
  if (!schema) built.set(type, (schema = COMMAND_BUILDERS[type]()));
  return schema as CommandSchema<T>;
}

/** Every record type's schema (the schema generator and the tests walk them all). */
export const allCommandSchemas = (): { [T in CommandType]: CommandSchema<T> } =>
  Object.fromEntries(COMMAND_TYPES.map((t) => [t, commandSchema(t)])) as { [T in CommandType]: CommandSchema<T> };
