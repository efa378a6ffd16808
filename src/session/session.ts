import type { AgentEvent } from "../agent/events.ts";
import { runAgent } from "../agent/loop.ts";
import { noticeDeprecated } from "../providers/catalog/notices.ts";
import type { ModelRegistry } from "../providers/models.ts";
import { clampThinkingLevel, thinkingLevelsFor } from "../providers/thinking.ts";
import { addUsage, emptyUsage } from "../providers/event-stream.ts";
import type { AssistantMessage, ImageContent, ToolCall, Usage, LlmRequest, Model, StreamFn, TextContent, ThinkingLevel, UserMessage } from "../providers/types.ts";
import type { AgentMessage, BashExecutionMessage, Entry, SessionHeader } from "../store/entries.ts";
import type { SessionStore } from "../store/store.ts";
import type { HostToolFrame } from "../extensions/host-tools.ts";
import type { TodoPhase } from "../tools/todo.ts";
import type { ShellGuard } from "../tools/shell.ts";
import type { Tool, ToolResult } from "../tools/tool.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { PeriodicCollector } from "../util/memory.ts";
import { toLlmMessages } from "./context.ts";
import { SessionTree, type EntryInput } from "./tree.ts";
import { EventHub } from "./event-hub.ts";
import type { EncodedEvent } from "../util/json-bytes.ts";
import { HostShell } from "./host-shell.ts";
import { customMessage, freshRetry } from "./run-state.ts";
import { MessageQueues, type QueueMode } from "./queues.ts";
import { cancellableSleep, isTransientError, retryDelay } from "./retry.ts";
import { isContextOverflow, shouldCompact } from "./compaction.ts";
import { compact, type CompactionEvent, type CompactionHost, type CompactionReason, type CompactionResult } from "./compactor.ts";
import { contextTokens } from "./stats.ts";

/** Domain events: the loop's events plus the session's own. `entryId` marks a persisted entry. */
export type SessionEvent =
  | (AgentEvent & { entryId?: string; willRetry?: boolean })
  | { type: "agent_settled"; aborted: boolean; usage: Usage; cost: number }
  | { type: "prompt_result"; id: string; stopReason: string; aborted: boolean; errorMessage?: string; usage: Usage; cost: number }
  | { type: "queue_update"; steering: string[]; followUp: string[] }
  | { type: "session_info_changed"; name: string | undefined; entryId: string }
  | { type: "thinking_level_changed"; level: ThinkingLevel }
  | { type: "auto_retry_start"; attempt: number; maxAttempts: number; delayMs: number; errorMessage: string }
  | { type: "auto_retry_end"; success: boolean; attempt: number; finalError?: string }
  | { type: "todo_update"; phases: TodoPhase[] }
  | EncodedEvent
  | { type: "entry_appended"; entry: Entry }
  | CompactionEvent
  | ExtensionFrame
  | HostToolFrame;

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
  retry: { maxRetries: number; baseDelayMs: number };
  compaction: { reserveTokens: number; keepRecentTokens: number };
  idleTimeoutMs?: number;
  /** JSONL path for a new session, or undefined when nothing goes to disk. */
  fileFor: (header: SessionHeader) => string | undefined;
  /** The host shell's environment and output masking (the credential guard). */
  shellGuard?: ShellGuard;
}

export type Disposition = "started" | "queued" | "handled";

interface RunInfo {
  ids: string[];
  usage: Usage;
  systemPrompt?: string;
  assistant?: AssistantMessage;
  failure?: string;
}

/**
 * One live session: its entries and leaf, model and thinking level, queues, and the
 * run in progress. Every finished message is committed to the store before the event
 * announcing it is emitted.
 */
export class AgentSession {
  model: Model | undefined;
  thinkingLevel: ThinkingLevel;
  interruptMode: "immediate" | "wait";
  autoCompaction: boolean;
  autoRetry: boolean;
  readonly queues: MessageQueues;

  private readonly tree: SessionTree;
  private run: { controller: AbortController; done: Promise<void>; compactionOnly?: boolean } | undefined;
  /** True while a compaction summary is being written. */
  isCompacting = false;
  private retry = freshRetry();
  private overflow = { pending: false, tried: false };
  private readonly shell: HostShell;
  private lastMessageEntryId: string | undefined;
  /**
   * The run in progress (or the last one): commands waiting for its prompt_result, the usage
   * of its model calls, its last assistant message and, when pion itself failed, why.
   */
  private runInfo: RunInfo = { ids: [], usage: emptyUsage() };

  constructor(private opts: SessionOptions) {
    this.shell = new HostShell(opts.cwd, opts.shellGuard);
    this.tree = new SessionTree(opts.store, opts.cwd, opts.fileFor, () => ({
      ...(this.model ? { model: { provider: this.model.provider, modelId: this.model.id } } : {}),
      thinkingLevel: this.thinkingLevel,
    }));
    this.model = opts.model;
    this.thinkingLevel = clampThinkingLevel(opts.model, opts.thinkingLevel);
    this.interruptMode = opts.interruptMode;
    this.autoCompaction = opts.autoCompaction;
    this.autoRetry = opts.autoRetry;
    this.queues = new MessageQueues(() => void this.emit({ type: "queue_update", ...this.queues.snapshot() }));
    this.queues.steeringMode = opts.steeringMode;
    this.queues.followUpMode = opts.followUpMode;
    this.startNew();
  }

  readonly events = new EventHub<SessionEvent>();
  /** Streamed deltas are counted; every 3,000 a full garbage collection (see PeriodicCollector). */
  private readonly collector = new PeriodicCollector(3000);

  subscribe(fn: (e: SessionEvent) => void | Promise<void>, opts: { replay?: boolean } = {}): void {
    this.events.subscribe(fn, opts);
  }

  /** A record not tied to an entry (sub-protocol frames); see EventHub.publish. */
  publish(e: SessionEvent): void | Promise<void> {
    return this.events.publish(e);
  }

  /** The plan the host or the model keeps (spec 002 todo phases); not persisted. */
  todos: TodoPhase[] = [];

  setTodos(phases: TodoPhase[]): TodoPhase[] {
    this.todos = phases;
    void this.emit({ type: "todo_update", phases });
    return phases;
  }

  private emit(e: SessionEvent): void | Promise<void> {
    return this.events.emit(e);
  }

  get isStreaming(): boolean {
    return this.run !== undefined && !this.run.compactionOnly;
  }

  /** Whether anything (a run or a manual compaction) holds the session. */
  get isBusy(): boolean {
    return this.run !== undefined;
  }

  /** Wait for the run in progress (if any) to settle. */
  async idle(): Promise<void> {
    while (this.run) await this.run.done;
  }

  /** Start an empty session; its first entries record the model and thinking level. */
  startNew(parentSession?: string, id?: string): void {
    this.tree.startNew(parentSession, id);
    if (this.model) this.append({ type: "model_change", provider: this.model.provider, modelId: this.model.id });
    this.append({ type: "thinking_level_change", thinkingLevel: this.thinkingLevel });
  }

  openStored(sessionId: string): void {
    this.tree.openStored(sessionId);
  }

  branchInto(entries: Entry[], id?: string): void {
    this.tree.branchInto(entries, id);
  }

  /** Model and thinking level as last recorded on the active branch, when still available. */
  restoreSettings(): void {
    const cached = this.tree.cachedSettings();
    if (cached) {
      const m = cached.model ? this.opts.models.find(cached.model.provider, cached.model.modelId) : undefined;
      if (m) this.model = m;
      if (cached.thinkingLevel) this.thinkingLevel = clampThinkingLevel(this.model, cached.thinkingLevel as ThinkingLevel);
      return;
    }
    for (const e of this.branchPath()) {
      if (e.type === "model_change") {
        const m = this.opts.models.find(e.provider, e.modelId);
        if (m) this.model = m;
      } else if (e.type === "thinking_level_change") {
        this.thinkingLevel = clampThinkingLevel(this.model, e.thinkingLevel as ThinkingLevel);
      }
    }
  }

  release(): void {
    this.tree.release();
  }

  // ---- entries (the tree owns them; these are the session's view)

  get header(): SessionHeader {
    return this.tree.header;
  }

  get file(): string | undefined {
    return this.tree.file;
  }

  get name(): string | undefined {
    return this.tree.name;
  }

  get sessionId(): string {
    return this.tree.sessionId;
  }

  get leaf(): string | null {
    return this.tree.leaf;
  }

  get isStored(): boolean {
    return this.tree.isStored;
  }

  entries(): Entry[] {
    return this.tree.entries();
  }

  getEntry(id: string): Entry | undefined {
    return this.tree.get(id);
  }

  private append(partial: EntryInput): Entry {
    return this.tree.append(partial);
  }

  setLeaf(leafId: string | null): void {
    this.tree.setLeaf(leafId);
  }

  branchPath(): Entry[] {
    return this.tree.branchPath();
  }

  messages(): AgentMessage[] {
    return this.tree.messages();
  }

  lastAssistantText(): string | null {
    const msgs = this.messages();
    for (let i = msgs.length - 1; i >= 0; i--) {
      const m = msgs[i]!;
      if (m.role !== "assistant") continue;
      const text = m.content.filter((c): c is TextContent => c.type === "text").map((c) => c.text).join("");
      if (text) return text;
    }
    return null;
  }

  setName(name: string): string {
    const trimmed = name.trim();
    if (!trimmed) throw new PionError("Session name cannot be empty", "invalid_argument");
    const entry = this.append({ type: "session_info", name: trimmed });
    this.tree.name = trimmed;
    void this.emit({ type: "session_info_changed", name: trimmed, entryId: entry.id });
    return trimmed;
  }

  // ---- model and thinking

  setModel(model: Model): void {
    const hadThinking = this.thinkingLevel;
    this.model = model;
    noticeDeprecated(model, this.opts.models.models(model.provider));
    this.append({ type: "model_change", provider: model.provider, modelId: model.id });
    const clamped = clampThinkingLevel(model, hadThinking);
    if (clamped !== hadThinking) this.setThinkingLevel(clamped);
  }

  setThinkingLevel(level: ThinkingLevel): ThinkingLevel {
    const clamped = clampThinkingLevel(this.model, level);
    if (clamped === this.thinkingLevel) return clamped;
    this.thinkingLevel = clamped;
    this.append({ type: "thinking_level_change", thinkingLevel: clamped });
    void this.emit({ type: "thinking_level_changed", level: clamped });
    return clamped;
  }

  availableThinkingLevels(): ThinkingLevel[] {
    return thinkingLevelsFor(this.model);
  }

  availableModels(): Model[] {
    return this.opts.models.available();
  }

  // ---- prompting

  userMessage(text: string, images?: ImageContent[]): UserMessage {
    const content: (TextContent | ImageContent)[] = [{ type: "text", text }];
    if (images) content.push(...images);
    return { role: "user", content, timestamp: Date.now() };
  }

  /** Queue a steering or follow-up message; it is delivered by the current or next run. Checked as a prompt is. */
  enqueue(kind: "steer" | "followUp", raw: string, images?: ImageContent[], requestId?: string): Disposition {
    this.checkCanPrompt(images);
    const text = this.opts.expand ? this.opts.expand(raw) : raw;
    this.queues.add(kind === "steer" ? "steering" : "followUp", { text, message: this.userMessage(text, images), requestId });
    return "queued";
  }

  /** Empty the queues; commands whose messages were dropped get their prompt_result. */
  clearQueues(): { steering: string[]; followUp: string[] } {
    const out = this.queues.snapshot();
    for (const q of this.queues.clear()) {
      if (q.requestId) void this.emit({ type: "prompt_result", id: q.requestId, stopReason: "aborted", aborted: true, usage: emptyUsage(), cost: 0 });
    }
    return out;
  }

  private take(kind: "steering" | "followUp"): AgentMessage[] {
    return this.queues.take(kind).map((q) => {
      if (q.requestId) this.runInfo.ids.push(q.requestId);
      return q.message;
    });
  }

  /** Start a run, or queue the message when one is active (the caller chose how). */
  prompt(raw: string, images: ImageContent[] | undefined, whileStreaming?: "steer" | "followUp", requestId?: string): Disposition {
    const text = this.opts.expand ? this.opts.expand(raw) : raw;
    const message = this.userMessage(text, images);
    if (this.run) {
      if (!whileStreaming) {
        throw new PionError(
          "Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.",
          "busy",
        );
      }
      this.checkCanPrompt(images);
      this.queues.add(whileStreaming === "steer" ? "steering" : "followUp", { text, message, requestId });
      return "queued";
    }
    this.checkCanPrompt(images);
    this.startRun([message], requestId);
    return "started";
  }

  /** Manual compaction (the `compact` command). It holds the session like a run; abort stops it. */
  compactNow(customInstructions?: string): Promise<CompactionResult> {
    if (this.run) throw new PionError("Cannot compact while the agent is running; wait for it to settle or abort it first", "busy");
    this.checkCanPrompt();
    const controller = new AbortController();
    const run = { controller, done: Promise.resolve(), compactionOnly: true };
    this.run = run;
    const work = this.compactWith("manual", controller.signal, customInstructions);
    run.done = work.then(
      () => undefined,
      () => undefined,
    ).finally(() => {
      if (this.run === run) this.run = undefined;
    });
    return work;
  }

  private async compactWith(reason: CompactionReason, signal: AbortSignal, customInstructions?: string): Promise<CompactionResult> {
    const model = this.model!;
    const host: CompactionHost = {
      model,
      apiKey: this.opts.models.apiKey(model.provider),
      stream: this.opts.stream,
      branch: () => this.branchPath(),
      messages: () => this.messages(),
      commit: (entry) => void this.append(entry),
      emit: (e) => this.emit(e),
      settings: {
        keepRecentTokens: this.opts.compaction.keepRecentTokens,
        retry: { enabled: this.autoRetry, ...this.opts.retry },
      },
    };
    this.isCompacting = true;
    try {
      const result = await compact(host, reason, signal, customInstructions);
      addUsage(this.runInfo.usage, result.usage);
      return result;
    } finally {
      this.isCompacting = false;
    }
  }

  /** Auto-compaction at the threshold; failures are reported in compaction_end and the run goes on. */
  private async compactIfFull(signal: AbortSignal): Promise<boolean> {
    const model = this.model;
    if (!this.autoCompaction || !model || signal.aborted) return false;
    if (!shouldCompact(contextTokens(this.branchPath()), model.contextWindow, this.opts.compaction.reserveTokens)) return false;
    try {
      await this.compactWith("threshold", signal);
      return true;
    } catch {
      return false;
    }
  }

  private checkCanPrompt(images?: ImageContent[]): void {
    const model = this.model;
    if (!model) throw new PionError("No model selected. Configure one with --model or set_model.", "no_model");
    if (this.opts.models.apiKey(model.provider) === undefined) {
      throw new PionError(`No API key found for provider "${model.provider}".`, "no_api_key");
    }
    if (images?.length && !model.input.includes("image")) {
      throw new PionError(`Model ${model.provider}/${model.id} does not accept images.`, "invalid_argument");
    }
  }

  abort(): Promise<void> {
    this.run?.controller.abort();
    return this.idle();
  }

  private startRun(prompts: AgentMessage[], requestId?: string): void {
    this.runInfo = { ids: requestId ? [requestId] : [], usage: emptyUsage() };
    void prompts;
    const controller = new AbortController();
    const run = { controller, done: Promise.resolve() };
    this.run = run;
    run.done = this.execute(prompts, controller.signal).finally(() => {
      if (this.run === run) this.run = undefined;
    });
  }

  private async execute(prompts: AgentMessage[], signal: AbortSignal): Promise<void> {
    // Start on the next macrotask, so the command's response is written before agent_start.
    await new Promise<void>((r) => setImmediate(r));
    let failure: string | undefined;
    try {
      await this.opts.prepare?.();
      await this.compactIfFull(signal);
      let opening = await this.beforeAgentStart(prompts);
      for (;;) {
        this.retry.pending = false;
        this.overflow.pending = false;
        await runAgent(this.messages(), opening, this.loopDeps(signal), signal);
        if (this.overflow.pending) {
          // The context was too long: compact once, then run the turn again.
          this.overflow.tried = true;
          const failedId = this.lastMessageEntryId;
          try {
            await this.compactWith("overflow", signal);
          } catch {
            break;
          }
          if (failedId) {
            const edit = this.append({ type: "context_edit", targetId: failedId, replacement: null });
            await this.emit({ type: "entry_appended", entry: edit });
          }
          opening = [];
          continue;
        }
        if (!this.retry.pending) break;
        // A transient failure: wait, then run again from the same context (no new prompt).
        const attempt = ++this.retry.attempt;
        const delayMs = retryDelay(attempt, this.opts.retry.baseDelayMs);
        await this.emit({ type: "auto_retry_start", attempt, maxAttempts: this.opts.retry.maxRetries, delayMs, errorMessage: this.retry.lastError });
        // The failed attempt leaves the context (it stays in the session's history).
        if (this.retry.failedEntryId) {
          const edit = this.append({ type: "context_edit", targetId: this.retry.failedEntryId, replacement: null });
          await this.emit({ type: "entry_appended", entry: edit });
        }
        const cancel = new AbortController();
        this.retry.cancel = cancel;
        const onAbort = () => cancel.abort();
        signal.addEventListener("abort", onAbort, { once: true });
        const waited = await cancellableSleep(delayMs, cancel.signal);
        signal.removeEventListener("abort", onAbort);
        this.retry.cancel = undefined;
        if (!waited) {
          await this.emit({ type: "auto_retry_end", success: false, attempt, finalError: "Retry cancelled" });
          break;
        }
        opening = [];
      }
      if (this.retry.attempt > 0 && this.retry.exhausted) {
        await this.emit({ type: "auto_retry_end", success: false, attempt: this.retry.attempt, finalError: this.retry.lastError });
      }
    } catch (err) {
      // Not the model's failure but pion's (the session store cannot be written, a hook threw):
      // the run stops, and its prompt_result says why instead of a plain stop.
      failure = errorMessage(err);
      this.runInfo.failure = failure;
      log("session", "the run stopped on an error", { error: failure });
    } finally {
      this.retry = freshRetry();
      this.overflow = { pending: false, tried: false };
      const { ids, usage } = this.runInfo;
      await this.emit({ type: "agent_settled", aborted: signal.aborted, usage, cost: usage.cost.total });
      const last = this.runInfo.assistant;
      for (const id of ids) {
        const r: SessionEvent = {
          type: "prompt_result",
          id,
          stopReason: signal.aborted ? "aborted" : failure !== undefined ? "error" : (last?.stopReason ?? "stop"),
          aborted: signal.aborted,
          usage,
          cost: usage.cost.total,
        };
        const why = failure ?? last?.errorMessage;
        if (why && !signal.aborted) r.errorMessage = why;
        await this.emit(r);
      }
    }
  }

  /**
   * Run a shell command for the host (the `bash` command). Its result is recorded as a
   * bashExecution message, which reaches the model with the next prompt. While a run is
   * active the entry waits until it settles, so it never lands between a tool call and its result.
   */
  async runBash(
    command: string,
    excludeFromContext: boolean,
    onBytes: (chunk: Uint8Array, final: boolean) => void | Promise<void>,
  ): Promise<BashExecutionMessage> {
    const message = await this.shell.run(command, excludeFromContext, onBytes);
    const record = () => void this.append({ type: "message", message });
    if (this.run) void this.run.done.then(record);
    else record();
    return message;
  }

  abortBash(): void {
    this.shell.abort();
  }

  /** Extensions may replace this run's system prompt and add messages before the prompt. */
  private async beforeAgentStart(prompts: AgentMessage[]): Promise<AgentMessage[]> {
    const ext = this.opts.extensions;
    const first = prompts[0];
    if (!ext || !first || first.role !== "user") return prompts;
    const text = typeof first.content === "string" ? first.content : first.content.map((c) => (c.type === "text" ? c.text : "")).join("");
    const base = this.opts.systemPrompt([...this.opts.tools().values()]);
    const out = await ext.onBeforeAgentStart(text, base);
    if (out.systemPrompt !== undefined) this.runInfo.systemPrompt = out.systemPrompt;
    const extra: AgentMessage[] = (out.messages ?? []).map((m) => customMessage(m));
    return [...extra, ...prompts];
  }

  /** A message from an extension: queued while a run is active, started or just recorded otherwise. */
  sendCustomMessage(
    msg: { customType: string; content: string | unknown[]; display?: boolean; details?: unknown },
    opts: { triggerTurn?: boolean; deliverAs?: "steer" | "followUp" | "nextTurn" } = {},
  ): void {
    const message = customMessage(msg);
    const text = typeof msg.content === "string" ? msg.content : `[${msg.customType}]`;
    if (this.run) {
      this.queues.add(opts.deliverAs === "steer" ? "steering" : "followUp", { text, message });
    } else if (opts.triggerTurn && this.model) {
      this.startRun([message]);
    } else {
      void this.emit({ type: "message_start", message });
      const entry = this.append({ type: "message", message });
      void this.emit({ type: "message_end", message, entryId: entry.id });
    }
  }

  /** An extension's own entry (not part of the context). */
  appendCustom(customType: string, data?: unknown): void {
    this.append({ type: "custom", customType, data });
  }

  setLabel(targetId: string, label: string | undefined): void {
    if (!this.tree.has(targetId)) throw new PionError(`Entry not found: ${targetId}`, "not_found");
    this.append({ type: "label", targetId, label });
  }

  /** Cancel a pending retry delay; the run ends with the last error. */
  abortRetry(): void {
    this.retry.cancel?.abort();
  }

  private loopDeps(signal: AbortSignal) {
    const ext = this.opts.extensions;
    return {
      beforeToolCall: ext
        ? (call: ToolCall, input: Record<string, unknown>) => ext.onToolCall({ toolCallId: call.id, toolName: call.name, input })
        : undefined,
      afterToolResult: ext
        ? async (call: ToolCall, input: Record<string, unknown>, result: ToolResult) => {
            const r = await ext.onToolResult(
              { toolCallId: call.id, toolName: call.name, input },
              { content: result.content, details: result.details, isError: result.isError === true },
            );
            return { content: r.content as ToolResult["content"], details: r.details, isError: r.isError };
          }
        : undefined,
      afterTurn: async () => ((await this.compactIfFull(signal)) ? this.messages() : undefined),
      stream: this.opts.stream,
      tools: this.opts.tools,
      emit: (e: AgentEvent) => this.onAgentEvent(e),
      buildRequest: (context: readonly AgentMessage[]) => this.buildRequest(context),
      nextSteering: () => this.take("steering"),
      nextFollowUp: () => this.take("followUp"),
      interruptMode: () => this.interruptMode,
      hasPendingSteering: () => this.queues.steering.length > 0,
      hasPendingFollowUp: () => this.queues.followUp.length > 0,
      cwd: this.opts.cwd,
    };
  }

  private onAgentEvent(e: AgentEvent): void | Promise<void> {
    if (e.type === "message_update") this.collector.tick();
    if (e.type === "message_end") {
      // persist before announce
      const entry = this.append({ type: "message", message: e.message });
      this.lastMessageEntryId = entry.id;
      if (e.message.role === "assistant") {
        addUsage(this.runInfo.usage, e.message.usage);
        this.runInfo.assistant = e.message;
      }
      const p = this.emit({ ...e, entryId: entry.id });
      if (e.message.role === "assistant" && this.retry.attempt > 0 && e.message.stopReason !== "error") {
        // the retried call worked: say so before turn_end, as the reference does
        return Promise.resolve(p).then(() => this.emit({ type: "auto_retry_end", success: true, attempt: this.retry.attempt }));
      }
      return p;
    }
    if (e.type === "agent_end") {
      const last = e.messages.findLast((m) => m.role === "assistant");
      const failed = last?.role === "assistant" && last.stopReason === "error" ? last : undefined;
      const transient = failed !== undefined && this.autoRetry && isTransientError(failed.errorMessage);
      const lastMsg = last?.role === "assistant" ? last : undefined;
      const overflowed =
        lastMsg !== undefined &&
        this.autoCompaction &&
        !this.overflow.tried &&
        (isContextOverflow(lastMsg) || lastMsg.stopReason === "length");
      this.overflow.pending = overflowed;
      const retryable = transient && !overflowed && this.retry.attempt < this.opts.retry.maxRetries;
      const willRetry = retryable || overflowed;
      this.retry.pending = retryable;
      this.retry.exhausted = transient && !retryable && !overflowed;
      if (failed) {
        this.retry.lastError = failed.errorMessage ?? "unknown error";
        this.retry.failedEntryId = this.lastMessageEntryId;
      }
      return this.emit({ ...e, willRetry });
    }
    return this.emit(e);
  }

  private async buildRequest(context: readonly AgentMessage[]): Promise<LlmRequest> {
    const model = this.model!;
    const tools = [...this.opts.tools().values()];
    const ext = this.opts.extensions;
    const messages = ext ? ((await ext.onContext([...context])) as AgentMessage[]) : context;
    return {
      model,
      apiKey: this.opts.models.apiKey(model.provider),
      systemPrompt: this.runInfo.systemPrompt ?? this.opts.systemPrompt(tools),
      messages: toLlmMessages(messages),
      tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      thinkingLevel: this.thinkingLevel,
      sessionId: this.sessionId,
      idleTimeoutMs: this.opts.idleTimeoutMs,
    };
  }

  messageCount(): number {
    return this.tree.messageCount();
  }

  /** The outcome of the latest run: its own last reply (never an earlier run's) and pion's failure, if any. */
  lastRun(): { assistant?: AssistantMessage; failure?: string } {
    return { assistant: this.runInfo.assistant, failure: this.runInfo.failure };
  }
}
