/**
 * The SessionControl extensions reach through their port (src/extensions/context-members.ts):
 * reads of the session tree, compaction, the model and thinking level, the active tools, and the
 * session commands a host could send (new_session, switch_session, fork) run through the same
 * handlers as the host's, so extensions see the same session_before_* / session_start events.
 */
import { builtinSource } from "../resources/source-info.ts";
import type { ExtensionRunner, SessionControl } from "../extensions/types.ts";
import { sessionHandlers, type SessionHandlerContext } from "../rpc/session-handlers.ts";
import type { AgentSession } from "../session/session.ts";
import { sessionStats } from "../session/stats.ts";
import type { SessionHeader } from "../store/entries.ts";
import type { SessionStore } from "../store/store.ts";
import type { Model, ThinkingLevel } from "../providers/types.ts";
import type { SessionRef } from "./extension-port.ts";

export interface ControlDeps {
  session: AgentSession;
  store: SessionStore;
  fileFor: (h: SessionHeader) => string | undefined;
  extensions?: ExtensionRunner;
  cwd: string;
  scopedModels?: Model[];
  /** `ctx.reload()` (compose-reload.ts: settings, extensions and resources again). */
  reload?: () => Promise<void>;
  /** Settings, resources and new extension instances around a session change (SessionHandlerContext). */
  renewal?: SessionHandlerContext["renewal"];
}

/** Chosen with `setActiveTools`, else every tool but those registered inactive. */
export const isActive = (ref: Pick<SessionRef, "activeTools" | "inactiveTools">, name: string): boolean =>
  ref.activeTools ? ref.activeTools.has(name) : !ref.inactiveTools?.has(name);

export function sessionControl(ref: SessionRef, deps: ControlDeps): SessionControl {
  const s = deps.session;
  const handlers = sessionHandlers(deps);
  const commands: Record<string, (args: Record<string, unknown>) => Promise<unknown>> = {
    new_session: (a) => handlers.new_session({ type: "new_session", ...a } as Parameters<typeof handlers.new_session>[0]),
    switch_session: (a) => handlers.switch_session({ type: "switch_session", ...a } as Parameters<typeof handlers.switch_session>[0]),
    fork: (a) => handlers.fork({ type: "fork", ...a } as Parameters<typeof handlers.fork>[0]),
  };
  const byId = () => new Map(s.entries().map((e) => [e.id, e]));
  const current = () => {
    ref.currentTools?.();
    return ref.allTools ?? new Map();
  };
  return {
    reload: async () => {
      if (!deps.reload) throw new Error("ctx.reload: nothing to reload in this process");
      await deps.reload();
    },
    header: () => s.header,
    file: () => s.file,
    sessionId: () => s.sessionId,
    leafId: () => s.leaf,
    entries: () => s.entries(),
    entry: (id) => s.getEntry(id),
    branch: (fromId) => {
      if (fromId === undefined) return s.branchPath();
      const map = byId();
      const out = [];
      for (let e = map.get(fromId); e; e = e.parentId ? map.get(e.parentId) : undefined) out.push(e);
      return out.reverse();
    },
    name: () => s.name,
    systemPrompt: () => s.modelContext().systemPrompt,
    contextUsage: () => sessionStats(s.entries(), s.branchPath(), s.model).contextUsage,
    compact: (instructions) => s.compactNow(instructions),
    thinkingLevel: () => s.thinkingLevel,
    setThinkingLevel: (level) => void s.setThinkingLevel(level as ThinkingLevel),
    setModel: (provider, id) => {
      const model = s.availableModels().find((m) => m.provider === provider && m.id === id);
      if (!model) return false;
      s.setModel(model);
      return true;
    },
    activeTools: () => [...current().keys()].filter((n) => isActive(ref, n)),
    allTools: () =>
      [...current().values()].map((t) => {
        const guidelines = (t as { promptGuidelines?: unknown }).promptGuidelines;
        return { name: t.name, description: t.description, parameters: t.parameters, ...(Array.isArray(guidelines) ? { promptGuidelines: guidelines } : {}), sourceInfo: ref.toolSources?.get(t.name) ?? builtinSource(t.name) };
      }),
    setActiveTools: (names) => {
      ref.activeTools = new Set(names);
    },
    command: async (type, args) => {
      const run = commands[type];
      if (!run) throw new Error(`unknown session command ${type}`);
      return run(args);
    },
    navigate: (targetId, options) => s.navigateTree(targetId, options),
    signal: () => s.runSignal,
    apiKeyAndHeaders: (provider) => ref.models?.requestAuth?.(provider) ?? Promise.resolve({}),
    scopedModels: () => deps.scopedModels ?? [],
  };
}
