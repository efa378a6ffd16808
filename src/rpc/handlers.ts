import { VERSION } from "../config.ts";
import type { HostTools } from "../extensions/host-tools.ts";
import type { ProjectTrust } from "../trust/project-trust.ts";
import type { PermissionGate } from "../permissions/gate.ts";
import type { RpcApprovals } from "./approvals.ts";
import type { ExtensionRunner } from "../extensions/types.ts";
import type { ImageContent } from "../providers/types.ts";
import type { Disposition } from "../session/session-types.ts";
import { COMMAND_TYPES, SILENT_FRAMES } from "../protocol/commands.ts";
import type { Model } from "../providers/types.ts";
import { LLAMA_PROVIDER } from "../providers/llama-cpp.ts";
import { normalizeTodos } from "../tools/todo.ts";
import { Background } from "../protocol/responses.ts";
import { EncodedEvent, JsonBytesEscaper } from "../util/json-bytes.ts";
import type { AgentSession } from "../session/session.ts";
import { PionError } from "../util/errors.ts";
import type { Handlers } from "./server.ts";
import { bashExecutionMessage } from "../session/host-shell.ts";
import { sessionHandlers, type SessionHandlerContext } from "./session-handlers.ts";

export interface HandlerContext extends SessionHandlerContext {
  session: AgentSession;
  hostTools: HostTools;
  commands: () => unknown[];
  /** The reference's built-in commands (`/mcp`, `/llama`), after the extensions' own. */
  builtins?: { run(text: string): Promise<boolean> | false };
  extensions?: ExtensionRunner;
  /** Re-reads the models of providers found at run time (llama.cpp); `true`: the provider was named. */
  refreshModels?: (required: boolean) => Promise<void>;
  /** Models `cycle_model` goes through (from --models), empty when not scoped. */
  scopedModels: Model[];
  /** Decided once at start-up for the process's cwd. */
  projectTrust: ProjectTrust;
  /** Each MCP server's state (get_mcp_status). */
  mcpStatus?: () => unknown[];
  permissions?: PermissionGate;
  /** pion's sandbox around the model's commands; absent when off. */
  sandbox?: { policy: { mode: "read-only" | "workspace-write"; network: boolean } };
  /** Answers tool_approval_request frames; absent when nothing can ask (auto mode, no rules). */
  approvals?: RpcApprovals;
}

/** One small function per command; each returns the response's `data` or throws. */
export function createHandlers(ctx: HandlerContext): Handlers {
  const s = () => ctx.session;
  return {
    prompt: (c) =>
      withInput(ctx, c.message, c.images, true, (text, images) =>
        s().prompt(text, images, c.streamingBehavior, c.id, { maxTurns: c.maxTurns, maxCostUsd: c.maxCostUsd }),
      ),
    steer: (c) => withInput(ctx, c.message, c.images, false, (text, images) => s().enqueue("steer", text, images, c.id)),
    follow_up: (c) => withInput(ctx, c.message, c.images, false, (text, images) => s().enqueue("followUp", text, images, c.id)),
    // Idle: answered at once, in line with the records around it; busy: once the session is idle.
    abort: () => (s().isBusy ? s().abort() : undefined),
    abort_and_prompt: (c) => {
      const start = () => ({ disposition: s().prompt(c.message, c.images, undefined, c.id) });
      return s().isBusy ? s().abort().then(start) : start();
    },
    get_state: () => getState(s(), ctx.projectTrust, ctx.permissions, ctx.sandbox),
    set_todos: (c) => ({ phases: s().setTodos(normalizeTodos(c.phases)) }),
    set_host_tools: (c) => ({ toolNames: ctx.hostTools.set(c.tools) }),

    set_model: async (c) => {
      if (c.provider === LLAMA_PROVIDER) await ctx.refreshModels?.(true);
      const model = s().availableModels().find((m) => m.provider === c.provider && m.id === c.modelId);
      if (!model) throw new PionError(`Model not found: ${c.provider}/${c.modelId}`, "not_found");
      s().setModel(model);
      return model;
    },
    cycle_model: () => {
      const scoped = ctx.scopedModels.length > 0;
      const pool = scoped ? ctx.scopedModels : s().availableModels();
      if (pool.length <= 1) return null;
      const cur = s().model;
      const i = cur ? pool.findIndex((m) => m.provider === cur.provider && m.id === cur.id) : -1;
      const next = pool[(i + 1) % pool.length]!;
      s().setModel(next);
      return { model: next, thinkingLevel: s().thinkingLevel, isScoped: scoped };
    },
    get_available_models: async () => {
      await ctx.refreshModels?.(false);
      return { models: s().availableModels() };
    },

    set_thinking_level: (c) => {
      s().setThinkingLevel(c.level);
    },
    cycle_thinking_level: () => {
      const levels = s().availableThinkingLevels();
      if (levels.length <= 1) return null;
      const next = levels[(levels.indexOf(s().thinkingLevel) + 1) % levels.length]!;
      return { level: s().setThinkingLevel(next) };
    },
    get_available_thinking_levels: () => ({ levels: s().availableThinkingLevels() }),

    set_steering_mode: (c) => {
      s().queues.steeringMode = c.mode;
    },
    set_follow_up_mode: (c) => {
      s().queues.followUpMode = c.mode;
    },
    set_interrupt_mode: (c) => {
      s().interruptMode = c.mode;
    },
    clear_queue: () => s().clearQueues(),

    compact: (c) => new Background(s().compactNow(c.customInstructions)),
    set_auto_compaction: (c) => {
      s().autoCompaction = c.enabled;
    },
    set_auto_retry: (c) => {
      s().autoRetry = c.enabled;
    },
    abort_retry: () => {
      s().abortRetry();
    },

    bash: (c) => {
      // Output goes from the command's bytes to stdout without becoming JS strings: each
      // chunk is escaped into a bash_execution_update line (memory stays flat at 1 GB).
      const escaper = new JsonBytesEscaper();
      const prefix = ENC.encode(`{"type":"bash_execution_update",${c.id === undefined ? "" : `"id":${JSON.stringify(c.id)},`}"delta":"`);
      const empty = prefix.length + BASH_SUFFIX.length;
      const update = (chunk: Uint8Array, final: boolean) => {
        const line = escaper.line(prefix, chunk, BASH_SUFFIX, final);
        if (line.length > empty) return ctx.session.publish(new EncodedEvent("bash_execution_update", line));
      };
      const exclude = c.excludeFromContext === true;
      const work = (async () => {
        // Extensions may run it elsewhere (user_bash operations) or answer it themselves.
        const decided = await ctx.extensions?.onUserBash({ command: c.command, excludeFromContext: exclude, cwd: ctx.cwd });
        if (decided && "error" in decided) throw new PionError(decided.error, "extension_error");
        const m =
          decided && "result" in decided
            ? s().recordBash(bashExecutionMessage(c.command, exclude, decided.result))
            : await s().runBash(c.command, exclude, update, decided?.exec);
        const data: Record<string, unknown> = { output: m.output, exitCode: m.exitCode, cancelled: m.cancelled, truncated: m.truncated };
        if (m.fullOutputPath) data.fullOutputPath = m.fullOutputPath;
        return data;
      })();
      return new Background(work);
    },
    abort_bash: () => {
      s().abortBash();
    },

    get_last_assistant_text: () => ({ text: s().lastAssistantText() }),
    set_session_name: (c) => {
      s().setName(c.name);
    },
    get_commands: () => ({ commands: ctx.commands() }),
    get_mcp_status: () => ({ servers: ctx.mcpStatus?.() ?? [] }),
    get_capabilities: async () => capabilities(Object.keys((await import("../protocol/events.ts")).EVENT_SCHEMAS)),

    extension_ui_response: (c) => ctx.extensions?.handleUiResponse(c),
    host_tool_update: (c) => ctx.hostTools.update(c.id, c.partialResult),
    host_tool_result: (c) => ctx.hostTools.result(c.id, c.result, c.isError),
    tool_approval_response: (c) => ctx.approvals?.respond(c),
    // Last: tsc reports a command defined here as well (TS2783), instead of one silently replacing the other.
    ...sessionHandlers(ctx),
  };
}

function getState(s: AgentSession, trust: ProjectTrust, permissions: PermissionGate | undefined, sandbox: HandlerContext["sandbox"]) {
  const state: Record<string, unknown> = {
    model: s.model ?? null,
    thinkingLevel: s.thinkingLevel,
    isStreaming: s.isStreaming,
    isCompacting: s.isCompacting,
    steeringMode: s.queues.steeringMode,
    followUpMode: s.queues.followUpMode,
  };
  if (s.file) state.sessionFile = s.file;
  state.sessionId = s.sessionId;
  if (s.name) state.sessionName = s.name;
  state.autoCompactionEnabled = s.autoCompaction;
  state.messageCount = s.messageCount();
  state.pendingMessageCount = s.queues.size;
  // spec 002 calls it queuedMessageCount; both are written so hosts of either document work
  state.queuedMessageCount = s.queues.size;
  state.interruptMode = s.interruptMode;
  state.todoPhases = s.todos;
  state.projectTrust = trust.state;
  state.permissionMode = permissions?.mode ?? "auto";
  state.sandboxMode = sandbox?.policy.mode ?? "off";
  state.sandboxNetwork = sandbox ? sandbox.policy.network : true;
  return state;
}

const ENC = new TextEncoder();
const BASH_SUFFIX = ENC.encode('"}\n');

/**
 * The input path of prompt, steer and follow_up: an extension command, else a built-in one
 * (`/mcp`, `/llama`), runs at once (even during a run; its response waits for it without
 * holding the queue); `input` handlers may transform the text or handle it; then the session gets it.
 */
async function withInput(
  ctx: HandlerContext,
  message: string,
  images: ImageContent[] | undefined,
  allowCommands: boolean,
  deliver: (text: string, images: ImageContent[] | undefined) => Disposition,
): Promise<unknown> {
  const ext = ctx.extensions;
  if (allowCommands && message.startsWith("/")) {
    const name = message.slice(1).split(/\s/, 1)[0];
    if (ext?.commands().some((c) => c.name === name)) {
      return new Background(ext.runCommand(message).then(() => ({ disposition: "handled" })));
    }
    const builtin = ctx.builtins?.run(message);
    if (builtin) return new Background(builtin.then(() => ({ disposition: "handled" })));
  }
  if (!ext) return { disposition: deliver(message, images) };
  const input = await ext.onInput(message, images, "rpc");
  if (input.action === "handled") return { disposition: "handled" };
  return { disposition: deliver(input.text, input.images as ImageContent[] | undefined) };
}

/**
 * What this pion speaks, so a client can adapt without guessing. `events` comes from the
 * wire schemas (loaded on demand: they are not needed on the start-up path).
 */
function capabilities(events: string[]) {
  return {
    name: "pion",
    version: VERSION,
    protocols: [
      { id: "rpc", document: "000", description: "RPC mode: commands, responses, events, extension UI sub-protocol" },
      { id: "rpc-fork", document: "002", description: "abort_and_prompt, set_todos, set_host_tools, set_interrupt_mode, branch, get_branch_messages" },
      { id: "json", document: "004", description: "JSON event-stream mode" },
    ],
    commands: COMMAND_TYPES.filter((c) => !SILENT_FRAMES.has(c)),
    inboundFrames: [...SILENT_FRAMES],
    events,
    features: {
      sessionSearch: true,
      sessionList: true,
      entryPaging: true,
      entryIds: true,
      hostTools: true,
      todos: true,
      promptResult: true,
      runTotals: true,
      scriptedProvider: true,
      orderedCommands: true,
      projectTrust: true,
      mcp: true,
      // Processes pion starts get its environment minus its credentials (settings shellEnv).
      shellEnv: true,
      // Known credential values are masked in tool results, events, sessions and exports.
      secretMasking: true,
      toolApprovals: true,
      // The model's commands can run under bubblewrap and seccomp (--sandbox, settings sandbox).
      sandbox: true,
    },
  };
}

