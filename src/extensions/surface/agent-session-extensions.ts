/**
 * Extensions bound to an in-process AgentSession (agent-session-class.ts), as the reference's
 * session binds them. The resource loader's extensions run on a surface ExtensionRunner
 * (coding-runner.ts, over pion's runner) whose `pi` actions and `ctx` reach this session
 * (`bindCore`); their tools join the session's, each executed with the runner's tool context;
 * `tool_call` / `tool_result` wrap each call and `context` rewrites each request's messages
 * (the agent's hooks); the agent's events reach the handlers before the session's listeners;
 * `input` and `before_agent_start` run before a prompt (a system prompt a handler returns is the
 * prompt of that run's requests only, as in the reference; its messages go after the prompt).
 * `bind` (the session's `bindExtensions`) sets the mode, UI context and error listener, fires
 * the session's start event, then `resources_discover`, whose paths extend the loader's resources.
 */
import type { ImageContent, Model, ThinkingLevel } from "../../providers/types.ts";
import type { AgentMessage } from "../../store/entries.ts";
import { getCurrentSystemMessage } from "../../session/system-messages.ts";
import type { Agent } from "./agent.ts";
import type { AgentTool } from "./agent-core.ts";
import { ExtensionRunner } from "./coding-runner.ts";

type Rec = Record<string, unknown>;
type RunnerError = { extensionPath: string; event: string; error: string };

/** The reference's `ExtensionBindings` (bindExtensions' argument). */
export interface ExtensionBindings {
  uiContext?: unknown;
  mode?: string;
  commandContextActions?: unknown;
  abortHandler?: () => void;
  shutdownHandler?: () => void;
  onError?: (error: RunnerError) => void;
}

/** What the binding reaches of the session it is bound to. */
export interface BoundSession {
  readonly agent: Agent;
  readonly sessionManager: {
    appendCustomEntry?(customType: string, data?: unknown): string;
    appendLabelChange?(targetId: string, label: string | undefined): string;
    getEntry?(id: string): unknown;
    getSessionName?(): string | undefined;
  };
  readonly settingsManager: unknown;
  readonly resourceLoader: unknown;
  readonly model: Model | undefined;
  readonly thinkingLevel: ThinkingLevel;
  readonly isIdle: boolean;
  readonly pendingMessageCount: number;
  readonly systemPrompt: string;
  sendCustomMessage(message: Rec, options?: Rec): Promise<void>;
  sendUserMessage(content: string | (Rec & { type: string })[], options?: { deliverAs?: "steer" | "followUp" }): Promise<void>;
  setSessionName(name: string): void;
  getActiveToolNames(): string[];
  getAllTools(): unknown[];
  setActiveToolsByName(names: string[]): void;
  refreshTools(): void;
  setModel(model: Model): Promise<void>;
  setThinkingLevel(level: ThinkingLevel): void;
  abort(): Promise<void>;
  getContextUsage(): unknown;
}

/** Where the binding's extensions come from and what their runner is given. */
export interface ExtensionsSource {
  result: { extensions: Rec[]; runtime: Rec };
  cwd: string;
  sessionManager: object;
  modelRegistry: object;
  /** Fired by `bind` (default: a startup `session_start`). */
  startEvent?: Rec & { type: string };
}

const call = (target: unknown, name: string, ...args: unknown[]): unknown => {
  const f = (target as Rec | undefined)?.[name];
  return typeof f === "function" ? (f as (...a: unknown[]) => unknown).apply(target, args) : undefined;
};

const report = (runner: ExtensionRunner, event: string) => (err: unknown) =>
  runner.emitError({ extensionPath: "<runtime>", event, error: err instanceof Error ? err.message : String(err) });

export class SessionExtensions {
  readonly runner: ExtensionRunner;
  readonly #session: BoundSession;
  /** The session's own event stream (its listeners). */
  readonly #emit: (event: Rec & { type: string }) => void;
  readonly #startEvent: Rec & { type: string };
  #handlers: ExtensionBindings = {};
  #unsubscribeErrors: (() => void) | undefined;
  #turnIndex = 0;
  /** This run's system prompt from a `before_agent_start` handler: the head of its requests. */
  #forced: string | undefined;

  constructor(session: BoundSession, emit: (event: Rec & { type: string }) => void, o: ExtensionsSource) {
    this.#session = session;
    this.#emit = emit;
    this.#startEvent = o.startEvent ?? { type: "session_start", reason: "startup" };
    this.runner = new ExtensionRunner(o.result.extensions, o.result.runtime, o.cwd, o.sessionManager, o.modelRegistry);
    this.#bindCore();
    this.#installAgentHooks(session.agent);
  }

  #bindCore(): void {
    const s = this.#session;
    const runner = this.runner;
    const loader = s.resourceLoader;
    const getCommands = () => [
      ...runner.getRegisteredCommands().map((c) => ({ name: c.invocationName, description: c.description, source: "extension", sourceInfo: c.sourceInfo })),
      ...(((call(loader, "getPrompts") as { prompts?: Rec[] } | undefined)?.prompts ?? []).map((p) => ({ name: p.name, description: p.description, source: "prompt", sourceInfo: p.sourceInfo }))),
      ...(((call(loader, "getSkills") as { skills?: Rec[] } | undefined)?.skills ?? []).map((k) => ({ name: `skill:${String(k.name)}`, description: k.description, source: "skill", sourceInfo: k.sourceInfo }))),
    ];
    runner.bindCore(
      {
        sendMessage: (message: Rec, options?: Rec) => void s.sendCustomMessage(message, options).catch(report(runner, "send_message")),
        sendUserMessage: (content: string, options?: { deliverAs?: "steer" | "followUp" }) => void s.sendUserMessage(content, options).catch(report(runner, "send_user_message")),
        appendEntry: (customType: string, data?: unknown) => {
          const id = s.sessionManager.appendCustomEntry?.(customType, data);
          const entry = id === undefined ? undefined : s.sessionManager.getEntry?.(id);
          if (entry) this.#emit({ type: "entry_appended", entry });
        },
        setSessionName: (name: string) => s.setSessionName(name),
        getSessionName: () => s.sessionManager.getSessionName?.(),
        setLabel: (entryId: string, label: string | undefined) => void s.sessionManager.appendLabelChange?.(entryId, label),
        getActiveTools: () => s.getActiveToolNames(),
        getAllTools: () => s.getAllTools(),
        getSettings: () => call(s.settingsManager, "getSettings") ?? {},
        setActiveTools: (names: string[]) => s.setActiveToolsByName(names),
        refreshTools: () => s.refreshTools(),
        getCommands,
        setModel: async (model: Model) => {
          await s.setModel(model);
          return true;
        },
        getThinkingLevel: () => s.thinkingLevel,
        setThinkingLevel: (level: ThinkingLevel) => s.setThinkingLevel(level),
      },
      {
        getModel: () => s.model,
        getScopedModels: () => [],
        isIdle: () => s.isIdle,
        isProjectTrusted: () => (call(s.settingsManager, "isProjectTrusted") as boolean | undefined) ?? true,
        getSignal: () => s.agent.signal,
        abort: () => (this.#handlers.abortHandler ? this.#handlers.abortHandler() : void s.abort()),
        hasPendingMessages: () => s.pendingMessageCount > 0,
        shutdown: () => this.#handlers.shutdownHandler?.(),
        getContextUsage: () => s.getContextUsage(),
        compact: (options) => options?.onError?.(new Error("AgentSession.compact is not available in pion's in-process sessions")),
        getSystemPrompt: () => s.systemPrompt,
      },
    );
  }

  /** `tool_call` / `tool_result` around each call; `context`, then this run's forced prompt, on each request. */
  #installAgentHooks(agent: Agent): void {
    const runner = this.runner;
    agent.beforeToolCall = async ({ toolCall, args }) => {
      if (!runner.hasHandlers("tool_call")) return undefined;
      return runner.emitToolCall({ type: "tool_call", toolName: toolCall.name, toolCallId: toolCall.id, input: args as Rec });
    };
    agent.afterToolCall = async ({ toolCall, args, result, isError }) => {
      if (!runner.hasHandlers("tool_result")) return undefined;
      const r = result as Rec & { content: unknown[] };
      return runner.emitToolResult({
        type: "tool_result",
        toolName: toolCall.name,
        toolCallId: toolCall.id,
        input: args as Rec,
        content: r.content,
        details: r.details,
        ...(r.structuredContent === undefined ? {} : { structuredContent: r.structuredContent }),
        isError,
        usage: r.usage,
      }) as never;
    };
    agent.transformContext = async (messages) => {
      const out = runner.hasHandlers("context") ? ((await runner.emitContext(messages)) as AgentMessage[]) : messages;
      if (this.#forced === undefined) return out;
      const current = getCurrentSystemMessage(out as { role: string }[]);
      const head = { role: "system", content: this.#forced, ...(current?.toolsAdded ? { toolsAdded: current.toolsAdded } : {}), timestamp: current?.timestamp ?? Date.now() };
      return [head as unknown as AgentMessage, ...out.filter((m) => (m as { role: string }).role !== "system")];
    };
  }

  /** The extensions' tools, each run with the runner's tool context as its `ctx`. */
  tools(): AgentTool[] {
    return this.runner.getAllRegisteredTools().map(({ definition }) => {
      const def = definition as AgentTool;
      return {
        ...def,
        execute: (id: string, params: unknown, signal?: AbortSignal, onUpdate?: unknown) =>
          (def.execute as (...a: unknown[]) => unknown)(id, params, signal, onUpdate, this.runner.createToolContext(id, signal)),
      } as AgentTool;
    });
  }

  /** An agent event as the handlers get it, before the session's listeners. */
  async onAgentEvent(e: Rec & { type: string }): Promise<void> {
    const r = this.runner;
    switch (e.type) {
      case "agent_start":
        this.#turnIndex = 0;
        return void (await r.emit({ type: "agent_start" }));
      case "agent_end":
        return void (await r.emit({ type: "agent_end", messages: e.messages }));
      case "turn_start":
        return void (await r.emit({ type: "turn_start", turnIndex: this.#turnIndex, timestamp: Date.now() }));
      case "turn_end":
        await r.emit({ type: "turn_end", turnIndex: this.#turnIndex, message: e.message, toolResults: e.toolResults });
        this.#turnIndex++;
        return;
      case "message_start":
      case "message_end":
        return void (await r.emit({ type: e.type, message: e.message }));
      case "message_update":
        return void (await r.emit({ type: e.type, message: e.message, assistantMessageEvent: e.assistantMessageEvent }));
      case "tool_execution_start":
        return void (await r.emit({ type: e.type, toolCallId: e.toolCallId, toolName: e.toolName, args: e.args }));
      case "tool_execution_update":
        return void (await r.emit({ type: e.type, toolCallId: e.toolCallId, toolName: e.toolName, args: e.args, partialResult: e.partialResult }));
      case "tool_execution_end":
        return void (await r.emit({ type: e.type, toolCallId: e.toolCallId, toolName: e.toolName, result: e.result, isError: e.isError, ...(e.durationMs === undefined ? {} : { durationMs: e.durationMs }) }));
    }
  }

  /**
   * `input`, then `before_agent_start`, for a prompt about to start a run: undefined when a
   * handler handled it, else the text and images to send and the messages that go after them.
   */
  async beforeRun(text: string, images: ImageContent[] | undefined, source: string): Promise<{ text: string; images?: ImageContent[]; messages: AgentMessage[] } | undefined> {
    const r = this.runner;
    if (r.hasHandlers("input")) {
      const out = await r.emitInput(text, images, source);
      if (out.action === "handled") return undefined;
      if (out.action === "transform") {
        text = String(out.text);
        images = out.images as ImageContent[] | undefined;
      }
    }
    // Tools an extension registered since the last run take part in it.
    this.#session.refreshTools();
    const started = await r.emitBeforeAgentStart({ prompt: text, ...(images?.length ? { images } : {}) }, { cwd: this.runner.cwd, selectedTools: this.#session.getActiveToolNames() });
    const forced = started.systemPromptOptions.forceSystemPrompt;
    this.#forced = typeof forced === "string" ? forced : undefined;
    const messages = (started.messages as Rec[]).map((m) => ({ role: "custom", customType: m.customType, content: m.content ?? [], display: m.display, details: m.details, timestamp: Date.now() }) as unknown as AgentMessage);
    return { text, ...(images ? { images } : {}), messages };
  }

  /** The run is over: its forced prompt no longer applies; `agent_settled` reaches the handlers. */
  async afterRun(aborted: boolean): Promise<void> {
    this.#forced = undefined;
    await this.runner.emit({ type: "agent_settled", aborted });
  }

  /** The session's `bindExtensions`: bindings applied, then its start event and `resources_discover`. */
  async bind(bindings: ExtensionBindings): Promise<void> {
    this.#handlers = { ...this.#handlers, ...Object.fromEntries(Object.entries(bindings).filter(([, v]) => v !== undefined)) };
    const r = this.runner;
    r.setUIContext(this.#handlers.uiContext, this.#handlers.mode ?? "print");
    r.bindCommandContext(this.#handlers.commandContextActions as never);
    this.#unsubscribeErrors?.();
    this.#unsubscribeErrors = this.#handlers.onError ? (r.onError(this.#handlers.onError) as unknown as () => void) : undefined;
    await r.emit(this.#startEvent);
    this.#session.refreshTools();
    if (!r.hasHandlers("resources_discover")) return;
    const found = (await r.emitResourcesDiscover(r.cwd, this.#startEvent.reason === "reload" ? "reload" : "startup")) as { skillPaths: Rec[]; promptPaths: Rec[] };
    if (found.skillPaths.length > 0 || found.promptPaths.length > 0) call(this.#session.resourceLoader, "extendResources", found);
  }

  /** The session is disposed: captured `pi` and `ctx` are stale from now on. */
  dispose(): void {
    this.#unsubscribeErrors?.();
    this.runner.invalidate();
  }
}
