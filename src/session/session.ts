import { isStorageError } from "../store/storage-error.ts";
import type { AgentEvent } from "../agent/events.ts";
import { runAgent } from "../agent/loop.ts";
import { noticeDeprecated } from "../providers/catalog/notices.ts";
import { clampThinkingLevel, thinkingLevelsFor } from "../providers/thinking.ts";
import { addUsage, emptyUsage } from "../providers/event-stream.ts";
import type { AssistantMessage, ImageContent, ToolCall, LlmRequest, Model, StreamFn, ThinkingLevel, UserMessage } from "../providers/types.ts";
import type { AgentMessage, BashExecutionMessage, Entry } from "../store/entries.ts";
import type { TodoPhase } from "../tools/todo.ts";
import type { ShellExec } from "../tools/shell.ts";
import type { ToolResult } from "../tools/tool.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { PeriodicCollector } from "../util/memory.ts";
import { toLlmMessages } from "./context.ts";
import { SessionEntries } from "./session-entries.ts";
import type { EntryInput, PlannedSession } from "./tree.ts";
import { EventHub } from "./event-hub.ts";
import { HostShell } from "./host-shell.ts";
import { customMessage, RunState, type RunOutcome } from "./run-state.ts";
import { MessageQueues } from "./queues.ts";
import type { CompactionResult } from "./compactor.ts";
import { mergeLimits, type RunLimits } from "./limits.ts";
import { Recovery } from "./recovery.ts";
import { Routing } from "./routing.ts";
import type { NavigateOptions, NavigateResult } from "./tree-navigation.ts";
import type { Disposition, SessionEvent, SessionOptions } from "./session-types.ts";

/**
 * One live session: its entries and leaf, model and thinking level, queues, and the
 * run in progress. Every finished message is committed to the store before the event
 * announcing it is emitted.
 */
export class AgentSession extends SessionEntries {
  model: Model | undefined;
  thinkingLevel: ThinkingLevel;
  interruptMode: "immediate" | "wait";
  autoCompaction: boolean;
  autoRetry: boolean;
  readonly queues: MessageQueues;

  private run: { controller: AbortController; done: Promise<void>; compactionOnly?: boolean } | undefined;
  private readonly recovery: Recovery;
  private readonly shell: HostShell;
  private lastMessageEntryId: string | undefined;
  /** The run in progress (or the last one): see RunState. */
  private runInfo = new RunState([], {});

  constructor(private opts: SessionOptions) {
    super(opts.store, opts.cwd, opts.fileFor);
    this.shell = new HostShell(opts.cwd, opts.shellGuard, opts.shell);
    this.model = opts.model;
    this.thinkingLevel = clampThinkingLevel(opts.model, opts.thinkingLevel);
    this.interruptMode = opts.interruptMode;
    this.autoCompaction = opts.autoCompaction;
    this.autoRetry = opts.autoRetry;
    this.queues = new MessageQueues(() => void this.emit({ type: "queue_update", ...this.queues.snapshot() }));
    this.queues.steeringMode = opts.steeringMode;
    this.queues.followUpMode = opts.followUpMode;
    this.recovery = new Recovery({
      model: () => this.model,
      autoRetry: () => this.autoRetry,
      autoCompaction: () => this.autoCompaction,
      requestAuth: (provider, signal) => this.opts.models.requestAuth(provider, signal),
      stream: this.countedStream,
      branch: () => this.branchPath(),
      messages: () => this.messages(),
      append: (entry) => this.append(entry),
      emit: (e) => this.emit(e),
      run: () => this.runInfo,
      lastAssistant: () => this.runInfo.assistant,
      lastMessageEntryId: () => this.lastMessageEntryId,
      settings: { compaction: opts.compaction, retry: opts.retry },
    });
    this.routing = opts.router && new Routing({ router: opts.router, models: opts.models, branch: () => this.branchPath(), record: (e) => this.record(e) });
    this.send = this.routing ? this.routing.stream(opts.stream) : opts.stream;
    this.startNew();
  }

  /** Virtual models' routing (when a router is given), and the stream every request goes through. */
  private readonly routing: Routing | undefined;
  private readonly send: StreamFn;

  /** True while a compaction summary is being written. */
  get isCompacting(): boolean {
    return this.recovery.isCompacting;
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

  /** The running prompt's (or compaction's) abort signal; undefined when idle. */
  get runSignal(): AbortSignal | undefined {
    return this.run?.controller.signal;
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

  protected summarySettings() {
    return { ...(this.model ? { model: { provider: this.model.provider, modelId: this.model.id } } : {}), thinkingLevel: this.thinkingLevel };
  }

  /** Start an empty session; its first entries record the model and thinking level. */
  startNew(parentSession?: string, id?: string | PlannedSession): void {
    this.tree.startNew(parentSession, id);
    if (this.model) this.append({ type: "model_change", provider: this.model.provider, modelId: this.model.id });
    this.append({ type: "thinking_level_change", thinkingLevel: this.thinkingLevel });
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
    if (clampThinkingLevel(model, hadThinking) !== hadThinking) this.setThinkingLevel(hadThinking);
  }

  /** The model's nearest offered level; thinking_level_changed also reports a request it cannot take (`requested`). */
  setThinkingLevel(level: ThinkingLevel): ThinkingLevel {
    const clamped = clampThinkingLevel(this.model, level);
    if (clamped !== this.thinkingLevel) {
      this.thinkingLevel = clamped;
      this.append({ type: "thinking_level_change", thinkingLevel: clamped });
    } else if (clamped === level) return clamped;
    void this.emit({ type: "thinking_level_changed", level: clamped, ...(clamped !== level ? { requested: level } : {}) });
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
    return { role: "user", content: [{ type: "text", text }, ...(images ?? [])], timestamp: Date.now() };
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

  /**
   * Drop the message the command `requestId` queued, which then gets its (aborted) prompt_result.
   * False when it is not queued (it runs, ran, or never was): the caller aborts the run instead.
   */
  dropQueued(requestId: string): boolean {
    if (!this.queues.remove(requestId)) return false;
    void this.emit({ type: "prompt_result", id: requestId, stopReason: "aborted", aborted: true, usage: emptyUsage(), cost: 0 });
    return true;
  }

  /** Queued messages delivered now; their images are fitted to the model they now go to. */
  private take(kind: "steering" | "followUp"): Promise<AgentMessage[]> {
    const taken = this.queues.take(kind);
    for (const q of taken) if (q.requestId) this.runInfo.ids.push(q.requestId);
    return this.fitImages(taken.map((q) => q.message));
  }

  /** User messages' images fitted to the current model (prompt-images.ts, loaded with the first message that has one). */
  private async fitImages(messages: AgentMessage[]): Promise<AgentMessage[]> {
    if (!messages.some((m) => m.role === "user" && typeof m.content !== "string" && m.content.some((c) => c.type === "image"))) return messages;
    return (await import("./prompt-images.ts")).fitPromptImages(messages, { model: this.model, autoResize: this.opts.autoResizeImages?.() !== false });
  }

  /**
   * Start a run, or queue the message when one is active (the caller chose how). `limits`
   * apply to the run this prompt starts; a queued message joins the active run and its limits.
   */
  prompt(
    raw: string,
    images: ImageContent[] | undefined,
    whileStreaming?: "steer" | "followUp",
    requestId?: string,
    limits?: RunLimits,
  ): Disposition {
    const text = this.opts.expand ? this.opts.expand(raw) : raw;
    const message = this.userMessage(text, images);
    if (this.run) {
      if (!whileStreaming) throw new PionError("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message.", "busy");
      this.checkCanPrompt(images);
      this.queues.add(whileStreaming === "steer" ? "steering" : "followUp", { text, message, requestId });
      return "queued";
    }
    this.checkCanPrompt(images);
    this.startRun([message], requestId, limits);
    return "started";
  }

  /** Manual compaction (the `compact` command). It holds the session like a run; abort stops it. */
  compactNow(customInstructions?: string): Promise<CompactionResult> {
    if (this.run) throw new PionError("Cannot compact while the agent is running; wait for it to settle or abort it first", "busy");
    this.checkCanPrompt();
    return this.hold((signal) => this.recovery.compact("manual", signal, customInstructions));
  }

  /** Hold the session for `work` as a run does (abort stops it), without being a prompt run; released as `work` settles. */
  private hold<T>(work: (signal: AbortSignal) => Promise<T>): Promise<T> {
    const controller = new AbortController();
    const run = { controller, done: Promise.resolve(), compactionOnly: true };
    this.run = run;
    const out = work(controller.signal).finally(() => {
      if (this.run === run) this.run = undefined;
    });
    run.done = out.then(() => undefined, () => undefined);
    return out;
  }

  /** Move to another entry of the tree, summarizing the branch left when asked (tree-navigation.ts). */
  async navigateTree(targetId: string, options: NavigateOptions = {}): Promise<NavigateResult> {
    const state = this.isStreaming ? "streaming" : this.isBusy || this.isCompacting ? "busy" : "idle";
    const { navigateTree } = await import("./tree-navigation.ts"); // loaded with the first navigation
    return navigateTree(targetId, options, {
      state,
      model: this.model,
      entries: () => this.entries(),
      leaf: () => this.leaf,
      hold: (work) => this.hold(work),
      append: (e) => this.append(e),
      setLeaf: (id) => this.setLeaf(id),
      extensions: this.opts.extensions,
      summaries: { auth: (p, signal) => this.opts.models.requestAuth(p, signal), stream: this.send, retry: { enabled: this.autoRetry, ...this.opts.retry } },
      emit: (e) => void this.emit(e),
    });
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

  private startRun(prompts: AgentMessage[], requestId?: string, limits?: RunLimits): void {
    this.runInfo = new RunState(requestId ? [requestId] : [], mergeLimits(this.opts.limits?.() ?? {}, limits));
    const controller = new AbortController();
    const run = { controller, done: Promise.resolve() };
    this.run = run;
    run.done = this.execute(prompts, controller.signal).finally(() => {
      if (this.run === run) this.run = undefined;
    });
  }

  /** Every model request of the session goes through here, so a run's calls are counted. */
  private readonly countedStream: StreamFn = (req, signal) => {
    this.runInfo.calls++;
    return this.send(req, signal);
  };

  private async execute(prompts: AgentMessage[], signal: AbortSignal): Promise<void> {
    // Start on the next macrotask, so the command's response is written before agent_start.
    await new Promise<void>((r) => setImmediate(r));
    const run = this.runInfo;
    let failure: string | undefined;
    try {
      await this.opts.prepare?.();
      await this.recovery.compactIfFull(signal);
      // Images are fitted after before_agent_start, so a model an extension picks there sets the limits.
      let opening = await this.fitImages(await this.beforeAgentStart(prompts));
      for (;;) {
        run.retry.pending = false;
        run.overflow.pending = undefined;
        await runAgent(this.messages(), opening, this.loopDeps(signal), signal);
        if (signal.aborted) break;
        if (run.overflow.pending) {
          const recovered = await this.recovery.recoverFromOverflow(signal);
          failure = recovered.failure;
          if (!recovered.retry) break;
          opening = [];
          run.resend = run.assistant;
          continue;
        }
        if (!run.retry.pending || run.atLimit()) break;
        if (!(await this.recovery.waitToRetry(signal))) break;
        opening = [];
        run.resend = run.assistant;
      }
      if (run.retry.attempt > 0 && run.retry.exhausted) {
        await this.emit({ type: "auto_retry_end", success: false, attempt: run.retry.attempt, finalError: run.retry.lastError });
      }
    } catch (err) {
      // Not the model's failure but pion's (the session store cannot be written, a hook threw):
      // the run stops, and its prompt_result says why instead of a plain stop.
      failure = errorMessage(err);
      this.runInfo.failure = failure;
      // A disk failure is the run's answer already (prompt_result, the exit line): not said twice.
      if (!isStorageError(err)) log("session", "the run stopped on an error", { error: failure });
    } finally {
      if (failure !== undefined) run.failure = failure;
      const outcome = run.outcome(signal.aborted, failure, run.assistant);
      run.result = outcome;
      const { ids, usage } = run;
      const settled: SessionEvent = { type: "agent_settled", aborted: signal.aborted, usage, cost: usage.cost.total };
      if (outcome.stopReason === "limit") Object.assign(settled, { stopReason: "limit", errorMessage: outcome.errorMessage });
      await this.emit(settled);
      for (const id of ids) {
        const r: SessionEvent = { type: "prompt_result", id, stopReason: outcome.stopReason, aborted: outcome.aborted, usage, cost: usage.cost.total };
        if (outcome.errorMessage !== undefined) r.errorMessage = outcome.errorMessage;
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
    exec?: ShellExec,
  ): Promise<BashExecutionMessage> {
    return this.recordBash(await this.shell.run(command, excludeFromContext, onBytes, exec));
  }

  /** A host command's outcome as the session's bashExecution message (after a run in progress). */
  recordBash(message: BashExecutionMessage): BashExecutionMessage {
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

  /**
   * Commit an entry of pion's own bookkeeping (a permission decision), then announce it.
   * `granted`: allow rules the permission gate granted, recorded by this entry (see grantedRules).
   */
  async record(partial: EntryInput, granted?: readonly string[]): Promise<Entry> {
    const entry = this.append(partial, granted);
    await this.emit({ type: "entry_appended", entry });
    return entry;
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
    this.runInfo.retry.cancel?.abort();
  }

  private loopDeps(signal: AbortSignal) {
    const ext = this.opts.extensions;
    return {
      gate: this.opts.gate,
      beforeToolCall: ext
        ? (call: ToolCall, input: Record<string, unknown>) => ext.onToolCall({ toolCallId: call.id, toolName: call.name, input })
        : undefined,
      afterToolResult: ext
        ? async (call: ToolCall, input: Record<string, unknown>, result: ToolResult) => {
            const r = await ext.onToolResult(
              { toolCallId: call.id, toolName: call.name, input },
              {
                content: result.content,
                details: result.details,
                isError: result.isError === true,
                ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
              },
            );
            return {
              content: r.content as ToolResult["content"],
              details: r.details,
              isError: r.isError,
              ...(r.structuredContent !== undefined ? { structuredContent: r.structuredContent } : {}),
            };
          }
        : undefined,
      afterTurn: async () => {
        // A limit stops the run before the next model call, and before compacting for it.
        if (this.runInfo.atLimit()) return { stop: true };
        if (!(await this.recovery.compactIfFull(signal))) return undefined;
        return this.runInfo.atLimit() ? { stop: true } : { context: this.messages() };
      },
      stream: this.countedStream,
      tools: this.opts.tools,
      emit: (e: AgentEvent) => this.onAgentEvent(e),
      buildRequest: (context: readonly AgentMessage[]) => this.buildRequest(context, signal),
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
    // A new user message, or a reply that neither failed nor was cut off, earns overflow recovery
    // another compact-and-retry (as the reference resets its attempt).
    if (e.type === "message_start" && e.message.role === "user") this.runInfo.overflow.tried = false;
    if (e.type === "message_end" && e.message.role === "assistant" && e.message.stopReason !== "error" && e.message.stopReason !== "length") this.runInfo.overflow.tried = false;
    if (e.type === "message_end") {
      // persist before announce
      const entry = this.append({ type: "message", message: e.message });
      this.lastMessageEntryId = entry.id;
      if (e.message.role === "assistant") {
        addUsage(this.runInfo.usage, e.message.usage);
        this.runInfo.assistant = e.message;
      }
      const p = this.emit({ ...e, entryId: entry.id });
      const attempt = this.runInfo.retry.attempt;
      if (e.message.role === "assistant" && attempt > 0 && e.message.stopReason !== "error") {
        // the retried call worked: say so before turn_end, as the reference does; the run's later
        // calls start from no retries again (once, not after every message of a tool loop)
        this.runInfo.retry.attempt = 0;
        return Promise.resolve(p).then(() => this.emit({ type: "auto_retry_end", success: true, attempt }));
      }
      return p;
    }
    if (e.type === "agent_end") {
      const found = e.messages.findLast((m) => m.role === "assistant");
      const last = found?.role === "assistant" ? found : undefined;
      const willRetry = this.runInfo.decide(last, this.lastMessageEntryId, {
        autoRetry: this.autoRetry,
        autoCompaction: this.autoCompaction,
        maxRetries: this.opts.retry.maxRetries,
        // the physical model that wrote the reply (a virtual selection routes each request)
        model: last ? this.opts.models.find(last.provider, last.model) : undefined,
        canCompact: () => this.recovery.canCompactTruncated(),
      });
      return this.emit({ ...e, willRetry });
    }
    return this.emit(e);
  }

  private async buildRequest(context: readonly AgentMessage[], signal: AbortSignal): Promise<LlmRequest> {
    const model = this.model!;
    const tools = [...this.opts.tools().values()];
    const ext = this.opts.extensions;
    const messages = ext ? ((await ext.onContext([...context])) as AgentMessage[]) : context;
    const failed = this.runInfo.resend;
    this.runInfo.resend = undefined;
    const auth = await this.opts.models.requestAuth(model.provider, signal);
    const req: LlmRequest = {
      model,
      apiKey: auth.apiKey,
      ...(auth.headers ? { authHeaders: auth.headers } : {}),
      systemPrompt: this.runInfo.systemPrompt ?? this.opts.systemPrompt(tools),
      messages: toLlmMessages(messages),
      tools: tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
      thinkingLevel: this.thinkingLevel,
      sessionId: this.sessionId,
      idleTimeoutMs: this.opts.idleTimeoutMs?.(),
      thinkingBudgets: this.opts.thinkingBudgets?.(),
    };
    return this.routing ? this.routing.forLoop(req, messages, failed, signal) : req;
  }

  messageCount(): number {
    return this.tree.messageCount();
  }

  /** The system prompt and tools the next request would carry (the session page shows them). */
  modelContext(): { systemPrompt: string; tools: { name: string; description: string }[] } {
    const tools = [...this.opts.tools().values()];
    return { systemPrompt: this.runInfo.systemPrompt ?? this.opts.systemPrompt(tools), tools: tools.map((t) => ({ name: t.name, description: t.description })) };
  }

  /** The outcome of the latest run: its own last reply (never an earlier run's), pion's failure if any, and how it ended. */
  lastRun(): { assistant?: AssistantMessage; failure?: string; outcome?: RunOutcome } {
    return { assistant: this.runInfo.assistant, failure: this.runInfo.failure, outcome: this.runInfo.result };
  }
}
