import { join } from "node:path";
import type { Subprocess } from "bun";
import * as v from "valibot";
import { describeIssues, type CommandOf } from "../protocol/commands.ts";
import { EVENT_SCHEMAS, isEventType, UI_DIALOG_METHODS, type EventOf, type EventType, type ExtensionUiRequest, type WireEvent } from "../protocol/events.ts";
import type { WireAgentMessage } from "../protocol/messages.ts";
import { FailureResponseSchema, isRequestType, successSchema, type RequestType, type ResultOf, type WireFailure } from "../protocol/results.ts";
import { jsonLines } from "../rpc/jsonl.ts";

/**
 * A typed client for pion's RPC mode (`import { PionClient } from "pion/client"`): spawns
 * pion, frames stdout strictly on LF bytes, answers each command with its typed `data`,
 * and dispatches events by type. Types come from the wire schemas in src/protocol.
 */

export interface ClientSpawnOptions {
  /** The program and its leading arguments. Default: `pion` on PATH, else `bun <this repo>/src/cli.ts`. */
  command?: string[];
  /** Arguments after `--mode rpc`. */
  args?: string[];
  cwd?: string;
  /** Added to this process's environment. */
  env?: Record<string, string | undefined>;
  /** Check every record against the wire schemas; a nonconforming one is reported to `onProtocolError`. */
  validate?: boolean;
}

/** A command pion answered with `success: false`; `message` is the response's `error`. */
export class PionCommandError extends Error {
  override readonly name = "PionCommandError";
  constructor(
    readonly command: string,
    readonly response: WireFailure,
  ) {
    super(response.error);
  }
}

export type Params<T extends RequestType> = Omit<CommandOf<T>, "id" | "type">;
export type PromptResult = EventOf<"prompt_result">;
export type HostToolCall = EventOf<"host_tool_call">;
export type ToolResultPayload = CommandOf<"host_tool_result">["result"];
export type UiDialogRequest = Extract<ExtensionUiRequest, { method: (typeof UI_DIALOG_METHODS)[number] }>;
export type UiAnswer = Omit<CommandOf<"extension_ui_response">, "type" | "id">;
export type ToolApprovalRequest = EventOf<"tool_approval_request">;
export type ToolApprovalAnswer = Omit<CommandOf<"tool_approval_response">, "type" | "id">;
export type ToolExecutionEnd = EventOf<"tool_execution_end">;
/** What `result.structuredContent` of a tool_execution_end holds for the built-in bash and read tools. */
export type { BashStructured } from "../tools/bash.ts";
export type { ReadStructured } from "../tools/read.ts";
type ImageInput = NonNullable<CommandOf<"prompt">["images"]>[number];

/** What `promptAndWait` resolves with: the prompt's result and the messages of the run that delivered it. */
export type PromptOutcome =
  | { disposition: "started" | "queued"; result: PromptResult; messages: WireAgentMessage[] }
  /** An extension command or input handler took the prompt: no run, no prompt_result. */
  | { disposition: "handled"; result: null; messages: [] };

export interface HostToolContext {
  /** The host_tool_call id. */
  id: string;
  toolCallId: string;
  /** Aborted when pion sends host_tool_cancel for this call. */
  signal: AbortSignal;
  /** Send a partial result (the whole result so far). */
  update(partial: ToolResultPayload): void;
}

type Handler<T extends EventType> = (event: EventOf<T>) => void;
type AnyHandler = (event: WireEvent) => void;
interface Pending {
  command: string;
  resolve: (data: unknown) => void;
  reject: (err: Error) => void;
}

const REPO_CLI = join(import.meta.dir, "../cli.ts");
const STDERR_KEEP = 64 * 1024;
const isRecord = (x: unknown): x is Record<string, unknown> => typeof x === "object" && x !== null && !Array.isArray(x);

export class PionClient {
  /** The tail of pion's stderr (its logs), for error reports. */
  stderr = "";
  /** Resolves with the exit code once pion exited and its output was read. */
  readonly exited: Promise<number>;

  private readonly proc: Subprocess<"pipe", "pipe", "pipe">;
  private readonly validate: boolean;
  private readonly pending = new Map<string, Pending>();
  private readonly handlers = new Map<EventType, Set<AnyHandler>>();
  private readonly protocolErrorHandlers = new Set<(problem: string, record: unknown) => void>();
  /** promptAndWait calls by command id, with the number of runs settled when each was sent. */
  private readonly promptWaiters = new Map<string, { settledBefore: number; resolve: (result: PromptResult, messages: WireAgentMessage[]) => void }>();
  private readonly hostTools = new Map<string, (args: unknown, ctx: HostToolContext) => ToolResultPayload | Promise<ToolResultPayload>>();
  private readonly hostCalls = new Map<string, AbortController>();
  private uiHandler: ((req: UiDialogRequest) => UiAnswer | undefined | Promise<UiAnswer | undefined>) | undefined;
  private approvalHandler: ((req: ToolApprovalRequest) => ToolApprovalAnswer | Promise<ToolApprovalAnswer>) | undefined;
  private runMessages: WireAgentMessage[] = [];
  private runOpen = false;
  private runsSettled = 0;
  private seq = 0;
  private closed = false;

  private constructor(proc: Subprocess<"pipe", "pipe", "pipe">, validate: boolean) {
    this.proc = proc;
    this.validate = validate;
    const stdoutDone = this.readStdout();
    void this.readStderr();
    this.exited = proc.exited.then(async (code) => {
      await stdoutDone;
      this.closed = true;
      for (const [id, p] of this.pending) p.reject(new Error(`pion exited (code ${code}) before answering ${p.command}${this.stderrTail()}`));
      this.pending.clear();
      return code;
    });
  }

  /** Start `pion --mode rpc` (plus `args`). */
  static spawn(opts: ClientSpawnOptions = {}): PionClient {
    const command = opts.command ?? defaultCommand();
    const proc = Bun.spawn([...command, "--mode", "rpc", ...(opts.args ?? [])], {
      cwd: opts.cwd,
      env: { ...process.env, ...opts.env },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    return new PionClient(proc, opts.validate === true);
  }

  get pid(): number {
    return this.proc.pid;
  }

  // ---- events

  /** Subscribe to one record type; returns the unsubscribe function. */
  on<T extends EventType>(type: T, handler: Handler<T>): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    const h = handler as AnyHandler;
    set.add(h);
    return () => void set.delete(h);
  }

  /** Records that were not JSON, or (with `validate`) did not match the wire schemas. */
  onProtocolError(handler: (problem: string, record: unknown) => void): () => void {
    this.protocolErrorHandlers.add(handler);
    return () => void this.protocolErrorHandlers.delete(handler);
  }

  /**
   * Answer `host_tool_call`s for `name` (register its definition with `setHostTools`).
   * A throw becomes an `isError` result carrying the message.
   */
  onHostTool(name: string, handler: (args: unknown, ctx: HostToolContext) => ToolResultPayload | Promise<ToolResultPayload>): () => void {
    this.hostTools.set(name, handler);
    return () => void this.hostTools.delete(name);
  }

  /**
   * Answer extension dialogs (select, confirm, input, editor). Return the answer, or
   * undefined to cancel. Fire-and-forget requests (notify, setStatus...) arrive through
   * `on("extension_ui_request")`.
   */
  onUiRequest(handler: (req: UiDialogRequest) => UiAnswer | undefined | Promise<UiAnswer | undefined>): () => void {
    this.uiHandler = handler;
    return () => {
      if (this.uiHandler === handler) this.uiHandler = undefined;
    };
  }

  /**
   * Answer tool approvals (`--permission-mode ask`, ask rules). A handler that throws
   * denies the call with the error's message; without a handler requests stay unanswered.
   */
  onToolApproval(handler: (req: ToolApprovalRequest) => ToolApprovalAnswer | Promise<ToolApprovalAnswer>): () => void {
    this.approvalHandler = handler;
    return () => {
      if (this.approvalHandler === handler) this.approvalHandler = undefined;
    };
  }

  // ---- commands

  /** Send any command and resolve with its response's `data`; rejects with PionCommandError on failure. */
  request<T extends RequestType>(type: T, params: Params<T>): Promise<ResultOf<T>> {
    return this.send(type, params, `c${++this.seq}`);
  }

  private send<T extends RequestType>(type: T, params: Params<T>, id: string): Promise<ResultOf<T>> {
    if (this.closed) return Promise.reject(new Error(`pion has exited; cannot send ${type}`));
    return new Promise<ResultOf<T>>((resolve, reject) => {
      this.pending.set(id, { command: type, resolve: resolve as (data: unknown) => void, reject });
      this.write({ ...params, id, type });
    });
  }

  /**
   * Prompt and wait until the run that delivers the message settles. Resolves with the
   * prompt's `prompt_result` and the messages of that run (every `agent_end` of it).
   */
  async promptAndWait(
    message: string,
    opts: { images?: ImageInput[]; streamingBehavior?: "steer" | "followUp" } = {},
  ): Promise<PromptOutcome> {
    const id = `p${++this.seq}`;
    const settled = new Promise<{ result: PromptResult; messages: WireAgentMessage[] }>((resolve) => {
      this.promptWaiters.set(id, { settledBefore: this.runsSettled, resolve: (result, messages) => resolve({ result, messages }) });
    });
    let ack: ResultOf<"prompt">;
    try {
      ack = await this.send("prompt", { message, ...opts }, id);
    } catch (err) {
      this.promptWaiters.delete(id);
      throw err;
    }
    if (ack.disposition === "handled") {
      this.promptWaiters.delete(id);
      return { disposition: "handled", result: null, messages: [] };
    }
    const { result, messages } = await settled;
    return { disposition: ack.disposition, result, messages };
  }

  prompt = (message: string, opts: { images?: ImageInput[]; streamingBehavior?: "steer" | "followUp" } = {}) =>
    this.request("prompt", { message, ...opts });
  steer = (message: string, images?: ImageInput[]) => this.request("steer", { message, images });
  followUp = (message: string, images?: ImageInput[]) => this.request("follow_up", { message, images });
  abort = () => this.request("abort", {});
  abortAndPrompt = (message: string, images?: ImageInput[]) => this.request("abort_and_prompt", { message, images });
  newSession = (parentSession?: string) => this.request("new_session", { parentSession });
  getState = () => this.request("get_state", {});
  getMessages = () => this.request("get_messages", {});
  setModel = (provider: string, modelId: string) => this.request("set_model", { provider, modelId });
  cycleModel = () => this.request("cycle_model", {});
  getAvailableModels = () => this.request("get_available_models", {});
  setThinkingLevel = (level: Params<"set_thinking_level">["level"]) => this.request("set_thinking_level", { level });
  cycleThinkingLevel = () => this.request("cycle_thinking_level", {});
  getAvailableThinkingLevels = () => this.request("get_available_thinking_levels", {});
  setSteeringMode = (mode: Params<"set_steering_mode">["mode"]) => this.request("set_steering_mode", { mode });
  setFollowUpMode = (mode: Params<"set_follow_up_mode">["mode"]) => this.request("set_follow_up_mode", { mode });
  setInterruptMode = (mode: Params<"set_interrupt_mode">["mode"]) => this.request("set_interrupt_mode", { mode });
  clearQueue = () => this.request("clear_queue", {});
  compact = (customInstructions?: string) => this.request("compact", { customInstructions });
  setAutoCompaction = (enabled: boolean) => this.request("set_auto_compaction", { enabled });
  setAutoRetry = (enabled: boolean) => this.request("set_auto_retry", { enabled });
  abortRetry = () => this.request("abort_retry", {});
  bash = (command: string, opts: { excludeFromContext?: boolean } = {}) => this.request("bash", { command, ...opts });
  abortBash = () => this.request("abort_bash", {});
  getSessionStats = () => this.request("get_session_stats", {});
  exportHtml = (outputPath?: string) => this.request("export_html", { outputPath });
  switchSession = (sessionPath: string) => this.request("switch_session", { sessionPath });
  fork = (entryId: string) => this.request("fork", { entryId });
  branch = (entryId: string) => this.request("branch", { entryId });
  clone = () => this.request("clone", {});
  getForkMessages = () => this.request("get_fork_messages", {});
  getBranchMessages = () => this.request("get_branch_messages", {});
  getEntries = (opts: Params<"get_entries"> = {}) => this.request("get_entries", opts);
  getTree = () => this.request("get_tree", {});
  getLastAssistantText = () => this.request("get_last_assistant_text", {});
  setSessionName = (name: string) => this.request("set_session_name", { name });
  getCommands = () => this.request("get_commands", {});
  getCapabilities = () => this.request("get_capabilities", {});
  listSessions = (opts: Params<"list_sessions"> = {}) => this.request("list_sessions", opts);
  searchSessions = (query: string, opts: Omit<Params<"search_sessions">, "query"> = {}) => this.request("search_sessions", { query, ...opts });
  setTodos = (phases: Params<"set_todos">["phases"]) => this.request("set_todos", { phases });
  setHostTools = (tools: Params<"set_host_tools">["tools"]) => this.request("set_host_tools", { tools });

  /** End stdin (pion lets a running prompt finish and persist), wait for exit, return the exit code. */
  async close(): Promise<number> {
    if (!this.closed) {
      try {
        this.proc.stdin.end();
      } catch {
        // already closed by the process exiting
      }
    }
    return this.exited;
  }

  // ---- plumbing

  private write(record: object): void {
    this.proc.stdin.write(`${JSON.stringify(record)}\n`);
    this.proc.stdin.flush();
  }

  private stderrTail(): string {
    const tail = this.stderr.trim().split("\n").slice(-5).join("\n");
    return tail ? `\n${tail}` : "";
  }

  private reportProtocolError(problem: string, record: unknown): void {
    for (const h of this.protocolErrorHandlers) h(problem, record);
  }

  private async readStdout(): Promise<void> {
    for await (const rec of jsonLines(this.proc.stdout)) {
      if ("error" in rec) {
        this.reportProtocolError(rec.error, undefined);
        continue;
      }
      if (rec.line === "") continue;
      let parsed: unknown;
      try {
        parsed = JSON.parse(rec.line);
      } catch (err) {
        this.reportProtocolError(`not JSON: ${err instanceof Error ? err.message : String(err)}`, rec.line);
        continue;
      }
      this.dispatch(parsed);
    }
  }

  private async readStderr(): Promise<void> {
    const dec = new TextDecoder();
    for await (const chunk of this.proc.stderr) {
      this.stderr += dec.decode(chunk, { stream: true });
      if (this.stderr.length > STDERR_KEEP) this.stderr = this.stderr.slice(-STDERR_KEEP);
    }
  }

  private dispatch(rec: unknown): void {
    if (!isRecord(rec) || typeof rec.type !== "string") {
      this.reportProtocolError("a record without a type", rec);
      return;
    }
    if (rec.type === "response") {
      this.onResponse(rec);
      return;
    }
    const type = rec.type;
    if (!isEventType(type)) {
      this.reportProtocolError(`unknown record type ${type}`, rec);
      return;
    }
    if (this.validate) {
      const r = v.safeParse(EVENT_SCHEMAS[type], rec);
      if (!r.success) this.reportProtocolError(`${type}: ${describeIssues(r.issues)}`, rec);
    }
    // Checked by type above (and by the schemas when `validate` is on): pion writes these records from the same schemas.
    const event = rec as WireEvent;
    this.track(event);
    for (const h of this.handlers.get(type) ?? []) h(event);
  }

  private onResponse(rec: Record<string, unknown>): void {
    const id = typeof rec.id === "string" ? rec.id : undefined;
    const p = id === undefined ? undefined : this.pending.get(id);
    if (this.validate) {
      const command = typeof rec.command === "string" ? rec.command : "";
      const schema = rec.success === false ? FailureResponseSchema : isRequestType(command) ? successSchema(command) : undefined;
      const r = schema ? v.safeParse(schema, rec) : undefined;
      if (!r) this.reportProtocolError(`a response for unknown command ${command}`, rec);
      else if (!r.success) this.reportProtocolError(`response ${command}: ${describeIssues(r.issues)}`, rec);
    }
    if (!p || id === undefined) {
      if (rec.success === false) this.reportProtocolError(`an error response without a pending command: ${String(rec.error)}`, rec);
      return;
    }
    this.pending.delete(id);
    if (rec.success === true) p.resolve(rec.data);
    else {
      const failure: WireFailure = { type: "response", success: false, error: typeof rec.error === "string" ? rec.error : "unknown error" };
      if (typeof rec.command === "string") failure.command = rec.command;
      failure.id = id;
      p.reject(new PionCommandError(p.command, failure));
    }
  }

  /** Run bookkeeping for promptAndWait, and the host tool and UI helpers. */
  private track(e: WireEvent): void {
    switch (e.type) {
      case "agent_start":
        if (!this.runOpen) this.runMessages = [];
        this.runOpen = true;
        break;
      case "agent_end":
        this.runMessages.push(...e.messages);
        break;
      case "agent_settled":
        this.runOpen = false;
        this.runsSettled++;
        break;
      case "prompt_result": {
        const waiter = this.promptWaiters.get(e.id);
        if (waiter) {
          this.promptWaiters.delete(e.id);
          // A result inside an open run, or before any run settled, is a queued prompt that clear_queue dropped.
          const delivered = !this.runOpen && this.runsSettled > waiter.settledBefore;
          waiter.resolve(e, delivered ? [...this.runMessages] : []);
        }
        break;
      }
      case "host_tool_call":
        this.answerHostTool(e);
        break;
      case "host_tool_cancel":
        this.hostCalls.get(e.targetId)?.abort();
        break;
      case "extension_ui_request":
        if (isDialog(e)) this.answerUi(e);
        break;
      case "tool_approval_request":
        this.answerApproval(e);
        break;
    }
  }

  private answerApproval(req: ToolApprovalRequest): void {
    const handler = this.approvalHandler;
    if (!handler) return;
    void (async () => {
      let answer: ToolApprovalAnswer;
      try {
        answer = await handler(req);
      } catch (err) {
        answer = { decision: "deny", message: err instanceof Error ? err.message : String(err) };
      }
      const frame: CommandOf<"tool_approval_response"> = { type: "tool_approval_response", id: req.id, ...answer };
      if (!this.closed) this.write(frame);
    })();
  }

  private answerHostTool(call: HostToolCall): void {
    const handler = this.hostTools.get(call.toolName);
    if (!handler) return;
    const controller = new AbortController();
    this.hostCalls.set(call.id, controller);
    const ctx: HostToolContext = {
      id: call.id,
      toolCallId: call.toolCallId,
      signal: controller.signal,
      update: (partialResult) => {
        if (!controller.signal.aborted) this.write({ type: "host_tool_update", id: call.id, partialResult });
      },
    };
    void (async () => {
      let frame: CommandOf<"host_tool_result">;
      try {
        frame = { type: "host_tool_result", id: call.id, result: await handler(call.arguments, ctx) };
      } catch (err) {
        const text = err instanceof Error ? err.message : String(err);
        frame = { type: "host_tool_result", id: call.id, result: { content: [{ type: "text", text }] }, isError: true };
      }
      this.hostCalls.delete(call.id);
      if (!controller.signal.aborted && !this.closed) this.write(frame);
    })();
  }

  private answerUi(req: UiDialogRequest): void {
    const handler = this.uiHandler;
    if (!handler) return;
    void (async () => {
      let answer: UiAnswer | undefined;
      try {
        answer = await handler(req);
      } catch {
        answer = undefined;
      }
      const frame: CommandOf<"extension_ui_response"> = { type: "extension_ui_response", id: req.id, ...(answer ?? { cancelled: true }) };
      if (!this.closed) this.write(frame);
    })();
  }
}

function isDialog(req: ExtensionUiRequest): req is UiDialogRequest {
  return (UI_DIALOG_METHODS as readonly string[]).includes(req.method);
}

function defaultCommand(): string[] {
  const onPath = Bun.which("pion");
  return onPath ? [onPath] : ["bun", REPO_CLI];
}
