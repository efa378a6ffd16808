/**
 * pi-agent-core's `Agent` on pion's own loop (src/agent/loop.ts) and providers: an extension
 * builds one with `initialState` (`systemPrompt`, `model`, `thinkingLevel`, `tools` in the
 * reference's AgentTool shape, `messages`), subscribes to the loop's events, and runs `prompt` /
 * `continue`, with `steer` / `followUp` queues, `abort` and `waitForIdle`. Keys come from
 * `getApiKey(provider)` when given, else the session's registry (model-calls.ts). A custom
 * `streamFn` (the reference's stream signature) is not supported: requests go through pion's
 * providers.
 */
import { runAgent } from "../../agent/loop.ts";
import type { AgentEvent } from "../../agent/events.ts";
import { streamByApi } from "../../providers/index.ts";
import type { ImageContent, Model, ThinkingLevel } from "../../providers/types.ts";
import type { AgentMessage } from "../../store/entries.ts";
import type { Tool } from "../../tools/tool.ts";
import type { ExtensionContext, ToolDefinition } from "../api.ts";
import { sessionAuthFor } from "../model-calls.ts";
import { adaptTool } from "../tool-adapter.ts";

interface AgentState {
  systemPrompt: string;
  model: Model | undefined;
  thinkingLevel: ThinkingLevel;
  tools: ToolDefinition[];
  messages: AgentMessage[];
  isStreaming: boolean;
  errorMessage?: string;
}

interface AgentOptions {
  initialState?: Partial<Omit<AgentState, "isStreaming">>;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  sessionId?: string;
}

type Listener = (event: AgentEvent, signal: AbortSignal) => Promise<void> | void;

export class Agent {
  readonly state: AgentState;
  private readonly listeners = new Set<Listener>();
  private readonly steering: AgentMessage[] = [];
  private readonly followUps: AgentMessage[] = [];
  private controller: AbortController | undefined;
  private running: Promise<void> = Promise.resolve();

  constructor(private readonly options: AgentOptions = {}) {
    const s = options.initialState ?? {};
    this.state = { systemPrompt: s.systemPrompt ?? "", model: s.model, thinkingLevel: s.thinkingLevel ?? "off", tools: s.tools ?? [], messages: [...(s.messages ?? [])], isStreaming: false };
  }

  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get signal(): AbortSignal | undefined {
    return this.controller?.signal;
  }

  steer(message: AgentMessage): void {
    this.steering.push(message);
  }

  followUp(message: AgentMessage): void {
    this.followUps.push(message);
  }

  abort(): void {
    this.controller?.abort();
  }

  waitForIdle(): Promise<void> {
    return this.running;
  }

  prompt(input: string | AgentMessage | AgentMessage[], images?: ImageContent[]): Promise<void> {
    const prompts: AgentMessage[] =
      typeof input === "string"
        ? [{ role: "user", content: images?.length ? [{ type: "text", text: input }, ...images] : input, timestamp: Date.now() } as AgentMessage]
        : Array.isArray(input)
          ? input
          : [input];
    return this.run(prompts);
  }

  continue(): Promise<void> {
    return this.run([]);
  }

  private run(prompts: AgentMessage[]): Promise<void> {
    if (this.state.isStreaming) return Promise.reject(new Error("Agent is already running; use steer or followUp"));
    const model = this.state.model;
    if (!model) return Promise.reject(new Error("Agent has no model"));
    const controller = new AbortController();
    this.controller = controller;
    this.state.isStreaming = true;
    const tools = new Map<string, Tool>(this.state.tools.map((t) => [t.name, adaptTool(t, "agent", () => ({}) as ExtensionContext)]));
    this.running = runAgent(this.state.messages, prompts, {
      stream: streamByApi,
      tools: () => tools,
      emit: async (e) => {
        if (e.type === "message_end") this.state.messages.push(e.message);
        for (const l of [...this.listeners]) await l(e, controller.signal);
      },
      buildRequest: async (context) => {
        const key = this.options.getApiKey ? await this.options.getApiKey(model.provider) : undefined;
        const auth = key ? { apiKey: key } : ((await sessionAuthFor(model.provider)) ?? {});
        return {
          model,
          ...(auth.apiKey ? { apiKey: auth.apiKey } : {}),
          ...(auth.headers ? { authHeaders: auth.headers } : {}),
          systemPrompt: this.state.systemPrompt,
          messages: [...context] as never,
          tools: [...tools.values()].map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
          thinkingLevel: this.state.thinkingLevel,
          ...(this.options.sessionId ? { sessionId: this.options.sessionId } : {}),
        };
      },
      nextSteering: () => this.steering.splice(0),
      nextFollowUp: () => this.followUps.splice(0),
      interruptMode: () => "wait",
      hasPendingSteering: () => this.steering.length > 0,
      hasPendingFollowUp: () => this.followUps.length > 0,
      cwd: process.cwd(),
    }, controller.signal)
      .then(
        () => undefined,
        (err: unknown) => {
          this.state.errorMessage = err instanceof Error ? err.message : String(err);
        },
      )
      .finally(() => {
        this.state.isStreaming = false;
        this.controller = undefined;
      });
    return this.running;
  }
}
