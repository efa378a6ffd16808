import type { HostTools } from "../extensions/host-tools.ts";
import type { Model } from "../providers/types.ts";
import { normalizeTodos } from "../tools/todo.ts";
import { Background } from "../protocol/responses.ts";
import type { AgentSession } from "../session/session.ts";
import { PionError } from "../util/errors.ts";
import type { Handlers } from "./server.ts";
import { sessionHandlers, type SessionHandlerContext } from "./session-handlers.ts";

export interface HandlerContext extends SessionHandlerContext {
  session: AgentSession;
  hostTools: HostTools;
  commands: () => unknown[];
  /** Models `cycle_model` goes through (from --models), empty when not scoped. */
  scopedModels: Model[];
}

const notYet = (type: string) => () => {
  throw new PionError(`Command "${type}" is not implemented yet`, "not_implemented");
};

/** One small function per command; each returns the response's `data` or throws. */
export function createHandlers(ctx: HandlerContext): Handlers {
  const s = () => ctx.session;
  return {
    ...sessionHandlers(ctx),
    prompt: (c) => ({ disposition: s().prompt(c.message, c.images, c.streamingBehavior) }),
    steer: (c) => ({ disposition: s().enqueue("steer", c.message, c.images) }),
    follow_up: (c) => ({ disposition: s().enqueue("followUp", c.message, c.images) }),
    abort: async () => {
      await s().abort();
    },
    abort_and_prompt: async (c) => {
      await s().abort();
      return { disposition: s().prompt(c.message, c.images) };
    },
    get_state: () => getState(s()),
    get_messages: () => ({ messages: s().messages() }),
    set_todos: (c) => ({ phases: s().setTodos(normalizeTodos(c.phases)) }),
    set_host_tools: (c) => ({ toolNames: ctx.hostTools.set(c.tools) }),

    set_model: (c) => {
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
    get_available_models: () => ({ models: s().availableModels() }),

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
    clear_queue: () => s().queues.clear(),

    compact: notYet("compact"),
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
      const update = (delta: string) => ctx.session.publish({ type: "bash_execution_update", ...(c.id === undefined ? {} : { id: c.id }), delta });
      const work = s().runBash(c.command, c.excludeFromContext === true, update).then((m) => {
        const data: Record<string, unknown> = { output: m.output, exitCode: m.exitCode, cancelled: m.cancelled, truncated: m.truncated };
        if (m.fullOutputPath) data.fullOutputPath = m.fullOutputPath;
        return data;
      });
      return new Background(work);
    },
    abort_bash: () => {
      s().abortBash();
    },

    export_html: notYet("export_html"),
    get_last_assistant_text: () => ({ text: s().lastAssistantText() }),
    set_session_name: (c) => {
      s().setName(c.name);
    },
    get_commands: () => ({ commands: ctx.commands() }),

    extension_ui_response: () => undefined,
    host_tool_update: (c) => ctx.hostTools.update(c.id, c.partialResult),
    host_tool_result: (c) => ctx.hostTools.result(c.id, c.result, c.isError),
  };
}

function getState(s: AgentSession) {
  const state: Record<string, unknown> = {
    model: s.model ?? null,
    thinkingLevel: s.thinkingLevel,
    isStreaming: s.isStreaming,
    isCompacting: false,
    steeringMode: s.queues.steeringMode,
    followUpMode: s.queues.followUpMode,
  };
  if (s.file) state.sessionFile = s.file;
  state.sessionId = s.sessionId;
  if (s.name) state.sessionName = s.name;
  state.autoCompactionEnabled = s.autoCompaction;
  state.messageCount = s.messageCount();
  state.pendingMessageCount = s.queues.size;
  state.interruptMode = s.interruptMode;
  state.todoPhases = s.todos;
  return state;
}
