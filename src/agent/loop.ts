import type { AssistantMessage, LlmRequest, StreamFn, ToolCall, ToolResultMessage } from "../providers/types.ts";
import { emptyUsage } from "../providers/event-stream.ts";
import type { AgentMessage } from "../store/entries.ts";
import { ToolArgumentError, type Tool, type ToolResult } from "../tools/tool.ts";
import type { AgentEvent } from "./events.ts";

export interface LoopDeps {
  stream: StreamFn;
  /** Looked up at each tool call, so tools registered mid-run are found. */
  tools: () => ReadonlyMap<string, Tool>;
  /** A returned promise means "slow down": the loop awaits it (stdout backpressure). */
  emit: (event: AgentEvent) => void | Promise<void>;
  /** The request for the next model call, built from everything the run has so far. */
  buildRequest: (context: readonly AgentMessage[]) => LlmRequest | Promise<LlmRequest>;
  /**
   * Whether a validated call may run (permissions); a refusal's reason goes back to the
   * model as the call's error result. Runs before `beforeToolCall`, for one call at a time
   * in call order, also when the calls then run in parallel.
   */
  gate?: (call: ToolCall, args: Record<string, unknown>, tool: Tool, signal: AbortSignal) => Promise<{ allow: true; checkedPath?: string; sandboxWaived?: true } | { allow: false; reason: string }>;
  /** May block a validated call (the reason goes back to the model) or change its input. */
  beforeToolCall?: (call: ToolCall, args: Record<string, unknown>) => Promise<{ block: true; reason: string } | { block: false; input: Record<string, unknown> }>;
  /** May change a tool's result before it is recorded. */
  afterToolResult?: (call: ToolCall, args: Record<string, unknown>, result: ToolResult) => Promise<ToolResult>;
  /** Steering messages to deliver now (the session owns the queue and its mode, and may prepare them first). */
  nextSteering: () => AgentMessage[] | Promise<AgentMessage[]>;
  nextFollowUp: () => AgentMessage[] | Promise<AgentMessage[]>;
  /** "immediate": a pending steer skips the turn's remaining tool calls. */
  interruptMode: () => "immediate" | "wait";
  hasPendingSteering: () => boolean;
  hasPendingFollowUp: () => boolean;
  cwd: string;
  /**
   * Between turns, after tool results are committed: may compact (returning the context to go
   * on with) or end the run before the next model call (a run limit).
   */
  afterTurn?: () => Promise<{ context?: AgentMessage[]; stop?: boolean } | undefined>;
}

/**
 * Run the agent from `context` with new `prompts` until the model stops calling tools
 * and no steering or follow-up is queued. Returns the messages this run added.
 */
export async function runAgent(
  context: readonly AgentMessage[],
  prompts: AgentMessage[],
  deps: LoopDeps,
  signal: AbortSignal,
): Promise<AgentMessage[]> {
  const all: AgentMessage[] = [...context];
  const added: AgentMessage[] = [];
  const emit = async (e: AgentEvent) => {
    const p = deps.emit(e);
    if (p) await p;
  };
  const push = async (m: AgentMessage) => {
    await emit({ type: "message_start", message: m });
    all.push(m);
    added.push(m);
    await emit({ type: "message_end", message: m });
  };

  await emit({ type: "agent_start" });
  // What opens the next turn: the prompts, then queued steering or follow-up messages,
  // taken right after turn_start so the queue_update lands inside the turn.
  let next: "prompts" | "steering" | "followUp" | "none" = "prompts";
  for (;;) {
    await emit({ type: "turn_start" });
    const opening = next === "prompts" ? prompts : next === "steering" ? await deps.nextSteering() : next === "followUp" ? await deps.nextFollowUp() : [];
    for (const m of opening) await push(m);
    // Steering queued before the run's first model call goes with it (the reference does the same).
    if (next === "prompts" && deps.hasPendingSteering()) for (const m of await deps.nextSteering()) await push(m);

    const assistant = await streamAssistant(all, deps, emit, signal);
    all.push(assistant);
    added.push(assistant);
    await emit({ type: "message_end", message: assistant });

    const calls = assistant.content.filter((c): c is ToolCall => c.type === "toolCall");
    const results: ToolResultMessage[] = [];
    const failed = assistant.stopReason === "error" || assistant.stopReason === "aborted";
    if (calls.length > 0 && !failed) {
      for (const r of await runToolCalls(calls, deps, emit, signal)) {
        await push(r);
        results.push(r);
      }
    }
    await emit({ type: "turn_end", message: assistant, toolResults: results });
    if (!failed && signal.aborted && calls.length > 0) {
      // Aborted while tools ran: the run ends with an aborted, empty reply in a turn of its
      // own (no request is sent), the same ending a client sees when the abort hits a stream.
      await emit({ type: "turn_start" });
      const ended = abortedReply(assistant);
      await emit({ type: "message_start", message: ended });
      all.push(ended);
      added.push(ended);
      await emit({ type: "message_end", message: ended });
      await emit({ type: "turn_end", message: ended, toolResults: [] });
    }
    if (failed || signal.aborted) break;

    if (deps.hasPendingSteering()) next = "steering";
    else if (calls.length > 0) next = "none";
    else if (deps.hasPendingFollowUp()) next = "followUp";
    else break;
    const after = await deps.afterTurn?.();
    if (after?.stop) break;
    if (after?.context) all.splice(0, all.length, ...after.context);
  }
  await emit({ type: "agent_end", messages: added });
  return added;
}

function abortedReply(previous: AssistantMessage): AssistantMessage {
  const reply: AssistantMessage = {
    role: "assistant",
    content: [],
    api: previous.api,
    provider: previous.provider,
    model: previous.model,
    usage: emptyUsage(),
    stopReason: "aborted",
    errorMessage: "The operation was aborted.",
    timestamp: Date.now(),
    durationMs: 0,
  };
  if (previous.thinkingLevel !== undefined) reply.thinkingLevel = previous.thinkingLevel;
  return reply;
}

async function streamAssistant(
  all: readonly AgentMessage[],
  deps: LoopDeps,
  emit: (e: AgentEvent) => Promise<void>,
  signal: AbortSignal,
): Promise<AssistantMessage> {
  const req = await deps.buildRequest(all);
  const stream = deps.stream(req, signal);
  const started: AssistantMessage = {
    role: "assistant",
    content: [],
    api: req.model.api,
    provider: req.model.provider,
    model: req.model.id,
    usage: emptyUsage(),
    stopReason: "stop",
    timestamp: Date.now(),
  };
  await emit({ type: "message_start", message: started });
  const t0 = performance.now();
  for await (const ev of stream) await emit({ type: "message_update", assistantMessageEvent: ev });
  const message = await stream.result();
  // As the reference records them: how long the model call took, and at which thinking level.
  message.durationMs = Math.round(performance.now() - t0);
  message.thinkingLevel = req.thinkingLevel;
  return message;
}

async function runToolCalls(
  calls: ToolCall[],
  deps: LoopDeps,
  emit: (e: AgentEvent) => Promise<void>,
  signal: AbortSignal,
): Promise<ToolResultMessage[]> {
  const tools = deps.tools();
  // In "immediate" interrupt mode tools run one at a time so a steer can skip the rest;
  // otherwise they run concurrently and their results keep the call order.
  const sequential = deps.interruptMode() === "immediate";
  const out: ToolResultMessage[] = [];
  if (sequential) {
    for (const call of calls) {
      if (signal.aborted || deps.hasPendingSteering()) {
        const reason = signal.aborted ? "Tool call skipped: the run was aborted." : "Tool call skipped: the user sent a new message.";
        await emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
        out.push(await finish(call, { content: [{ type: "text", text: reason }], isError: true }, 0, emit));
        continue;
      }
      out.push(await runOne(call, tools, deps, emit, signal, FREE_TURN));
    }
    return out;
  }
  // Each call's gate waits for the previous call's: approvals are asked in call order.
  let previous: Promise<void> = Promise.resolve();
  const running = calls.map((call) => {
    const turn = gateTurn(previous);
    previous = turn.passed;
    return runOne(call, tools, deps, emit, signal, turn);
  });
  for (const r of running) out.push(await r);
  return out;
}

/** A call's place in the gate order: `wait` for the calls before it, then `pass` (idempotent). */
interface GateTurn {
  wait: Promise<void>;
  pass: () => void;
  passed: Promise<void>;
}

const FREE_TURN: GateTurn = { wait: Promise.resolve(), pass: () => {}, passed: Promise.resolve() };

function gateTurn(wait: Promise<void>): GateTurn {
  let pass!: () => void;
  const own = new Promise<void>((r) => (pass = r));
  // A call that passes early (unknown tool, bad arguments) still keeps the calls after it behind the ones before.
  return { wait, pass, passed: Promise.all([wait, own]).then(() => undefined) };
}

async function runOne(
  call: ToolCall,
  tools: ReadonlyMap<string, Tool>,
  deps: LoopDeps,
  emit: (e: AgentEvent) => Promise<void>,
  signal: AbortSignal,
  turn: GateTurn,
): Promise<ToolResultMessage> {
  const started = performance.now();
  let result: ToolResult;
  try {
    await emit({ type: "tool_execution_start", toolCallId: call.id, toolName: call.name, args: call.arguments });
    result = await execute(call, tools, deps, emit, signal, turn);
  } finally {
    turn.pass();
  }
  return finish(call, result, performance.now() - started, emit);
}

async function finish(
  call: ToolCall,
  result: ToolResult,
  durationMs: number,
  emit: (e: AgentEvent) => Promise<void>,
): Promise<ToolResultMessage> {
  const end: ToolExecutionEnd = {
    type: "tool_execution_end",
    toolCallId: call.id,
    toolName: call.name,
    result: {
      content: result.content,
      details: result.details,
      // On the event only: the stored message has none, as in the reference.
      ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}),
    },
    isError: result.isError === true,
    durationMs: Math.round(durationMs),
  };
  await emit(end);
  return toolResultMessage(end);
}

type ToolExecutionEnd = Extract<AgentEvent, { type: "tool_execution_end" }>;

/** The result message of a finished call, from its `tool_execution_end`. */
export function toolResultMessage(end: ToolExecutionEnd): ToolResultMessage {
  const msg: ToolResultMessage = {
    role: "toolResult",
    toolCallId: end.toolCallId,
    toolName: end.toolName,
    content: end.result.content,
    isError: end.isError,
    durationMs: end.durationMs,
    timestamp: Date.now(),
  };
  if (end.result.details !== undefined) msg.details = end.result.details;
  return msg;
}

const errorResult = (text: string): ToolResult => ({ content: [{ type: "text", text }], isError: true });

/** A call a running tool makes (ToolContext.runTool): the same pipeline, events tagged with the parent's id. */
async function runNested(parent: ToolCall, n: number, target: string | Tool, input: unknown, deps: LoopDeps, emit: (e: AgentEvent) => Promise<void>, signal: AbortSignal): Promise<ToolResult> {
  const name = typeof target === "string" ? target : target.name;
  const args = (input && typeof input === "object" && !Array.isArray(input) ? input : {}) as Record<string, unknown>;
  const call: ToolCall = { type: "toolCall", id: `${parent.id}.${n}`, name, arguments: args };
  const tools = typeof target === "string" ? deps.tools() : new Map([[name, target]]);
  const started = performance.now();
  await emit({ type: "tool_execution_start", toolCallId: call.id, toolName: name, args, parentToolCallId: parent.id });
  const result = await execute(call, tools, deps, emit, signal, FREE_TURN, parent.id);
  const end = { content: result.content, details: result.details, ...(result.structuredContent !== undefined ? { structuredContent: result.structuredContent } : {}) };
  await emit({ type: "tool_execution_end", toolCallId: call.id, toolName: name, result: end, isError: result.isError === true, durationMs: Math.round(performance.now() - started), parentToolCallId: parent.id });
  return result;
}

async function execute(
  call: ToolCall,
  tools: ReadonlyMap<string, Tool>,
  deps: LoopDeps,
  emit: (e: AgentEvent) => Promise<void>,
  signal: AbortSignal,
  turn: GateTurn,
  parentToolCallId?: string,
): Promise<ToolResult> {
  const tool = tools.get(call.name);
  if (!tool) return errorResult(`Tool "${call.name}" not found. Available tools: ${[...tools.keys()].join(", ") || "none"}.`);
  if (call.argumentsError !== undefined) {
    return errorResult(`Invalid arguments for tool "${call.name}": ${call.argumentsError}. Send the complete arguments as one JSON object and call the tool again.`);
  }
  let args: unknown;
  try {
    args = await tool.parse(call.arguments);
  } catch (err) {
    const why = err instanceof ToolArgumentError || err instanceof Error ? err.message : String(err);
    return errorResult(`Invalid arguments for tool "${call.name}": ${why}. Fix the arguments and call the tool again.`);
  }
  let checkedPath: string | undefined;
  let sandboxWaived = false;
  if (deps.gate) {
    await turn.wait;
    let verdict: Awaited<ReturnType<NonNullable<LoopDeps["gate"]>>>;
    try {
      verdict = await deps.gate(call, args as Record<string, unknown>, tool, signal);
    } finally {
      turn.pass();
    }
    if (!verdict.allow) return errorResult(verdict.reason);
    checkedPath = verdict.checkedPath;
    sandboxWaived = verdict.sandboxWaived === true;
  }
  turn.pass();
  if (deps.beforeToolCall) {
    const decision = await deps.beforeToolCall(call, args as Record<string, unknown>);
    if (decision.block) return errorResult(decision.reason);
    args = decision.input;
  }
  let result: ToolResult;
  let nested = 0;
  const parent = parentToolCallId !== undefined ? { parentToolCallId } : {};
  try {
    result = await tool.execute(args, {
      signal,
      callId: call.id,
      cwd: deps.cwd,
      ...(checkedPath !== undefined ? { checkedPath } : {}),
      ...(sandboxWaived ? { sandboxWaived } : {}),
      onUpdate: (partialResult) =>
        void emit({ type: "tool_execution_update", toolCallId: call.id, toolName: call.name, args: call.arguments, partialResult, ...parent }),
      runTool: (target, input, s) => runNested(call, ++nested, target, input, deps, emit, s),
      tools: deps.tools,
    });
    if (signal.aborted && !result.isError) result = { ...result, isError: true };
  } catch (err) {
    result = errorResult(err instanceof Error ? err.message : String(err));
  }
  return deps.afterToolResult ? deps.afterToolResult(call, args as Record<string, unknown>, result) : result;
}
