/**
 * pi-agent-core's `Agent` on pion's own loop (through agent-core.ts's `runAgentLoop`): it owns a
 * transcript whose leading system message carries `initialState.systemPrompt` and the tools,
 * emits the loop's events to its subscribers (awaited in order), and runs `prompt` / `continue`
 * with `steer` / `followUp` queues ("one-at-a-time" unless told "all"), `abort`, `waitForIdle`
 * and `reset`. Requests go through `streamFn` (the reference's signature) when given, else the
 * default (`setDefaultStreamFn`, or pion's providers with the session's keys).
 */
import type { AssistantMessage, ImageContent, Model, ThinkingLevel } from "../../providers/types.ts";
import type { QueueMode } from "../../session/queues.ts";
import type { AgentMessage } from "../../store/entries.ts";
import { emptyAssistant } from "../../providers/event-stream.ts";
import { errorMessage } from "../../util/errors.ts";
import { runAgentLoop, runAgentLoopContinue, TOOL_CWD, type AgentLoopConfig, type AgentTool, type RefStreamFn } from "./agent-core.ts";
import { createInitialSystemMessage, getCurrentSystemMessage, getCurrentSystemPrompt, toToolDeclaration } from "../../session/system-messages.ts";

type Rec = Record<string, unknown>;
type Event = Rec & { type: string };
type Listener = (event: Event, signal: AbortSignal) => Promise<void> | void;

interface InitialState {
  systemPrompt?: string;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
  tools?: AgentTool[];
  messages?: AgentMessage[];
}

interface AgentOptions extends Partial<Pick<AgentLoopConfig, "convertToLlm" | "transformContext" | "getApiKey" | "beforeToolCall" | "afterToolCall" | "toolExecution">> {
  initialState?: InitialState;
  streamFn?: RefStreamFn;
  steeringMode?: QueueMode;
  followUpMode?: QueueMode;
  sessionId?: string;
  thinkingBudgets?: unknown;
  transport?: string;
  maxRetryDelayMs?: number;
  identity?: unknown;
  /** pi-ai's request hooks, passed to each request's stream function (an in-process session's extensions' provider events). */
  onPayload?: (payload: unknown, model: Model) => unknown;
  onResponse?: (response: { status: number; headers: Record<string, string> }, model: Model) => unknown;
  /** pion's: the folder the tools get as `ctx.cwd` (an in-process session's), default the process's. */
  cwd?: string;
}

const LLM_ROLES = new Set(["system", "user", "assistant", "toolResult"]);
const keepLlmMessages = (messages: AgentMessage[]) => messages.filter((m) => LLM_ROLES.has((m as { role: string }).role));

const UNKNOWN_MODEL = { id: "unknown", name: "unknown", api: "unknown", provider: "unknown", baseUrl: "", reasoning: false, input: [], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 0, maxTokens: 0 } as unknown as Model;

/** The agent's state; assigning `tools` or `messages` copies the array, `systemPrompt` is replayed from the transcript. */
class AgentState {
  model: Model;
  thinkingLevel: ThinkingLevel;
  isStreaming = false;
  streamingMessage: AgentMessage | undefined;
  pendingToolCalls: ReadonlySet<string> = new Set();
  errorMessage: string | undefined;
  private _tools: AgentTool[];
  private _messages: AgentMessage[];

  constructor(s: InitialState) {
    this._tools = s.tools?.slice() ?? [];
    this._messages = s.messages?.slice() ?? [];
    const head = createInitialSystemMessage(s.systemPrompt, this._tools.map((t) => toToolDeclaration(t as unknown as Parameters<typeof toToolDeclaration>[0])));
    if ((this._messages[0] as { role?: string } | undefined)?.role !== "system" && head) this._messages.unshift(head as unknown as AgentMessage);
    this.model = s.model ?? UNKNOWN_MODEL;
    this.thinkingLevel = s.thinkingLevel ?? "off";
  }

  get systemPrompt(): string {
    return getCurrentSystemPrompt(this._messages);
  }
  get tools(): AgentTool[] {
    return this._tools;
  }
  set tools(tools: AgentTool[]) {
    this._tools = tools.slice();
  }
  get messages(): AgentMessage[] {
    return this._messages;
  }
  set messages(messages: AgentMessage[]) {
    this._messages = messages.slice();
  }
}

class PendingQueue {
  items: AgentMessage[] = [];
  constructor(public mode: QueueMode) {}
  peek(): AgentMessage[] {
    return this.mode === "all" ? this.items.slice() : this.items.slice(0, 1);
  }
  drain(): AgentMessage[] {
    const out = this.peek();
    this.items = this.items.slice(out.length);
    return out;
  }
}

export class Agent {
  private readonly _state: AgentState;
  private readonly listeners = new Set<Listener>();
  private readonly steeringQueue: PendingQueue;
  private readonly followUpQueue: PendingQueue;
  private activeRun: { promise: Promise<void>; controller: AbortController } | undefined;
  convertToLlm: NonNullable<AgentOptions["convertToLlm"]>;
  transformContext: AgentOptions["transformContext"];
  streamFunction: RefStreamFn | undefined;
  getApiKey: AgentOptions["getApiKey"];
  beforeToolCall: AgentOptions["beforeToolCall"];
  afterToolCall: AgentOptions["afterToolCall"];
  sessionId: string | undefined;
  toolExecution: "sequential" | "parallel";
  thinkingBudgets: unknown;
  transport: string;
  maxRetryDelayMs: number | undefined;
  identity: unknown;
  onPayload: AgentOptions["onPayload"];
  onResponse: AgentOptions["onResponse"];
  private readonly cwd: string | undefined;

  constructor(options: AgentOptions = {}) {
    this._state = new AgentState(options.initialState ?? {});
    this.convertToLlm = options.convertToLlm ?? keepLlmMessages;
    this.transformContext = options.transformContext;
    this.streamFunction = options.streamFn;
    this.getApiKey = options.getApiKey;
    this.beforeToolCall = options.beforeToolCall;
    this.afterToolCall = options.afterToolCall;
    this.steeringQueue = new PendingQueue(options.steeringMode ?? "one-at-a-time");
    this.followUpQueue = new PendingQueue(options.followUpMode ?? "one-at-a-time");
    this.sessionId = options.sessionId;
    this.toolExecution = options.toolExecution ?? "parallel";
    this.thinkingBudgets = options.thinkingBudgets;
    this.transport = options.transport ?? "auto";
    this.maxRetryDelayMs = options.maxRetryDelayMs;
    this.identity = options.identity;
    this.onPayload = options.onPayload;
    this.onResponse = options.onResponse;
    this.cwd = options.cwd;
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get state(): AgentState {
    return this._state;
  }
  get steeringMode(): QueueMode {
    return this.steeringQueue.mode;
  }
  set steeringMode(mode: QueueMode) {
    this.steeringQueue.mode = mode;
  }
  get followUpMode(): QueueMode {
    return this.followUpQueue.mode;
  }
  set followUpMode(mode: QueueMode) {
    this.followUpQueue.mode = mode;
  }

  steer(message: AgentMessage): void {
    this.steeringQueue.items.push(message);
  }
  followUp(message: AgentMessage): void {
    this.followUpQueue.items.push(message);
  }
  clearSteeringQueue(): void {
    this.steeringQueue.items = [];
  }
  clearFollowUpQueue(): void {
    this.followUpQueue.items = [];
  }
  clearAllQueues(): void {
    this.clearSteeringQueue();
    this.clearFollowUpQueue();
  }
  hasQueuedMessages(): boolean {
    return this.steeringQueue.items.length > 0 || this.followUpQueue.items.length > 0;
  }
  peekQueuedMessages(): AgentMessage[] {
    const steering = this.steeringQueue.peek();
    return steering.length > 0 ? steering : this.followUpQueue.peek();
  }

  get signal(): AbortSignal | undefined {
    return this.activeRun?.controller.signal;
  }
  abort(): void {
    this.activeRun?.controller.abort();
  }
  waitForIdle(): Promise<void> {
    return this.activeRun?.promise ?? Promise.resolve();
  }

  /** Clear the conversation and queues, keeping the replayed prompt and tool declarations. */
  reset(): void {
    if (this.activeRun) throw new Error("Agent is already processing. Wait for completion before resetting.");
    const head = getCurrentSystemMessage(this._state.messages);
    this._state.messages = head ? [head as unknown as AgentMessage] : [];
    this._state.streamingMessage = undefined;
    this._state.pendingToolCalls = new Set();
    this._state.errorMessage = undefined;
    this.clearAllQueues();
  }

  async prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    if (this.activeRun) throw new Error("Agent is already processing a prompt. Use steer() or followUp() to queue messages, or wait for completion.");
    const messages: AgentMessage[] =
      typeof input === "string"
        ? [{ role: "user", content: [{ type: "text", text: input }, ...(images ?? [])], timestamp: Date.now() } as AgentMessage]
        : Array.isArray(input)
          ? input
          : [input];
    await this.run((signal) => runAgentLoop(messages, this.snapshot(), this.loopConfig(), (e) => this.process(e), signal, this.streamFunction));
  }

  async continue(): Promise<void> {
    if (this.activeRun) throw new Error("Agent is already processing. Wait for completion before continuing.");
    const messages = this._state.messages;
    const last = messages.at(-1) as { role: string } | undefined;
    if (!last || messages.every((m) => (m as { role: string }).role === "system")) throw new Error("No messages to continue from");
    if (last.role === "assistant") {
      const steering = this.steeringQueue.drain();
      if (steering.length > 0) return this.run((signal) => runAgentLoop(steering, this.snapshot(), this.loopConfig(true), (e) => this.process(e), signal, this.streamFunction));
      const followUps = this.followUpQueue.drain();
      if (followUps.length > 0) return this.run((signal) => runAgentLoop(followUps, this.snapshot(), this.loopConfig(), (e) => this.process(e), signal, this.streamFunction));
      throw new Error("Cannot continue from message role: assistant");
    }
    await this.run((signal) => runAgentLoopContinue(this.snapshot(), this.loopConfig(), (e) => this.process(e), signal, this.streamFunction));
  }

  private snapshot() {
    return { messages: this._state.messages.slice(), tools: this._state.tools.slice() };
  }

  private loopConfig(skipFirstSteeringPoll = false): AgentLoopConfig {
    let skip = skipFirstSteeringPoll;
    const level = this._state.thinkingLevel;
    return {
      model: this._state.model,
      ...(level !== "off" ? { reasoning: level } : {}),
      ...(this.sessionId ? { sessionId: this.sessionId } : {}),
      ...(this.onPayload ? { onPayload: this.onPayload } : {}),
      ...(this.onResponse ? { onResponse: this.onResponse } : {}),
      ...(this.thinkingBudgets ? { thinkingBudgets: this.thinkingBudgets } : {}),
      ...(this.identity ? { identity: this.identity } : {}),
      transport: this.transport,
      toolExecution: this.toolExecution,
      convertToLlm: this.convertToLlm,
      ...(this.transformContext ? { transformContext: this.transformContext } : {}),
      ...(this.getApiKey ? { getApiKey: this.getApiKey } : {}),
      ...(this.beforeToolCall ? { beforeToolCall: this.beforeToolCall } : {}),
      ...(this.afterToolCall ? { afterToolCall: this.afterToolCall } : {}),
      getSteeringMessages: async () => {
        if (skip) {
          skip = false;
          return [];
        }
        return this.steeringQueue.drain();
      },
      getFollowUpMessages: async () => this.followUpQueue.drain(),
      ...(this.cwd ? { [TOOL_CWD]: this.cwd } : {}),
    };
  }

  private async run(executor: (signal: AbortSignal) => Promise<unknown>): Promise<void> {
    const controller = new AbortController();
    let done!: () => void;
    this.activeRun = { promise: new Promise<void>((r) => (done = r)), controller };
    this._state.isStreaming = true;
    this._state.streamingMessage = undefined;
    this._state.errorMessage = undefined;
    try {
      await executor(controller.signal);
    } catch (err) {
      await this.fail(err, controller.signal.aborted);
    } finally {
      this._state.isStreaming = false;
      this._state.streamingMessage = undefined;
      this._state.pendingToolCalls = new Set();
      done();
      this.activeRun = undefined;
    }
  }

  /** A run that threw (a hook or `convertToLlm` failed): its end as an assistant message with the error. */
  private async fail(err: unknown, aborted: boolean): Promise<void> {
    const m = this._state.model;
    const message: AssistantMessage = { ...emptyAssistant(m), content: [{ type: "text", text: "" }], stopReason: aborted ? "aborted" : "error", errorMessage: errorMessage(err) };
    await this.process({ type: "message_start", message });
    await this.process({ type: "message_end", message });
    await this.process({ type: "turn_end", message, toolResults: [] });
    await this.process({ type: "agent_end", messages: [message] });
  }

  private async process(e: Event): Promise<void> {
    const s = this._state;
    switch (e.type) {
      case "message_start":
      case "message_update":
        s.streamingMessage = e.message as AgentMessage;
        break;
      case "message_end":
        s.streamingMessage = undefined;
        s.messages.push(e.message as AgentMessage);
        break;
      case "tool_execution_start":
        s.pendingToolCalls = new Set([...s.pendingToolCalls, e.toolCallId as string]);
        break;
      case "tool_execution_end": {
        const pending = new Set(s.pendingToolCalls);
        pending.delete(e.toolCallId as string);
        s.pendingToolCalls = pending;
        break;
      }
      case "turn_end": {
        const m = e.message as { role: string; errorMessage?: string };
        if (m.role === "assistant" && m.errorMessage) s.errorMessage = m.errorMessage;
        break;
      }
      case "agent_end":
        s.streamingMessage = undefined;
        break;
    }
    const signal = this.activeRun?.controller.signal;
    if (!signal) throw new Error("Agent listener invoked outside active run");
    for (const l of this.listeners) await l(e, signal);
  }
}
