/**
 * The ExtensionSessionPort of a composed session: what extensions may do to it. Extensions
 * load before the session exists, so everything is resolved through `ref` when called; frames
 * they write meanwhile wait in `ref.early`.
 */
import type { SourceInfo } from "../resources/source-info.ts";
import type { CredentialGuard } from "../credentials/guard.ts";
import type { ExtensionMcpHost, ExtensionSessionPort, ModelLookup, SessionControl, SlashCommandInfo } from "../extensions/types.ts";
import type { Tool } from "../tools/tool.ts";
import { isActive, sessionControl, type ControlDeps } from "./session-control.ts";
import type { DialogHost } from "../extensions/ui-bridge.ts";
import type { AgentSession } from "../session/session.ts";
import type { ExtensionFrame } from "../session/session-types.ts";
import type { BashSandbox } from "../tools/bash.ts";

/** What extensions may do to the session (resolved lazily: extensions load before the session exists). */
export interface SessionRef {
  session?: AgentSession;
  early: ExtensionFrame[];
  /** The models extensions look up (set once extensions are loaded and virtual models join). */
  models?: ModelLookup & { requestAuth?(provider: string): Promise<{ apiKey?: string; headers?: Record<string, string> }> };
  /** Set with the session (session-control.ts). */
  control?: SessionControl;
  /** Every tool of the last model call (or of `currentTools`), where each came from, and the names an extension limited them to. */
  allTools?: ReadonlyMap<string, Tool>;
  toolSources?: ReadonlyMap<string, SourceInfo>;
  /** The session's tools now (before any model call too): refreshes `allTools`. */
  currentTools?: () => unknown;
  activeTools?: ReadonlySet<string>;
  /** Tools registered inactive (`defaultActive: false`) that nothing activated: left out until `setActiveTools` names them. */
  inactiveTools?: ReadonlySet<string>;
  /** The session's MCP servers, for the reference's MCP extension factory. */
  mcp?: ExtensionMcpHost;
  /** What `get_commands` lists, which `pi.getCommands()` answers too (set once the session is composed). */
  commands?: () => SlashCommandInfo[];
}

export function extensionPort(
  ref: SessionRef,
  cwd: string,
  mode: "rpc" | "json" | "print" | "acp",
  projectTrusted: boolean,
  shutdown: () => void,
  guard: CredentialGuard,
  sandbox?: BashSandbox,
  dialogs?: DialogHost,
): ExtensionSessionPort {
  const get = () => ref.session;
  const must = () => {
    const s = get();
    if (!s) throw new Error("the session is not ready yet");
    return s;
  };
  return {
    cwd,
    mode,
    hasUI: mode === "rpc" || dialogs !== undefined,
    ...(dialogs ? { dialogs } : {}),
    projectTrusted,
    // The whole model, as the reference's ctx.model (a copy: changing it changes nothing).
    model: () => {
      const m = get()?.model;
      return m ? structuredClone(m) : undefined;
    },
    isIdle: () => !get()?.isBusy,
    hasPendingMessages: () => (get()?.queues.size ?? 0) > 0,
    abort: () => void get()?.abort(),
    shutdown,
    sendMessage: (msg, opts) => must().sendCustomMessage(guard.maskDeep(msg), opts),
    sendUserMessage: (text, opts, images) => {
      const s = must();
      if (s.isBusy) s.enqueue(opts?.deliverAs ?? "followUp", text, images);
      else s.prompt(text, images);
    },
    appendEntry: (customType, data) => must().appendCustom(customType, guard.maskDeep(data)),
    setSessionName: (name) => void must().setName(name),
    getSessionName: () => get()?.name,
    setLabel: (entryId, label) => must().setLabel(entryId, label),
    shellGuard: guard,
    ...(sandbox ? { shellSandbox: sandbox } : {}),
    models: () => ref.models,
    control: () => ref.control,
    mcp: () => ref.mcp,
    commands: () => ref.commands?.(),
    writeFrame: (frame) => {
      const f = frame as unknown as ExtensionFrame;
      if (ref.session) void ref.session.publish(f);
      else ref.early.push(f);
    },
  };
}

/** Sets the ref's session and the control extensions use from now on. */
export function attachSession(ref: SessionRef, deps: ControlDeps): void {
  ref.session = deps.session;
  ref.control = sessionControl(ref, deps);
}

/**
 * The tools the next call gets: all of them, or those an extension chose with `setActiveTools`
 * (remembered by name, so a tool registered later under a chosen name joins). Records the full set
 * for `getAllTools`.
 */
export function toolsInUse(ref: SessionRef, all: Map<string, Tool>, sources: ReadonlyMap<string, SourceInfo>, inactive: ReadonlySet<string> = new Set()): Map<string, Tool> {
  ref.allTools = all;
  ref.toolSources = sources;
  ref.inactiveTools = inactive;
  return new Map([...all].filter(([name]) => isActive(ref, name)));
}
