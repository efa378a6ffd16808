/**
 * The contract between the session and the extension system. The session implements
 * ExtensionSessionPort; loadExtensions (loader.ts) returns an ExtensionRunner the session
 * calls at each hook point. Nothing here knows about stdout except through writeFrame.
 */
import type { SourceInfo } from "../resources/source-info.ts";
import type { ImageContent, Model } from "../providers/types.ts";
import type { ShellExec, ShellGuard } from "../tools/shell.ts";
import type { DiscoveredExtension } from "./discover.ts";
import type { DialogHost } from "./ui-bridge.ts";
import type { VirtualModelDefinition } from "./api.ts";
import type { Tool } from "../tools/tool.ts";
import type { BashSandbox } from "../tools/bash.ts";
import type { McpConfig } from "../mcp/config.ts";
import type { McpServerStatus } from "../mcp/connection.ts";
import type { McpCommandHost } from "../mcp/status-command.ts";

export type ExtensionMode = "rpc" | "json" | "print" | "acp";

/** A custom message an extension injects (reference `CustomMessage` without role/timestamp). */
export interface ExtensionMessage {
  customType: string;
  content: string | unknown[];
  display?: boolean;
  details?: unknown;
}

export interface SendMessageOptions {
  triggerTurn?: boolean;
  deliverAs?: "steer" | "followUp" | "nextTurn";
}

/** A slash command as `pi.getCommands()` and `get_commands` describe it. */
export interface SlashCommandInfo {
  name: string;
  description?: string;
  source: "extension" | "prompt" | "skill";
  sourceInfo: SourceInfo;
}

/** What the session offers to extensions (the session implements it). */
export interface ExtensionSessionPort {
  cwd: string;
  mode: ExtensionMode;
  /** true in rpc mode (dialogs and fire-and-forget UI calls become extension_ui_request frames) and when `dialogs` is set. */
  hasUI: boolean;
  /** Optional: where dialogs go instead of frames (ACP: the editor's elicitation); fire-and-forget calls are then dropped. */
  dialogs?: DialogHost;
  /** Whether the cwd's own resources loaded (project trust), for `ctx.isProjectTrusted()`. */
  projectTrusted: boolean;
  model(): Model | undefined;
  isIdle(): boolean;
  /** Steering or follow-up messages are queued. */
  hasPendingMessages(): boolean;
  abort(): void;
  shutdown(): void;
  sendMessage(msg: ExtensionMessage, opts?: SendMessageOptions): void;
  sendUserMessage(text: string, opts?: { deliverAs?: "steer" | "followUp" }, images?: ImageContent[]): void;
  appendEntry(customType: string, data?: unknown): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  /** Write a frame on stdout (extension_ui_request, extension_error). */
  writeFrame(frame: Record<string, unknown>): void;
  /** Optional: the environment of programs `pi.exec` and factory-made bash tools start (pion's, minus its credentials), and the masking of their output. */
  shellGuard?: ShellGuard;
  /** Optional: pion's sandbox, which factory-made bash tools run their local commands in. */
  shellSandbox?: BashSandbox;
  /** Optional: every command `get_commands` lists (built-ins, extensions, prompt templates, skills), which `pi.getCommands()` answers too; without it only the extensions' own. */
  commands?(): SlashCommandInfo[] | undefined;
  /** Optional: the models `ctx.modelRegistry` looks up (virtual ones included); none without it. */
  models?(): ModelLookup | undefined;
  /** Optional: the session behind `ctx.sessionManager`, `ctx.compact`, `pi.setModel`... (context-members.ts); undefined before it exists. */
  control?(): SessionControl | undefined;
  /** Optional: the session's MCP servers, for the reference's built-in extension factories (surface/coding-builtin-extensions.ts). */
  mcp?(): ExtensionMcpHost | undefined;
}

/**
 * pion's one MCP machinery as the reference's built-in extension factories reach it: the servers
 * an extension's `createMcpExtension` gives take the place of mcp.json's (same tools, exposure,
 * permission gate, credential guard and status frames), never a second client.
 */
export interface ExtensionMcpHost {
  home: string;
  env: Record<string, string | undefined>;
  /** `--no-mcp`: no server connects, the extension's neither. */
  disabled: boolean;
  /** Uses these servers (and errors, shown in status) in place of mcp.json's and starts them; run-time (ACP) servers stay. */
  configure(config: McpConfig): Promise<void>;
  status(): McpServerStatus[];
  /** What `/mcp` works on (mcp/status-command.ts): the same servers. */
  command(): McpCommandHost;
  /** The MCP tool set's `tool_search`, once a run prepared it. */
  toolSearch(): Tool | undefined;
  /** pion's codemode: the MCP tool set's while servers run, else one over the declared tools. */
  codemode(): Promise<Tool>;
}

/** Where `pi` keeps the MCP host for pion's own factories (not an ExtensionAPI member). */
export const MCP_HOST: unique symbol = Symbol.for("pion.extensions.mcpHost");

/** The session state and controls extensions reach (the session's composition implements it). */
export interface SessionControl {
  /**
   * `ctx.reload()`: session_shutdown, the settings read again, the extensions they list and the
   * resources loaded again, session_start and resources_discover (reason "reload"). Throws (code
   * "busy") while a prompt runs or a compaction is written.
   */
  reload(): Promise<void>;
  header(): unknown;
  file(): string | undefined;
  sessionId(): string;
  leafId(): string | null;
  entries(): unknown[];
  entry(id: string): unknown;
  /** The path from the root to `fromId` (default: the leaf). */
  branch(fromId?: string): unknown[];
  name(): string | undefined;
  systemPrompt(): string;
  contextUsage(): { tokens: number | null; contextWindow: number; percent: number | null } | undefined;
  compact(customInstructions?: string): Promise<unknown>;
  thinkingLevel(): string;
  setThinkingLevel(level: string): void;
  /** false when the model is unknown or has no credentials. */
  setModel(provider: string, id: string): boolean;
  /** The tools the next model call gets, and every tool there is. */
  activeTools(): string[];
  allTools(): { name: string; description: string; parameters: unknown; promptGuidelines?: string[]; sourceInfo: SourceInfo }[];
  setActiveTools(names: string[]): void;
  /** A session command as the host would send it (new_session, switch_session, fork): the handler's result. */
  command(type: string, args: Record<string, unknown>): Promise<unknown>;
  /** `ctx.navigateTree`: the session's tree navigation (session/tree-navigation.ts). */
  navigate(targetId: string, options?: { summarize?: boolean; customInstructions?: string; replaceInstructions?: boolean; label?: string }): Promise<{ cancelled: boolean; aborted?: boolean }>;
  /** The running prompt's abort signal; undefined when idle. */
  signal(): AbortSignal | undefined;
  apiKeyAndHeaders(provider: string): Promise<{ apiKey?: string; headers?: Record<string, string> }>;
  /** The models `--models` scoped the session to (empty when not scoped). */
  scopedModels(): Model[];
}

/** The part of the model registry extensions read. */
export interface ModelLookup {
  find(provider: string, id: string): Model | undefined;
  available(): Model[];
  all(): Model[];
}

export interface ToolCallInfo {
  toolCallId: string;
  toolName: string;
  input: Record<string, unknown>;
}

export interface ToolResultInfo {
  content: unknown[];
  details?: unknown;
  isError: boolean;
  /** Absent when the tool gave none; dropped when a handler replaces `content` without giving a new one. */
  structuredContent?: unknown;
}

export type InputOutcome = { action: "continue"; text: string; images?: unknown[] } | { action: "handled" };

export type ToolCallDecision = { block: true; reason: string } | { block: false; input: Record<string, unknown> };

export interface BeforeAgentStartOutcome {
  /** Present only when a handler changed it. */
  systemPrompt?: string;
  /** Messages to persist and send before the prompt, in handler order. */
  messages?: ExtensionMessage[];
}

/** A tool registered with `pi.registerTool`, adapted to pion's Tool interface. */
export interface ExtensionTool extends Tool<Record<string, unknown>> {
  /** The extension that registered it. */
  extensionPath: string;
  /** Where that extension came from (`pi.getAllTools()` reports it). */
  sourceInfo?: SourceInfo;
  promptSnippet?: string;
  promptGuidelines?: string[];
  /** `defaultActive: false`: declared only once `--tools` / `defaultTools` name it or `pi.setActiveTools` activates it. */
  defaultActive?: false;
}

/** A flag an extension declared with `pi.registerFlag`. */
export interface RegisteredFlag {
  name: string;
  type: "boolean" | "string";
  description?: string;
  default?: boolean | string;
  extensionPath: string;
}

/** How `reloadExtensions` gets each extension's factory: its module evaluated anew, or the one already loaded. */
export type ReloadModules = "fresh" | "same";

/**
 * An extension given as its factory rather than a module (the reference's `extensionFactories`):
 * `path` names it (`<inline:name>`), and it counts as found inline.
 */
export interface InlineExtension {
  path: string;
  factory: (pi: never) => unknown;
}

/** One extension to load: a discovered one (discover.ts), a factory, or a plain path, which counts as named on the command line. */
export type ExtensionSource = string | DiscoveredExtension | InlineExtension;

/** What a `user_bash` handler decided (see ExtensionRunner.onUserBash). */
export type UserBashOutcome =
  | { exec: ShellExec }
  | { result: { output: string; exitCode?: number; cancelled: boolean; truncated: boolean; fullOutputPath?: string } }
  | { error: string };

export interface ExtensionRunner {
  readonly loaded: { path: string }[];
  /** Every flag the loaded extensions registered, in load order. */
  registeredFlags(): RegisteredFlag[];
  /** The command line's values for those flags, before session_start; `pi.getFlag` reads them. */
  setFlagValues(values: Record<string, boolean | string>): void;
  /** Fire-and-forget notifications (session_start, agent_start/end, turn_start/end, message_*, tool_execution_*, session_shutdown ...); handler errors become extension_error frames. */
  notify(event: string, payload: Record<string, unknown>): Promise<void>;
  /** `input` event: handlers may transform the text/images or mark it handled. */
  onInput(text: string, images: unknown[] | undefined, source: "rpc" | "extension"): Promise<InputOutcome>;
  onBeforeAgentStart(prompt: string, systemPrompt: string): Promise<BeforeAgentStartOutcome>;
  /** Whether any extension handles `event`. */
  handles(event: string): boolean;
  /** `before_provider_request`: each handler may replace the provider payload (undefined keeps it). */
  onProviderRequest(payload: unknown): Promise<unknown>;
  /** `resources_discover`: the skill and prompt paths every handler returned. */
  onResourcesDiscover(event: { cwd: string; reason: string }): Promise<{ skillPaths: string[]; promptPaths: string[] }>;
  /** `context` event: handlers may replace the message list sent to the model. */
  onContext(messages: unknown[]): Promise<unknown[]>;
  onToolCall(call: ToolCallInfo): Promise<ToolCallDecision>;
  onToolResult(call: ToolCallInfo, result: ToolResultInfo): Promise<ToolResultInfo>;
  /**
   * `user_bash` (the host's `bash` command): the first handler that answers decides. `exec` runs
   * the command through the extension's operations (e.g. over ssh), `result` is the command's
   * outcome without running it, `error` a handler that failed (the command does not run, as in
   * the reference); undefined runs it locally.
   */
  onUserBash(event: { command: string; excludeFromContext: boolean; cwd: string }): Promise<UserBashOutcome | undefined>;
  /** session_before_switch / session_before_fork: true when a handler cancelled. */
  beforeSessionChange(event: "session_before_switch" | "session_before_fork", payload: Record<string, unknown>): Promise<boolean>;
  /** A session_before_* event: the last answer a handler gave (an object), or the first that cancels (`cancel: true`). */
  askBefore(event: string, payload: Record<string, unknown>): Promise<Record<string, unknown> | undefined>;
  /**
   * Every registration dropped, then each extension's factory run again: on the module evaluated
   * anew ("fresh", `ctx.reload()`, the default) or on the module already loaded ("same", a session
   * change: module-level state persists). `paths` replaces the list loaded so far (`ctx.reload()`
   * after the settings changed): extensions no longer in it are not loaded again.
   */
  reloadExtensions(modules?: ReloadModules, paths?: readonly ExtensionSource[]): Promise<void>;
  /** Tools registered so far; extensions may register more at any time, so ask before each turn. */
  tools(): ExtensionTool[];
  commands(): { name: string; description?: string; path: string; sourceInfo: SourceInfo }[];
  /** Run `/name args` if it is an extension command; false when it is not one. */
  runCommand(text: string): Promise<boolean>;
  /** An extension_ui_response from the host; unknown ids are ignored. */
  handleUiResponse(frame: { id: string; value?: string; confirmed?: boolean; cancelled?: boolean }): void;
  /** Every provider registered with `pi.registerProvider` (the latest registration of a name wins), in load order. */
  providers(): { name: string; config: unknown; extensionPath: string }[];
  /** Every registered virtual model, one per provider/id (the latest registration wins), in load order. */
  virtualModels(): VirtualModelDefinition[];
  /** Ask the router of the virtual model provider/id; what it returns is unchecked. Throws when none is registered or the router throws. */
  routeVirtual(provider: string, id: string, request: Record<string, unknown>): Promise<unknown>;
}
