/**
 * pi-agent-core's low-level loop functions on pion's own loop (src/agent/loop.ts): `agentLoop` /
 * `agentLoopContinue` (an event stream of the loop's events whose `result()` is the messages the
 * run added), `runAgentLoop` / `runAgentLoopContinue` (the same events sent to a callback),
 * `runToolCall` (one call through argument checks, the hooks and execution, no events), and
 * `setDefaultStreamFn`. The reference's loop config maps onto pion's loop: `convertToLlm` and
 * `transformContext` build each request, `getSteeringMessages` / `getFollowUpMessages` are asked
 * where the reference asks them (after each turn, follow-ups only when the run would stop),
 * `beforeToolCall` / `afterToolCall` wrap each call. A stream function has the reference's
 * signature `(model, context, options)` and gets the transcript with its system messages; when
 * none is given or set, requests go through pion's providers with the session's keys.
 *
 * With `toolExecution: "sequential"` (or a tool marked so) each result message follows its call.
 * `finishTurn` may end the run (its `continue` decision is not carried over), a batch whose every
 * result sets `terminate` ends it unless messages are queued, and the calls of a reply cut off by
 * the token limit do not run. Not carried over: `prepareRequest`, `prepareNextTurn`.
 */
import { runAgent, toolResultMessage, type LoopDeps } from "../../agent/loop.ts";
import type { AgentEvent } from "../../agent/events.ts";
import { emptyAssistant, PushStream } from "../../providers/event-stream.ts";
import type { AssistantMessage, AssistantMessageEvent, LlmRequest, Model, StreamFn as PionStreamFn, ThinkingLevel, ToolCall, ToolResultMessage } from "../../providers/types.ts";
import type { AgentMessage } from "../../store/entries.ts";
import { ToolArgumentError, type ToolResult } from "../../tools/tool.ts";
import { errorMessage } from "../../util/errors.ts";
import type { ExtensionContext, ToolDefinition } from "../api.ts";
import { streamModel, toolSpecs, type CallOptions } from "../model-calls.ts";
import { adaptTool, toToolResult } from "../tool-adapter.ts";
import { streamProxy } from "./agent-proxy.ts";
import { declareToolChanges, requestParts } from "./agent-transcript.ts";
import { EventStream, PartialAssistant } from "./ai-utils-stream.ts";

type Rec = Record<string, unknown>;
export type RefEvent = Rec & { type: string };
export interface RefStream extends AsyncIterable<RefEvent> {
  result(): Promise<AssistantMessage>;
}
/** The reference's stream function: `(model, { messages }, options) => AssistantMessageEventStream`. */
export type RefStreamFn = (model: Model, context: { messages: unknown[] }, options?: Rec) => RefStream | Promise<RefStream>;

export type AgentTool = ToolDefinition & { executionMode?: "sequential" | "parallel" };
export interface AgentContext {
  messages: AgentMessage[];
  tools?: AgentTool[];
}
interface HookContext {
  assistantMessage: AssistantMessage;
  toolCall: ToolCall;
  args: unknown;
  context: AgentContext;
}
type BeforeToolCall = (c: HookContext, signal?: AbortSignal) => Promise<{ block?: boolean; reason?: string; terminate?: boolean } | undefined>;
type FinishTurn = (
  turn: { message: AssistantMessage; toolResults: unknown[]; context: AgentContext; newMessages: AgentMessage[] },
  signal?: AbortSignal,
) => Promise<{ action: "continue" | "end" } | void | undefined> | { action: "continue" | "end" } | void;
type AfterToolCall = (c: HookContext & { result: ToolResult; isError: boolean }, signal?: AbortSignal) => Promise<(Partial<ToolResult> & Rec) | undefined>;
export interface AgentLoopConfig extends Rec {
  model: Model;
  convertToLlm: (messages: AgentMessage[]) => unknown[] | Promise<unknown[]>;
  transformContext?: (messages: AgentMessage[], signal?: AbortSignal) => Promise<AgentMessage[]>;
  getApiKey?: (provider: string) => Promise<string | undefined> | string | undefined;
  apiKey?: string;
  reasoning?: ThinkingLevel;
  sessionId?: string;
  getSteeringMessages?: () => Promise<AgentMessage[]>;
  getFollowUpMessages?: () => Promise<AgentMessage[]>;
  toolExecution?: "sequential" | "parallel";
  beforeToolCall?: BeforeToolCall;
  afterToolCall?: AfterToolCall;
  finishTurn?: FinishTurn;
  [TOOL_CWD]?: string;
}
/** pion's own config key (a symbol: never sent to a stream function): the folder tools get as `ctx.cwd`. */
export const TOOL_CWD = Symbol("pion.toolCwd");
export type AgentLoopEvent = Rec & { type: string };
export type AgentEventSink = (event: AgentLoopEvent) => Promise<void> | void;

/** The reference's request identity for agent loops (pi-ai's attribution to pi); pion's providers send no attribution. */
export const DEFAULT_AGENT_IDENTITY = Object.freeze({ attribution: Object.freeze({ name: "pi", url: "https://pi.dev", categories: Object.freeze(["cli-agent"]) }) });

let defaultStreamFn: RefStreamFn | undefined;

/** The stream function loops and Agents use when given none (`undefined` restores pion's providers). */
export function setDefaultStreamFn(fn: RefStreamFn | undefined): void {
  defaultStreamFn = fn;
}

/**
 * pion's providers in the reference's stream signature, as the reference's host installs pi-ai's
 * `streamSimple`: the transcript's system messages become the request's prompt and tools.
 */
export const pionStreamFn: RefStreamFn = (model, context, options = {}) => {
  const parts = requestParts(context.messages as { role: string }[]);
  return streamModel(model, parts, {
    ...(typeof options.apiKey === "string" ? { apiKey: options.apiKey } : {}),
    ...(options.headers ? { headers: options.headers as Record<string, string> } : {}),
    ...(options.signal ? { signal: options.signal as AbortSignal } : {}),
    ...(options.reasoning ? { reasoning: options.reasoning as ThinkingLevel } : {}),
    ...(typeof options.sessionId === "string" ? { sessionId: options.sessionId } : {}),
    ...(typeof options.onPayload === "function" ? { onPayload: options.onPayload as CallOptions["onPayload"] } : {}),
    ...(typeof options.onResponse === "function" ? { onResponse: options.onResponse as CallOptions["onResponse"] } : {}),
  }) as unknown as RefStream;
};

export const getDefaultStreamFn = (): RefStreamFn => defaultStreamFn ?? pionStreamFn;

const DELTAS = new Set(["text_start", "text_delta", "text_end", "thinking_start", "thinking_delta", "thinking_end", "toolcall_start", "toolcall_delta", "toolcall_end"]);

/** A reference stream event as pion's delta-only event (`start`, `done`, `error` have none). */
export function toPionEvent(e: RefEvent): AssistantMessageEvent | undefined {
  if (!DELTAS.has(e.type)) return undefined;
  const { partial, ...rest } = e;
  if (e.type === "toolcall_start" && (rest.id === undefined || rest.toolName === undefined)) {
    const block = (partial as AssistantMessage | undefined)?.content[e.contentIndex as number] as ToolCall | undefined;
    return { ...rest, id: String(rest.id ?? block?.id ?? ""), toolName: String(rest.toolName ?? block?.name ?? "") } as AssistantMessageEvent;
  }
  return rest as unknown as AssistantMessageEvent;
}

/** A reference stream function as pion's loop calls one; `transcripts` holds each request's full transcript. */
function throughStreamFn(fn: RefStreamFn, config: AgentLoopConfig, transcripts: WeakMap<LlmRequest, unknown[]>): PionStreamFn {
  return (req, signal) => {
    const out = new PushStream();
    void (async () => {
      const { [TOOL_CWD]: _d, model: _m, convertToLlm: _c, transformContext: _t, getApiKey: _g, getSteeringMessages: _s, getFollowUpMessages: _f, beforeToolCall: _b, afterToolCall: _a, finishTurn: _ft, ...options } = config;
      const stream = await fn(req.model, { messages: transcripts.get(req) ?? req.messages }, {
        ...options,
        ...(req.apiKey ? { apiKey: req.apiKey } : {}),
        identity: { ...DEFAULT_AGENT_IDENTITY, ...(config.identity as Rec | undefined) },
        signal,
      });
      for await (const e of stream) {
        const ev = toPionEvent(e);
        if (ev) out.push(ev);
      }
      out.end(await stream.result());
    })().catch((err: unknown) => out.end({ ...emptyAssistant(req.model), stopReason: signal.aborted ? "aborted" : "error", errorMessage: errorMessage(err) }));
    return out;
  };
}

const noContext = () => ({}) as ExtensionContext;
const asPionTools = (tools: readonly AgentTool[]) => new Map(tools.map((t) => [t.name, adaptTool(t, "agent", noContext)]));

/** `tool` noting in `terminating` each call whose result sets `terminate`. */
function recordTerminate(tool: AgentTool, terminating: Set<string>): AgentTool {
  return {
    ...tool,
    execute: async (id: string, ...rest: unknown[]) => {
      const result: unknown = await (tool.execute as (...a: unknown[]) => unknown)(id, ...rest);
      if ((result as { terminate?: unknown } | undefined)?.terminate === true) terminating.add(id);
      return result;
    },
  } as AgentTool;
}

/** afterToolCall's override merged field by field over the executed result. */
function mergeAfter(result: ToolResult, isError: boolean, after: (Partial<ToolResult> & Rec) | undefined): ToolResult {
  if (!after) return isError ? { ...result, isError: true } : result;
  const merged: ToolResult & Rec = { ...result, content: after.content ?? result.content, details: after.details ?? result.details };
  const structured = after.structuredContent ?? (after.content ? undefined : result.structuredContent);
  if (structured === undefined) delete merged.structuredContent;
  else merged.structuredContent = structured;
  if (after.usage !== undefined) merged.usage = after.usage;
  const error = after.isError ?? isError;
  if (error) merged.isError = true;
  else delete merged.isError;
  return merged;
}

async function runOnPion(
  prompts: AgentMessage[] | undefined,
  context: AgentContext,
  config: AgentLoopConfig,
  emit: AgentEventSink,
  signal: AbortSignal | undefined,
  streamFn: RefStreamFn | undefined,
): Promise<AgentMessage[]> {
  const agentTools = context.tools ?? [];
  // Calls whose result asks to end the run after this batch (`terminate`).
  const terminating = new Set<string>();
  const tools = asPionTools(agentTools.map((t) => recordTerminate(t, terminating)));
  const transcripts = new WeakMap<LlmRequest, unknown[]>();
  const current: AgentMessage[] = [...context.messages];
  const added: AgentMessage[] = [];
  const steering: AgentMessage[] = [...((await config.getSteeringMessages?.()) ?? [])];
  const followUps: AgentMessage[] = [];
  const opening = declareToolChanges(current, agentTools, prompts ?? steering.splice(0));
  const run = signal ?? new AbortController().signal;
  let assistant: AssistantMessage | undefined;
  let partial: PartialAssistant | undefined;
  let stop = false;
  const hookContext = (): AgentContext => ({ messages: current, tools: agentTools });
  const sequential = config.toolExecution === "sequential";
  // After a turn, as the reference asks: steering first, follow-ups only when the run would stop.
  const afterTurnEnd = async (message: AssistantMessage, results: readonly { toolCallId: string }[]) => {
    if (stop || run.aborted || message.stopReason === "error" || message.stopReason === "aborted") return;
    const ending = results.length > 0 && results.every((r) => terminating.has(r.toolCallId));
    steering.push(...((await config.getSteeringMessages?.()) ?? []));
    if (steering.length > 0) return;
    const calls = message.content.some((c) => c.type === "toolCall");
    if (calls && !ending) return;
    const more = (await config.getFollowUpMessages?.()) ?? [];
    // After a terminating batch the loop would go on for the calls: the follow-ups open that turn instead.
    if (ending) {
      if (more.length > 0) steering.push(...more);
      else stop = true;
    } else followUps.push(...more);
  };
  const oneByOne = () => sequential || agentTools.some((t) => t.executionMode === "sequential");
  // Run one at a time, each call's result message follows its tool_execution_end (pion's loop
  // adds them after the batch; that later copy is then not announced again).
  const early = new Map<string, ToolResultMessage>();
  const announce = async (e: Extract<AgentEvent, { type: "tool_execution_end" }>) => {
    const msg = toolResultMessage(e);
    early.set(e.toolCallId, msg);
    current.push(msg);
    added.push(msg);
    await emit({ type: "message_start", message: msg });
    await emit({ type: "message_end", message: msg });
  };
  const deps: LoopDeps = {
    stream: throughStreamFn(streamFn ?? getDefaultStreamFn(), config, transcripts),
    tools: () => tools,
    emit: async (e: AgentEvent) => {
      let out: Rec & { type: string } = e;
      if ((e.type === "message_start" || e.type === "message_end") && e.message.role === "toolResult" && early.has(e.message.toolCallId)) {
        if (e.type === "message_end") early.delete(e.message.toolCallId);
        return;
      }
      if (e.type === "agent_end") out = { type: e.type, messages: added.slice() };
      if (e.type === "message_start" && e.message.role === "assistant") partial = new PartialAssistant(e.message);
      else if (e.type === "message_update" && partial) {
        const message = partial.apply(e.assistantMessageEvent);
        out = { type: e.type, assistantMessageEvent: { ...e.assistantMessageEvent, partial: message }, message: { ...message } };
      } else if (e.type === "message_end") {
        current.push(e.message);
        added.push(e.message);
        if (e.message.role === "assistant") assistant = e.message;
      } else if (e.type === "turn_end" && config.finishTurn) {
        const decision = await config.finishTurn({ message: e.message, toolResults: e.toolResults, context: hookContext(), newMessages: added }, run);
        if (decision?.action === "end") stop = true;
      }
      await emit(out);
      if (e.type === "tool_execution_end" && e.parentToolCallId === undefined && oneByOne()) await announce(e);
      if (e.type === "turn_end") await afterTurnEnd(e.message, e.toolResults);
    },
    buildRequest: async (all) => {
      let messages = [...all];
      if (config.transformContext) messages = await config.transformContext(messages, run);
      const llm = await config.convertToLlm(messages);
      const key = (config.getApiKey ? await config.getApiKey(config.model.provider) : undefined) || config.apiKey;
      const parts = requestParts(llm as { role: string }[]);
      const req: LlmRequest = {
        model: config.model,
        ...(key ? { apiKey: key } : {}),
        systemPrompt: parts.systemPrompt,
        messages: parts.messages,
        tools: toolSpecs(parts.tools),
        thinkingLevel: config.reasoning ?? "off",
        ...(config.sessionId ? { sessionId: config.sessionId } : {}),
      };
      transcripts.set(req, llm);
      return req;
    },
    beforeToolCall: async (call: ToolCall, args: Rec) => {
      // A reply cut off by the token limit may carry cut-off arguments: none of its calls run.
      if (assistant?.stopReason === "length") return { block: true as const, reason: `Tool call "${call.name}" did not run: the reply reached the output token limit, so its arguments may be incomplete. Send the call again in full.` };
      if (!config.beforeToolCall) return { block: false as const, input: args };
      const r = await config.beforeToolCall({ assistantMessage: assistant!, toolCall: call, args, context: hookContext() }, run);
      if (run.aborted) return { block: true as const, reason: "Operation aborted" };
      if (!r?.block) return { block: false as const, input: args };
      if (r.terminate === true) terminating.add(call.id);
      return { block: true as const, reason: r.reason || "Tool execution was blocked" };
    },
    ...(config.afterToolCall
      ? {
          afterToolResult: async (call: ToolCall, args: Rec, result: ToolResult) => {
            try {
              const isError = result.isError === true;
              const after = await config.afterToolCall!({ assistantMessage: assistant!, toolCall: call, args, result: { ...result, ...(terminating.has(call.id) ? { terminate: true } : {}) }, isError, context: hookContext() }, run);
              if (after?.terminate === true) terminating.add(call.id);
              else if (after?.terminate === false) terminating.delete(call.id);
              return mergeAfter(result, isError, after);
            } catch (err) {
              terminating.delete(call.id);
              return { content: [{ type: "text" as const, text: errorMessage(err) }], details: {}, isError: true };
            }
          },
        }
      : {}),
    afterTurn: async () => (stop ? { stop: true } : undefined),
    nextSteering: () => steering.splice(0),
    nextFollowUp: () => followUps.splice(0),
    // "immediate" runs calls one at a time; steering is only taken between turns, so none is skipped.
    interruptMode: () => (oneByOne() ? "immediate" : "wait"),
    hasPendingSteering: () => steering.length > 0,
    hasPendingFollowUp: () => followUps.length > 0,
    cwd: config[TOOL_CWD] ?? process.cwd(),
  };
  await runAgent(context.messages, opening, deps, run);
  return added;
}

function assertContinuable(context: AgentContext): void {
  if (context.messages.length === 0) throw new Error("Cannot continue: no messages in context");
  if (context.messages.at(-1)!.role === "assistant") throw new Error("Cannot continue from message role: assistant");
}

export function runAgentLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, emit: AgentEventSink, signal?: AbortSignal, streamFn?: RefStreamFn): Promise<AgentMessage[]> {
  return runOnPion(prompts, context, config, emit, signal, streamFn);
}

export async function runAgentLoopContinue(context: AgentContext, config: AgentLoopConfig, emit: AgentEventSink, signal?: AbortSignal, streamFn?: RefStreamFn): Promise<AgentMessage[]> {
  assertContinuable(context);
  return runOnPion(undefined, context, config, emit, signal, streamFn);
}

/** pi-agent-core's loop stream: pi-ai's EventStream, whose `result()` is the messages of the run's `agent_end`. */
const agentStream = () => new EventStream<AgentLoopEvent, AgentMessage[]>((e) => e.type === "agent_end", (e) => (e.type === "agent_end" ? (e.messages as AgentMessage[]) : []));

/** The run's events pushed to a loop stream, which ends with the run (with no messages if it fails). */
function streamOf(run: (emit: AgentEventSink) => Promise<AgentMessage[]>): EventStream<AgentLoopEvent, AgentMessage[]> {
  const stream = agentStream();
  void run(async (e) => stream.push(e)).then(
    (messages) => stream.end(messages),
    () => stream.end([]),
  );
  return stream;
}

export function agentLoop(prompts: AgentMessage[], context: AgentContext, config: AgentLoopConfig, signal?: AbortSignal, streamFn?: RefStreamFn): EventStream<AgentLoopEvent, AgentMessage[]> {
  return streamOf((emit) => runAgentLoop(prompts, context, config, emit, signal, streamFn));
}

export function agentLoopContinue(context: AgentContext, config: AgentLoopConfig, signal?: AbortSignal, streamFn?: RefStreamFn): EventStream<AgentLoopEvent, AgentMessage[]> {
  assertContinuable(context);
  return streamOf((emit) => runOnPion(undefined, context, config, emit, signal, streamFn));
}

interface RunToolCallOptions {
  tools: readonly AgentTool[];
  assistantMessage: AssistantMessage;
  context: AgentContext;
  signal?: AbortSignal;
  onUpdate?: (partial: ToolResult) => void | Promise<void>;
  beforeToolCall?: BeforeToolCall;
  afterToolCall?: AfterToolCall;
}

const failure = (toolCall: ToolCall, text: string) => ({ toolCall, result: { content: [{ type: "text" as const, text }], details: {} }, isError: true });

/**
 * One tool call through the steps a model's call takes (argument preparation and checks,
 * `beforeToolCall`, execution, `afterToolCall`), with no events and no messages. Never rejects:
 * an aborted signal (checked first), an unknown tool, bad arguments, a blocked or failing call
 * come back with `isError: true`.
 */
export async function runToolCall(toolCall: ToolCall, options: RunToolCallOptions) {
  const { signal, context, assistantMessage } = options;
  if (signal?.aborted) return failure(toolCall, "Operation aborted");
  const def = options.tools.find((t) => t.name === toolCall.name);
  if (!def) return failure(toolCall, `Tool ${toolCall.name} not found`);
  const tool = adaptTool(def, "agent", noContext);
  let args: Rec;
  try {
    args = (await tool.parse(toolCall.arguments)) as Rec;
    const before = await options.beforeToolCall?.({ assistantMessage, toolCall, args, context }, signal);
    if (signal?.aborted) return failure(toolCall, "Operation aborted");
    if (before?.block) return failure(toolCall, before.reason || "Tool execution was blocked");
  } catch (err) {
    return failure(toolCall, err instanceof ToolArgumentError || err instanceof Error ? err.message : String(err));
  }
  const updates: Promise<void>[] = [];
  let open = true;
  const started = performance.now();
  let result: ToolResult;
  let isError: boolean;
  try {
    const raw: unknown = await def.execute(toolCall.id, args, signal, (p: unknown) => {
      if (open) updates.push(Promise.resolve(options.onUpdate?.(toToolResult(p, def.name))));
    }, noContext());
    result = toToolResult(raw, def.name);
    isError = result.isError === true;
  } catch (err) {
    result = { content: [{ type: "text", text: errorMessage(err) }], details: {} };
    isError = true;
  }
  const durationMs = Math.round(performance.now() - started);
  open = false;
  await Promise.all(updates);
  if (options.afterToolCall) {
    try {
      const merged = mergeAfter(result, isError, await options.afterToolCall({ assistantMessage, toolCall, args, result, isError, context }, signal));
      isError = merged.isError === true;
      result = merged;
    } catch (err) {
      result = { content: [{ type: "text", text: errorMessage(err) }], details: {} };
      isError = true;
    }
  }
  const { isError: _e, ...clean } = result;
  return { toolCall, result: clean, isError, durationMs };
}

export const agentCoreExports: Record<string, unknown> = {
  agentLoop,
  agentLoopContinue,
  runAgentLoop,
  runAgentLoopContinue,
  runToolCall,
  setDefaultStreamFn,
  streamProxy,
  DEFAULT_AGENT_IDENTITY,
};
