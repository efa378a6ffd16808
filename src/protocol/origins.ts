import type { CommandType } from "./commands.ts";
import type { EventType } from "./events.ts";

/**
 * Where each record and field of the wire comes from, for the generated JSON Schema
 * descriptions and docs/protocol.md. "000": the RPC document; "002": the Bun fork's
 * reference (additive commands); "004": JSON mode; "reference": written by the reference
 * agent but not in the documents; "pion": an addition of pion's (always additive).
 */
export type Origin = "000" | "002" | "004" | "reference" | "pion";

export const ORIGIN_LABEL: Record<Origin, string> = {
  "000": "spec 000",
  "002": "spec 002",
  "004": "spec 004",
  reference: "reference agent (not in the documents)",
  pion: "pion addition",
};

export const COMMAND_ORIGIN: Record<CommandType, Origin> = {
  prompt: "000",
  steer: "000",
  follow_up: "000",
  abort: "000",
  abort_and_prompt: "002",
  new_session: "000",
  get_state: "000",
  get_messages: "000",
  set_todos: "002",
  set_host_tools: "002",
  set_model: "000",
  cycle_model: "000",
  get_available_models: "000",
  set_thinking_level: "000",
  cycle_thinking_level: "000",
  get_available_thinking_levels: "000",
  set_steering_mode: "000",
  set_follow_up_mode: "000",
  set_interrupt_mode: "002",
  clear_queue: "pion",
  compact: "000",
  set_auto_compaction: "000",
  set_auto_retry: "000",
  abort_retry: "000",
  bash: "000",
  abort_bash: "000",
  get_session_stats: "000",
  export_html: "000",
  switch_session: "000",
  fork: "000",
  branch: "002",
  clone: "000",
  get_fork_messages: "000",
  get_branch_messages: "002",
  get_entries: "000",
  get_tree: "000",
  get_last_assistant_text: "000",
  set_session_name: "000",
  get_commands: "000",
  get_capabilities: "pion",
  get_mcp_status: "pion",
  list_sessions: "pion",
  search_sessions: "pion",
  extension_ui_response: "000",
  host_tool_update: "002",
  host_tool_result: "002",
  tool_approval_response: "pion",
};

export const EVENT_ORIGIN: Record<EventType, Origin> = {
  agent_start: "000",
  agent_end: "000",
  agent_settled: "000",
  turn_start: "000",
  turn_end: "000",
  message_start: "000",
  message_update: "000",
  message_end: "000",
  tool_execution_start: "000",
  tool_execution_update: "000",
  tool_execution_end: "000",
  queue_update: "000",
  compaction_start: "000",
  compaction_end: "000",
  auto_retry_start: "000",
  auto_retry_end: "000",
  summarization_retry_scheduled: "000",
  summarization_retry_attempt_start: "000",
  summarization_retry_finished: "000",
  bash_execution_update: "000",
  session_info_changed: "reference",
  thinking_level_changed: "reference",
  entry_appended: "reference",
  todo_update: "pion",
  mcp_status: "pion",
  sandbox_status: "pion",
  session_store_recovered: "pion",
  host_tool_call: "002",
  host_tool_cancel: "002",
  tool_approval_request: "pion",
  prompt_result: "pion",
  extension_error: "000",
  extension_ui_request: "000",
};

/**
 * pion's additive fields inside records that the documents define, with what they mean.
 * Keys: `command <type>`, `response <type>` (fields of `data`), `event <type>`.
 */
export const PION_FIELDS: Readonly<Record<string, Readonly<Record<string, string>>>> = {
  "command get_entries": { limit: "Page size; the answer then carries hasMore." },
  "command prompt": {
    maxTurns: "Run limit: at most this many model calls for the run the prompt starts (retries and compaction summaries count).",
    maxCostUsd: "Run limit: stop the run once its model calls cost this many dollars.",
  },
  "response get_state": {
    queuedMessageCount: "Spec 002's name for pendingMessageCount (same value), for hosts written against that document.",
    projectTrust:
      "Whether the cwd's own .pion/ resources (settings, extensions, skills, prompt templates) loaded: \"trusted\", \"untrusted\" (skipped), or \"none\" when the folder has none. Decided once at start-up.",
    permissionMode: "How tool calls are approved: auto, ask or read-only (settings permissions.mode, --permission-mode).",
    sandboxMode: "Whether the model's commands run in pion's bubblewrap sandbox: off, read-only or workspace-write (settings sandbox.mode, --sandbox).",
    sandboxNetwork: "Whether sandboxed commands have the network (settings sandbox.network); true when the sandbox is off.",
  },
  "response get_entries": { hasMore: "True when entries after the last returned one exist (only when limit was given)." },
  "command tool_approval_response": {
    decision: "allow runs the call; allow_always also allows it (each command of a bash line, or the path) for the rest of the session; deny refuses it.",
    message: "Shown to the model with a deny; recorded with the decision.",
  },
  "event tool_approval_request": {
    id: "Echoed by the tool_approval_response that answers it; an unknown or repeated id is ignored.",
    reason: "Why approval is needed: ask mode, or the ask rule that matched.",
    options: "The decisions the host may answer with.",
  },
  "event message_end": { entryId: "Id of the entry the message was committed as, before the event was written." },
  "event session_info_changed": { entryId: "Id of the session_info entry." },
  "event thinking_level_changed": {
    requested: "The level a set_thinking_level or a model switch asked for, when the model does not offer it: level is then the nearest one it offers (sent even when the level stays the same).",
  },
  "event tool_execution_end": { durationMs: "Wall time of the tool call." },
  "event agent_settled": {
    usage: "Summed usage of every model call of the run (retries and compaction included).",
    cost: "Summed cost of the run, usage.cost.total.",
    stopReason: '"limit" when a run limit (maxTurns, maxCostUsd) stopped the run; absent otherwise.',
    errorMessage: "With stopReason limit: which limit and the figure reached.",
  },
};
