import * as v from "valibot";
import { ImageContentSchema, THINKING_LEVELS } from "./commands.ts";

/**
 * The payloads that outbound records carry: content blocks, usage, messages, entries,
 * models and todo phases. Messages and entries are loose objects (the spec's message and
 * session formats are open: extensions and older sessions add fields); their documented
 * fields are checked exactly. Everything pion itself defines is a strict object.
 */

export const TextContentSchema = v.looseObject({ type: v.literal("text"), text: v.string(), textSignature: v.optional(v.string()) });
export const ThinkingContentSchema = v.looseObject({
  type: v.literal("thinking"),
  thinking: v.string(),
  thinkingSignature: v.optional(v.string()),
  redacted: v.optional(v.boolean()),
});
export const ToolCallSchema = v.looseObject({
  type: v.literal("toolCall"),
  id: v.string(),
  name: v.string(),
  arguments: v.record(v.string(), v.unknown()),
  /** Set when the streamed arguments were not a JSON object (`arguments` is then empty); the tool did not run. */
  argumentsError: v.optional(v.string()),
});
const TextOrImage = v.variant("type", [TextContentSchema, ImageContentSchema]);

export const CostSchema = v.looseObject({
  input: v.number(),
  output: v.number(),
  cacheRead: v.number(),
  cacheWrite: v.number(),
  total: v.number(),
  totalFromProvider: v.optional(
    v.pipe(v.boolean(), v.description("true when `total` is the provider's own billed figure (OpenRouter's `usage.cost`), false when it is the sum of the parts")),
  ),
});
export const UsageSchema = v.looseObject({
  input: v.number(),
  output: v.number(),
  cacheRead: v.number(),
  cacheWrite: v.number(),
  reasoning: v.optional(v.pipe(v.number(), v.description("Reasoning tokens, a part of `output`; on every OpenAI reply (0 when none), absent on other APIs"))),
  // Optional: the spec's own example and older reference sessions leave it out; pion always writes it.
  totalTokens: v.optional(v.number()),
  cost: CostSchema,
  cacheWrite1h: v.optional(
    v.pipe(v.number(), v.description("Anthropic's one-hour cache writes, a part of `cacheWrite` priced apart; on every Anthropic reply (0 when none), absent on other APIs")),
  ),
});

export const StopReasonSchema = v.picklist(["stop", "length", "toolUse", "error", "aborted"]);
export const ThinkingLevelSchema = v.picklist(THINKING_LEVELS);

export const UserMessageSchema = v.looseObject({
  role: v.literal("user"),
  content: v.union([v.string(), v.array(TextOrImage)]),
  timestamp: v.number(),
});
export const AssistantMessageSchema = v.looseObject({
  role: v.literal("assistant"),
  content: v.array(v.variant("type", [TextContentSchema, ThinkingContentSchema, ToolCallSchema])),
  api: v.string(),
  provider: v.string(),
  model: v.string(),
  responseId: v.optional(v.string()),
  usage: UsageSchema,
  stopReason: StopReasonSchema,
  rawStopReason: v.optional(v.string()),
  durationMs: v.optional(v.number()),
  thinkingLevel: v.optional(v.string()),
  errorMessage: v.optional(v.string()),
  timestamp: v.number(),
});
export const ToolResultMessageSchema = v.looseObject({
  role: v.literal("toolResult"),
  toolCallId: v.string(),
  toolName: v.string(),
  content: v.array(TextOrImage),
  details: v.optional(v.unknown()),
  isError: v.boolean(),
  durationMs: v.optional(v.number()),
  timestamp: v.number(),
});
export const BashExecutionMessageSchema = v.looseObject({
  role: v.literal("bashExecution"),
  command: v.string(),
  output: v.string(),
  /** Absent when the process was killed before it exited. */
  exitCode: v.optional(v.number()),
  cancelled: v.boolean(),
  truncated: v.boolean(),
  fullOutputPath: v.optional(v.string()),
  excludeFromContext: v.optional(v.boolean()),
  timestamp: v.number(),
});
export const CustomMessageSchema = v.looseObject({
  role: v.literal("custom"),
  customType: v.string(),
  content: v.union([v.string(), v.array(TextOrImage)]),
  display: v.boolean(),
  details: v.optional(v.unknown()),
  timestamp: v.number(),
});
export const CompactionSummaryMessageSchema = v.looseObject({
  role: v.literal("compactionSummary"),
  summary: v.string(),
  tokensBefore: v.number(),
  timestamp: v.number(),
});
export const BranchSummaryMessageSchema = v.looseObject({
  role: v.literal("branchSummary"),
  summary: v.string(),
  fromId: v.string(),
  timestamp: v.number(),
});

/**
 * The reference agent's system-role message (its prompt recorded in the session). Kept as
 * written in sessions imported from it; never part of pion's context or get_messages.
 */
const ImportedSystemMessageSchema = v.looseObject({ role: v.literal("system"), timestamp: v.optional(v.number()) });

export const AgentMessageSchema = v.variant("role", [
  UserMessageSchema,
  AssistantMessageSchema,
  ToolResultMessageSchema,
  BashExecutionMessageSchema,
  CustomMessageSchema,
  CompactionSummaryMessageSchema,
  BranchSummaryMessageSchema,
  ImportedSystemMessageSchema,
]);

/** What a tool (or the host, for a host tool) returns. */
export const ToolResultSchema = v.strictObject({
  content: v.array(TextOrImage),
  details: v.optional(v.unknown()),
  isError: v.optional(v.boolean()),
  structuredContent: v.optional(
    v.pipe(
      v.unknown(),
      v.description(
        "The result as data, for hosts and scripts (reference 1.6). bash: {output, truncated, full_output_path?, exit_code, wall_time_seconds} when the command ended with an exit code; read: the text shown, or {type: \"image\", data, mimeType, note}. Not on the stored toolResult message.",
      ),
    ),
  ),
});

const entry = <T extends string, E extends v.ObjectEntries>(type: T, entries: E) =>
  v.looseObject({ type: v.literal(type), id: v.string(), parentId: v.nullable(v.string()), timestamp: v.string(), ...entries });

export const EntrySchema = v.variant("type", [
  entry("message", { message: AgentMessageSchema }),
  entry("model_change", { provider: v.string(), modelId: v.string() }),
  entry("thinking_level_change", { thinkingLevel: v.string() }),
  entry("compaction", {
    summary: v.string(),
    firstKeptEntryId: v.string(),
    tokensBefore: v.number(),
    details: v.optional(v.unknown()),
    fromHook: v.optional(v.boolean()),
  }),
  entry("branch_summary", { fromId: v.string(), summary: v.string(), details: v.optional(v.unknown()), fromHook: v.optional(v.boolean()) }),
  entry("custom", { customType: v.string(), data: v.optional(v.unknown()) }),
  entry("custom_message", {
    customType: v.string(),
    content: v.union([v.string(), v.array(TextOrImage)]),
    display: v.boolean(),
    details: v.optional(v.unknown()),
  }),
  entry("label", { targetId: v.string(), label: v.optional(v.string()) }),
  entry("session_info", { name: v.optional(v.string()) }),
  entry("context_edit", { targetId: v.string(), replacement: v.nullable(AgentMessageSchema) }),
  // A permission decision about one tool call (pion's own).
  entry("permission", {
    toolCallId: v.string(),
    toolName: v.string(),
    subject: v.optional(v.string()),
    decision: v.picklist(["allow", "deny"]),
    by: v.picklist(["mode", "rule", "host", "timeout", "abort", "unavailable"]),
    mode: v.string(),
    rule: v.optional(v.string()),
    reason: v.string(),
    message: v.optional(v.string()),
    addedRules: v.optional(v.array(v.string())),
  }),
  // Written by the reference agent; kept as imported.
  entry("usage", {}),
]);

/** The first line of a session file, and of the JSON mode's output (spec 004). */
export const SessionHeaderSchema = v.strictObject({
  type: v.literal("session"),
  version: v.literal(3),
  id: v.string(),
  timestamp: v.string(),
  cwd: v.string(),
  parentSession: v.optional(v.string()),
});

export const ModelSchema = v.strictObject({
  id: v.string(),
  name: v.string(),
  api: v.pipe(v.string(), v.description('"pi-virtual" for a virtual model an extension registered (its requests go to the physical models its router picks)')),
  provider: v.string(),
  baseUrl: v.string(),
  reasoning: v.boolean(),
  input: v.array(v.picklist(["text", "image"])),
  cost: v.strictObject({
    input: v.number(),
    output: v.number(),
    cacheRead: v.number(),
    cacheWrite: v.number(),
    // Additive: higher prices once a request's input exceeds contextOver tokens.
    tiers: v.optional(
      v.array(
        v.strictObject({
          contextOver: v.number(),
          input: v.number(),
          output: v.number(),
          cacheRead: v.optional(v.number()),
          cacheWrite: v.optional(v.number()),
        }),
      ),
    ),
  }),
  contextWindow: v.number(),
  maxTokens: v.number(),
  headers: v.optional(v.record(v.string(), v.string())),
  thinkingLevels: v.optional(v.array(ThinkingLevelSchema)),
  // Additive, from the model catalog (models.dev).
  reasoningOptions: v.optional(
    v.array(
      v.variant("type", [
        v.strictObject({ type: v.literal("effort"), values: v.array(v.string()) }),
        v.strictObject({ type: v.literal("budget_tokens"), min: v.optional(v.number()), max: v.optional(v.number()) }),
        v.strictObject({ type: v.literal("toggle") }),
      ]),
    ),
  ),
  family: v.optional(v.string()),
  releaseDate: v.optional(v.string()),
  status: v.optional(v.picklist(["deprecated", "alpha", "beta"])),
  toolCall: v.optional(v.boolean()),
  source: v.optional(v.picklist(["built-in", "refreshed", "models.json"])),
});

export const TodoPhaseOutSchema = v.strictObject({
  id: v.string(),
  name: v.string(),
  tasks: v.array(
    v.strictObject({ id: v.string(), content: v.string(), status: v.picklist(["pending", "in_progress", "completed", "abandoned"]) }),
  ),
});

/** Named parts of the JSON Schema files (`$defs`), so records refer to them instead of repeating them. */
export const SHARED_DEFINITIONS = {
  Usage: UsageSchema,
  AgentMessage: AgentMessageSchema,
  AssistantMessage: AssistantMessageSchema,
  ToolResultMessage: ToolResultMessageSchema,
  Entry: EntrySchema,
  Model: ModelSchema,
  ToolResult: ToolResultSchema,
  TodoPhase: TodoPhaseOutSchema,
} as const;

export type WireUsage = v.InferOutput<typeof UsageSchema>;
export type WireAgentMessage = v.InferOutput<typeof AgentMessageSchema>;
export type WireAssistantMessage = v.InferOutput<typeof AssistantMessageSchema>;
export type WireEntry = v.InferOutput<typeof EntrySchema>;
export type WireModel = v.InferOutput<typeof ModelSchema>;
export type WireTodoPhase = v.InferOutput<typeof TodoPhaseOutSchema>;
export type WireSessionHeader = v.InferOutput<typeof SessionHeaderSchema>;
