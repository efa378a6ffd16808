/**
 * pi-coding-agent's `AgentSession` for an extension's in-process session: an `Agent` (agent.ts,
 * on pion's loop and providers) with a SessionManager that records each finished message, the
 * reference's session events (the agent's, `agent_end` with `willRetry`, `agent_settled`,
 * `queue_update`, `thinking_level_changed`), prompting with steering and follow-up queues while a
 * run streams, model and thinking-level changes, the tool loadout, stats and context usage, and
 * `dispose`, and the extensions of its resource loader bound to it (agent-session-extensions.ts:
 * `bindExtensions`, `extensionRunner`, their tools, hooks and events, `sendCustomMessage`,
 * `setSessionName`). What belongs to pion's own session (compaction, retries, branching, bash,
 * export) throws a clear error here.
 */
import type { ImageContent, Model, ThinkingLevel } from "../../providers/types.ts";
import type { QueueMode } from "../../session/queues.ts";
import type { AgentMessage, Entry } from "../../store/entries.ts";
import { clampThinkingLevel } from "../../providers/thinking.ts";
import { sessionStats } from "../../session/stats.ts";
import { contentText as textOf } from "../../store/entries.ts";
import type { Agent } from "./agent.ts";
import type { AgentTool } from "./agent-core.ts";
import { createInitialSystemMessage } from "../../session/system-messages.ts";
import type { ExtensionBindings, SessionExtensions } from "./agent-session-extensions.ts";
import { splitUserContent } from "../api.ts";

type Rec = Record<string, unknown>;
type SessionEvent = Rec & { type: string };
type Listener = (event: SessionEvent) => void;

/** The writes and reads of a SessionManager this session uses. */
export interface SessionRecord {
  appendMessage(message: unknown): string;
  appendModelChange(provider: string, modelId: string): string;
  appendThinkingLevelChange(level: string): string;
  appendCustomMessageEntry?(customType: string, content: unknown, display: boolean, details?: unknown): string;
  getSessionId(): string;
  getSessionFile(): string | undefined;
  getSessionName?(): string | undefined;
  appendSessionInfo?(name: string): string;
  getEntries(): unknown[];
  getBranch(): unknown[];
}

export interface AgentSessionConfig {
  agent: Agent;
  sessionManager: SessionRecord;
  settingsManager?: unknown;
  cwd: string;
  resourceLoader?: unknown;
  modelRegistry?: unknown;
  /** Every tool the session can offer, active or not, by name. */
  toolsByName?: Map<string, AgentTool>;
  /** The session's system prompt, put back at the head of a transcript that lost it (an extension replaced the messages). */
  systemPrompt?: string;
  /** The reference's `tools` option: only these names become active (unknown ones once an extension registers them). */
  allowedTools?: string[];
  excludedTools?: string[];
  /** Binds the resource loader's extensions to the session (createAgentSession gives it); `emit` reaches the session's listeners. */
  extensions?: (session: AgentSession, emit: (event: SessionEvent) => void) => SessionExtensions;
}

interface PromptOptions {
  images?: ImageContent[];
  streamingBehavior?: "steer" | "followUp";
  source?: string;
  expandPromptTemplates?: boolean;
}

const PERSISTED = new Set(["system", "user", "assistant", "toolResult"]);

export class AgentSession {
  readonly agent: Agent;
  readonly sessionManager: SessionRecord;
  readonly settingsManager: unknown;
  readonly resourceLoader: unknown;
  readonly modelRegistry: unknown;
  private readonly cwd: string;
  private readonly listeners = new Set<Listener>();
  private readonly toolsByName: Map<string, AgentTool>;
  private steering: string[] = [];
  private followUps: string[] = [];
  private unsubscribeAgent: (() => void) | undefined;
  private aborted = false;
  /** A queued message's text as delivered (its image notes added) -> as queued. */
  private readonly queuedAs = new Map<string, string>();
  private readonly baseSystemPrompt: string | undefined;
  private readonly extensions: SessionExtensions | undefined;
  private readonly allowedTools: string[] | undefined;
  private readonly excludedTools: Set<string>;
  /** Extension tools seen by `refreshTools`: one activates when first registered, not again after a deactivation. */
  private readonly registeredTools = new Set<string>();
  /** Custom messages for the next run (`deliverAs: "nextTurn"`), and those sent during a turn, recorded at its end. */
  private nextTurn: AgentMessage[] = [];
  private pendingCustom: AgentMessage[] = [];

  constructor(config: AgentSessionConfig) {
    this.agent = config.agent;
    this.sessionManager = config.sessionManager;
    this.settingsManager = config.settingsManager;
    this.resourceLoader = config.resourceLoader;
    this.modelRegistry = config.modelRegistry;
    this.cwd = config.cwd;
    this.toolsByName = config.toolsByName ?? new Map(config.agent.state.tools.map((t) => [t.name, t]));
    this.baseSystemPrompt = config.systemPrompt;
    this.allowedTools = config.allowedTools;
    this.excludedTools = new Set(config.excludedTools ?? []);
    this.unsubscribeAgent = this.agent.subscribe((e) => this.onAgentEvent(e));
    this.extensions = config.extensions?.(this, (e) => this.emit(e));
    this.refreshTools();
  }

  private async onAgentEvent(e: SessionEvent): Promise<void> {
    if (e.type === "message_start" && (e.message as { role: string }).role === "user") {
      const sent = textOf((e.message as { content: unknown }).content);
      const text = this.queuedAs.get(sent) ?? sent;
      this.queuedAs.delete(sent);
      const s = this.steering.indexOf(text);
      const f = s === -1 ? this.followUps.indexOf(text) : -1;
      if (s !== -1) this.steering.splice(s, 1);
      if (f !== -1) this.followUps.splice(f, 1);
      if (s !== -1 || f !== -1) this.emitQueueUpdate();
    }
    // Extensions first, then the session's listeners, as in the reference.
    await this.extensions?.onAgentEvent(e);
    this.emit(e.type === "agent_end" ? { ...e, willRetry: false } : e);
    if (e.type === "message_end") this.record(e.message as AgentMessage);
    if (e.type === "turn_end") for (const m of this.pendingCustom.splice(0)) this.appendCustom(m);
  }

  private record(message: AgentMessage): void {
    const m = message as { role: string; customType?: string; content?: unknown; display?: boolean; details?: unknown };
    if (m.role === "custom") this.sessionManager.appendCustomMessageEntry?.(m.customType ?? "", m.content, m.display ?? true, m.details);
    else if (PERSISTED.has(m.role)) this.sessionManager.appendMessage(m);
  }

  /** A custom message recorded outside a run: in the transcript and the session, announced. */
  private appendCustom(message: AgentMessage): void {
    this.agent.state.messages.push(message);
    this.record(message);
    this.emit({ type: "message_start", message });
    this.emit({ type: "message_end", message });
  }

  private emit(e: SessionEvent): void {
    for (const l of [...this.listeners]) l(e);
  }

  private emitQueueUpdate(): void {
    this.emit({ type: "queue_update", steering: [...this.steering], followUp: [...this.followUps] });
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Stop listening to the agent and drop every listener; the session is not used afterwards (its extensions' `pi` and `ctx` are stale). */
  dispose(): void {
    this.agent.abort();
    this.extensions?.dispose();
    this.unsubscribeAgent?.();
    this.unsubscribeAgent = undefined;
    this.listeners.clear();
  }

  /** The runner of the session's extensions (the reference's; `hasHandlers`, `emit`, ...). */
  /** Whether the session was made with extensions (createAgentSession's are). */
  get hasExtensions(): boolean {
    return this.extensions !== undefined;
  }

  get extensionRunner() {
    if (!this.extensions) throw new Error("AgentSession.extensionRunner: this session was created without extensions (createAgentSession binds them)");
    return this.extensions.runner;
  }

  /** Bind the extensions: mode, UI context and error listener, then the session's start event and `resources_discover`. */
  async bindExtensions(bindings: ExtensionBindings = {}): Promise<void> {
    if (!this.extensions) throw new Error("AgentSession.bindExtensions: this session was created without extensions (createAgentSession binds them)");
    await this.extensions.bind(bindings);
  }

  get state() {
    return this.agent.state;
  }
  get messages(): AgentMessage[] {
    return this.agent.state.messages;
  }
  get model(): Model | undefined {
    const m = this.agent.state.model;
    return m.provider === "unknown" && m.id === "unknown" ? undefined : m;
  }
  get thinkingLevel(): ThinkingLevel {
    return this.agent.state.thinkingLevel;
  }
  get isStreaming(): boolean {
    return this.agent.state.isStreaming;
  }
  get isIdle(): boolean {
    return !this.isStreaming;
  }
  get systemPrompt(): string {
    return this.agent.state.systemPrompt;
  }
  get sessionId(): string {
    return this.sessionManager.getSessionId();
  }
  get sessionFile(): string | undefined {
    return this.sessionManager.getSessionFile();
  }
  get sessionName(): string | undefined {
    return this.sessionManager.getSessionName?.();
  }
  get steeringMode() {
    return this.agent.steeringMode;
  }
  get followUpMode() {
    return this.agent.followUpMode;
  }
  get pendingMessageCount(): number {
    return this.steering.length + this.followUps.length;
  }
  get isCompacting(): boolean {
    return false;
  }
  get retryAttempt(): number {
    return 0;
  }

  /** Prompt the model; while a run streams, `streamingBehavior` queues the text instead. Resolves when the run is over. */
  async prompt(text: string, options: PromptOptions = {}): Promise<void> {
    if (this.isStreaming) {
      if (!options.streamingBehavior) throw new Error("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.");
      if (options.streamingBehavior === "followUp") await this.followUp(text, options.images);
      else await this.steer(text, options.images);
      return;
    }
    if (!this.model) throw new Error("No model selected for this session");
    let images = options.images;
    let after: AgentMessage[] = [];
    if (this.extensions) {
      const prepared = await this.extensions.beforeRun(text, images, options.source ?? "interactive");
      if (!prepared) return;
      ({ text, images, messages: after } = prepared);
    }
    const fitted = await this.fitImages(text, images);
    await this.run([this.userMessage(fitted.text, fitted.images), ...this.nextTurn.splice(0), ...after]);
  }

  /** One run of the agent from `messages`, then `agent_settled` to the extensions and the listeners. */
  private async run(messages: AgentMessage[]): Promise<void> {
    const transcript = this.agent.state.messages;
    if (this.baseSystemPrompt && (transcript[0] as { role?: string } | undefined)?.role !== "system") {
      // The loop declares the tools; the prompt is the session's own.
      this.agent.state.messages = [createInitialSystemMessage(this.baseSystemPrompt, []) as unknown as AgentMessage, ...transcript];
    }
    this.aborted = false;
    try {
      await this.agent.prompt(messages);
    } finally {
      await this.extensions?.afterRun(this.aborted);
    }
    this.emit({ type: "agent_settled", aborted: this.aborted });
  }

  /**
   * An extension's message (role "custom"): for the next run (`deliverAs: "nextTurn"`), queued
   * while a run streams (`followUp` or steering), the start of a run (`triggerTurn`), recorded at
   * the end of the current turn, or recorded now.
   */
  async sendCustomMessage(message: Rec, options: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" } = {}): Promise<void> {
    const custom = { role: "custom", customType: message.customType, content: message.content ?? [], display: message.display, details: message.details, timestamp: Date.now() } as unknown as AgentMessage;
    if (options.deliverAs === "nextTurn") this.nextTurn.push(custom);
    else if (this.isStreaming && options.triggerTurn !== false) {
      if (options.deliverAs === "followUp") this.agent.followUp(custom);
      else this.agent.steer(custom);
    } else if (options.triggerTurn) {
      if (!this.model) throw new Error("No model selected for this session");
      await this.run([custom]);
    } else if (this.isStreaming) this.pendingCustom.push(custom);
    else this.appendCustom(custom);
  }

  /** Name the session (a session_info entry), announced to the listeners and the extensions. */
  setSessionName(name: string): void {
    this.sessionManager.appendSessionInfo?.(name);
    const event = { type: "session_info_changed", name: this.sessionName };
    this.emit(event);
    void this.extensions?.runner.emit(event);
  }

  private userMessage(text: string, images?: ImageContent[]): AgentMessage {
    return { role: "user", content: [{ type: "text", text }, ...(images ?? [])], timestamp: Date.now() } as AgentMessage;
  }

  /**
   * A prompt's images as pion's session fits them (session/prompt-images.ts, loaded with the first
   * image): an inline type, scaled to the model's limits unless the settings' `images.autoResize`
   * is off, the notes after the text.
   */
  private async fitImages(text: string, images: ImageContent[] | undefined): Promise<{ text: string; images?: ImageContent[] }> {
    if (!images?.length) return { text, images };
    const { fitPromptImages } = await import("../../session/prompt-images.ts");
    const autoResize = (this.settingsManager as { getImageAutoResize?: () => boolean } | undefined)?.getImageAutoResize?.() !== false;
    const [fitted] = (await fitPromptImages([this.userMessage(text, images)], { model: this.model, autoResize })) as { content: { type: string; text?: string }[] }[];
    const blocks = fitted!.content;
    return { text: blocks.filter((b) => b.type === "text").map((b) => b.text).join("\n"), images: blocks.filter((b) => b.type === "image") as unknown as ImageContent[] };
  }

  /** Queue a message delivered after the current turn's tool calls. */
  async steer(text: string, images?: ImageContent[]): Promise<"queued"> {
    this.steering.push(text);
    const fitted = await this.fitImages(text, images);
    if (fitted.text !== text) this.queuedAs.set(fitted.text, text);
    this.agent.steer(this.userMessage(fitted.text, fitted.images));
    this.emitQueueUpdate();
    return "queued";
  }

  /** Queue a message delivered once the agent would otherwise stop. */
  async followUp(text: string, images?: ImageContent[]): Promise<"queued"> {
    this.followUps.push(text);
    const fitted = await this.fitImages(text, images);
    if (fitted.text !== text) this.queuedAs.set(fitted.text, text);
    this.agent.followUp(this.userMessage(fitted.text, fitted.images));
    this.emitQueueUpdate();
    return "queued";
  }

  async sendUserMessage(content: string | (Rec & { type: string })[], options: { deliverAs?: "steer" | "followUp" } = {}): Promise<void> {
    const { text, images } = splitUserContent(content);
    if (this.isStreaming) {
      if (options.deliverAs === "followUp") await this.followUp(text, images);
      else await this.steer(text, images);
      return;
    }
    await this.prompt(text, { images, source: "extension" });
  }

  clearQueue(): { steering: string[]; followUp: string[] } {
    const out = { steering: this.steering, followUp: this.followUps };
    this.steering = [];
    this.followUps = [];
    this.agent.clearAllQueues();
    this.emitQueueUpdate();
    return out;
  }
  getSteeringMessages(): readonly string[] {
    return [...this.steering];
  }
  getFollowUpMessages(): readonly string[] {
    return [...this.followUps];
  }

  async abort(): Promise<void> {
    if (this.isStreaming) this.aborted = true;
    this.agent.abort();
    await this.agent.waitForIdle();
  }
  waitForIdle(): Promise<void> {
    return this.agent.waitForIdle();
  }

  /** Use `model` from the next request on; the thinking level is clamped to what it offers. */
  async setModel(model: Model): Promise<void> {
    this.agent.state.model = model;
    this.sessionManager.appendModelChange(model.provider, model.id);
    this.setThinkingLevel(this.thinkingLevel);
  }

  /** Set the level, clamped to what the model offers. */
  setThinkingLevel(requested: ThinkingLevel): void {
    const level = this.model ? clampThinkingLevel(this.model, requested) : requested;
    if (this.agent.state.thinkingLevel === level) return;
    this.agent.state.thinkingLevel = level;
    this.sessionManager.appendThinkingLevelChange(level);
    this.emit({ type: "thinking_level_changed", level });
  }

  setSteeringMode(mode: QueueMode): void {
    this.agent.steeringMode = mode;
  }
  setFollowUpMode(mode: QueueMode): void {
    this.agent.followUpMode = mode;
  }

  getActiveToolNames(): string[] {
    return this.agent.state.tools.map((t) => t.name);
  }
  getCallableToolNames(): string[] {
    return this.getActiveToolNames();
  }
  getAllTools(): { name: string; description: string; parameters: unknown }[] {
    return [...this.toolsByName.values()].map((t) => ({ name: t.name, description: typeof t.description === "string" ? t.description : "", parameters: t.parameters }));
  }
  getToolDefinition(name: string): AgentTool | undefined {
    return this.toolsByName.get(name);
  }
  /** Offer these of the session's tools (unknown names are skipped); the model learns of the change on its next request. */
  setActiveToolsByName(names: string[]): void {
    this.agent.state.tools = [...new Set(names)].flatMap((n) => this.toolsByName.get(n) ?? []);
  }

  /**
   * The extensions' tools joined to the session's: each one registered since the last refresh
   * becomes active unless the `tools` allowlist leaves it out (one it names is active even if
   * not by default) or it is excluded; a tool registered again replaces the one of its name.
   */
  refreshTools(): void {
    if (!this.extensions) return;
    const active = this.getActiveToolNames();
    for (const tool of this.extensions.tools()) {
      this.toolsByName.set(tool.name, tool);
      if (this.registeredTools.has(tool.name)) continue;
      this.registeredTools.add(tool.name);
      if (this.excludedTools.has(tool.name)) continue;
      const named = this.allowedTools?.includes(tool.name);
      if (named || (this.allowedTools === undefined && tool.defaultActive !== false)) active.push(tool.name);
    }
    this.setActiveToolsByName(active);
  }

  getLastAssistantText(): string | undefined {
    for (let i = this.messages.length - 1; i >= 0; i--) {
      const m = this.messages[i] as { role: string; content?: unknown; stopReason?: string };
      if (m.role !== "assistant") continue;
      if (m.stopReason === "aborted" && !(m.content as unknown[]).length) continue;
      return textOf(m.content).trim() || undefined;
    }
    return undefined;
  }

  /** Messages, tool calls, tokens and cost over the session's record, and how full the context is. */
  getSessionStats() {
    const stats = sessionStats(this.sessionManager.getEntries() as Entry[], this.sessionManager.getBranch() as Entry[], this.model);
    return { sessionFile: this.sessionFile, sessionId: this.sessionId, ...stats };
  }

  /** Tokens in the context now against the model's window (undefined without a model). */
  getContextUsage() {
    return this.getSessionStats().contextUsage;
  }

  /** The working folder the session's tools run in. */
  getCwd(): string {
    return this.cwd;
  }
}

/** Reference methods that belong to pion's own session: each throws, naming itself. */
const NOT_IN_PROCESS = [
  "compact", "abortCompaction", "setAutoCompactionEnabled", "abortRetry", "setAutoRetryEnabled", "abortBranchSummary",
  "executeBash", "abortBash", "recordBashResult", "navigateTree", "fork", "exportToHtml", "exportToJsonl", "reload",
  "cycleModel", "cycleThinkingLevel", "setScopedModels", "refreshContext", "getUserMessagesForForking", "setCacheWarmingMode",
];
for (const name of NOT_IN_PROCESS) {
  Object.defineProperty(AgentSession.prototype, name, {
    value() {
      throw new Error(`AgentSession.${name} is not available in pion's in-process sessions`);
    },
    writable: true,
    configurable: true,
  });
}
