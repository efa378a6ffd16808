import type { AgentEvent } from "../agent/events.ts";
import type { LoopDeps } from "../agent/loop.ts";
import type { ApprovalRequest } from "../permissions/port.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import type { HostToolFrame } from "../extensions/host-tools.ts";
import type { ModelRegistry } from "../providers/models.ts";
import type { Model, StreamFn, ThinkingBudgets, ThinkingLevel, Usage } from "../providers/types.ts";
import type { Entry, SessionHeader } from "../store/entries.ts";
import type { SessionStore } from "../store/store.ts";
import type { ShellGuard } from "../tools/shell.ts";
import type { TodoPhase } from "../tools/todo.ts";
import type { Tool } from "../tools/tool.ts";
import type { EncodedEvent } from "../util/json-bytes.ts";
import type { CompactionEvent } from "./compactor.ts";
import type { RunLimits } from "./limits.ts";
import type { QueueMode } from "./queues.ts";
import type { ModelRouter } from "./routing.ts";

/** The session's contracts: the events it emits and the options it is built from. */

/** Domain events: the loop's events plus the session's own. `entryId` marks a persisted entry. */
export type SessionEvent =
  | (AgentEvent & { entryId?: string; willRetry?: boolean })
  | { type: "agent_settled"; aborted: boolean; usage: Usage; cost: number; stopReason?: "limit"; errorMessage?: string }
  | { type: "prompt_result"; id: string; stopReason: string; aborted: boolean; errorMessage?: string; usage: Usage; cost: number }
  | { type: "queue_update"; steering: string[]; followUp: string[] }
  | { type: "session_info_changed"; name: string | undefined; entryId: string }
  | { type: "thinking_level_changed"; level: ThinkingLevel; /** The level asked for, when the model does not offer it. */ requested?: ThinkingLevel }
  | { type: "auto_retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "auto_retry_end"; success: boolean; attempt: number; finalError?: string }
  | { type: "todo_update"; phases: TodoPhase[] }
  | EncodedEvent
  | { type: "entry_appended"; entry: Entry }
  | CompactionEvent
  | ExtensionFrame
  | HostToolFrame
  | ApprovalRequestFrame;

/** An approval request as the wire layer that asks the host (rpc) writes it; `id` matches the answer. */
export type ApprovalRequestFrame = { type: "tool_approval_request"; id: string } & ApprovalRequest;

/** extension_ui_request / extension_error frames, written as the extension runner built them. */
export interface ExtensionFrame {
  type: "extension_ui_request" | "extension_error";
  [key: string]: unknown;
}

export interface SessionOptions {
  store: SessionStore;
  stream: StreamFn;
  models: ModelRegistry;
  tools: () => ReadonlyMap<string, Tool>;
  /** Loads what runs need (the built-in tools' code); awaited before each run's first use of `tools`. */
  prepare?: () => Promise<void>;
  systemPrompt: (tools: readonly Tool[]) => string;
  /** Loaded extensions, whose hooks the session calls. */
  extensions?: ExtensionRunner;
  /** Permissions: whether a validated tool call may run (before extension hooks). */
  gate?: LoopDeps["gate"];
  /**
   * settings `images.autoResize` (default true), asked for each message with images: images sent with
   * a prompt, steer or follow-up are scaled down to the model's limits before they are recorded and sent (prompt-images.ts).
   */
  autoResizeImages?: () => boolean;
  /** Expands /skill:name and /template commands in prompts, steers and follow-ups. */
  expand?: (text: string) => string;
  cwd: string;
  model?: Model;
  thinkingLevel: ThinkingLevel;
  steeringMode: QueueMode;
  followUpMode: QueueMode;
  interruptMode: "immediate" | "wait";
  autoCompaction: boolean;
  autoRetry: boolean;
  /** Read at each use: `ctx.reload()` refreshes these objects from the settings (compose-reload.ts). */
  retry: { maxRetries: number; baseDelayMs: number; maxAgentDelayMs?: number };
  compaction: { reserveTokens: number; keepRecentTokens: number };
  /** Limits every run gets unless its prompt sets its own (asked as each run starts: a ctx.reload() may change them). */
  limits?: () => RunLimits;
  /** settings.json `httpIdleTimeoutMs`, asked at each request. */
  idleTimeoutMs?: () => number | undefined;
  /** settings.json `thinkingBudgets`, asked at each request and passed with it. */
  thinkingBudgets?: () => ThinkingBudgets | undefined;
  /** JSONL path for a new session, or undefined when nothing goes to disk. */
  fileFor: (header: SessionHeader) => string | undefined;
  /** The host shell's environment and output masking (the credential guard). */
  shellGuard?: ShellGuard;
  /** The host shell's program and the line put before each command (settings `shellPath`, `shellCommandPrefix`). */
  shell?: { path?: string; commandPrefix?: string };
  /** Picks the physical model of each request made with a virtual model (see routing.ts). */
  router?: ModelRouter;
}

export type Disposition = "started" | "queued" | "handled";
