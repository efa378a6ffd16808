/**
 * The session side of extensions that `discoverAndLoadExtensions` loads outside a session (for an
 * `ExtensionRunner` a host or an extension's test builds): pion's ExtensionSessionPort over what
 * the reference's runner is given. Until `bindCore` the actions are the reference's unbound
 * runtime's (createExtensionRuntime: they throw "not initialized") and the context answers the
 * reference's defaults (no model, idle, trusted); once bound, `ctx` and `pi` reach the host's
 * actions, its SessionManager and its ModelRegistry through pion's own context members.
 */
import type { Model } from "../../providers/types.ts";
import type { ExtensionMode, ExtensionSessionPort, ModelLookup, SessionControl } from "../types.ts";

type Rec = Record<string, unknown>;
type Fn = (...args: never[]) => unknown;

/** The reference's `ExtensionContextActions` (bindCore's second argument). */
export interface ContextActions {
  getModel(): Model | undefined;
  getScopedModels(): Model[];
  isIdle(): boolean;
  isProjectTrusted(): boolean;
  getSignal(): AbortSignal | undefined;
  abort(): void;
  hasPendingMessages(): boolean;
  shutdown(): void;
  getContextUsage(): unknown;
  compact(options?: { customInstructions?: string; onComplete?: (r: unknown) => void; onError?: (e: Error) => void }): void;
  getSystemPrompt(): string;
  executeTool?: (...args: unknown[]) => Promise<unknown>;
  getCallableTools?: () => unknown[];
  getSystemPromptOptions?: () => unknown;
}

/** The reference's `ExtensionCommandContextActions` (bindCommandContext's argument). */
export interface CommandActions {
  waitForIdle(): Promise<void>;
  newSession(options?: unknown): Promise<{ cancelled: boolean }>;
  fork(entryId: string, options?: unknown): Promise<{ cancelled: boolean }>;
  navigateTree(targetId: string, options?: unknown): Promise<{ cancelled: boolean }>;
  switchSession(sessionPath: string, options?: unknown): Promise<{ cancelled: boolean }>;
  reload(): Promise<void>;
}

export const defaultContextActions = (): ContextActions => ({
  getModel: () => undefined,
  getScopedModels: () => [],
  isIdle: () => true,
  isProjectTrusted: () => true,
  getSignal: () => undefined,
  abort: () => {},
  hasPendingMessages: () => false,
  shutdown: () => {},
  getContextUsage: () => undefined,
  compact: () => {},
  getSystemPrompt: () => "",
});

export const defaultCommandActions = (): CommandActions => ({
  waitForIdle: async () => {},
  newSession: async () => ({ cancelled: false }),
  fork: async () => ({ cancelled: false }),
  navigateTree: async () => ({ cancelled: false }),
  switchSession: async () => ({ cancelled: false }),
  reload: async () => {},
});

/** What the port reads at each call: set by `discoverAndLoadExtensions`, then by the ExtensionRunner built on its result. */
export interface RunnerBinding {
  runtime: Rec;
  mode: string;
  context: ContextActions;
  commands: CommandActions;
  sessionManager?: Rec;
  modelRegistry?: Rec;
  /** Where handler and load failures go (the load's error list, then the runner's `onError` listeners). */
  report(error: { extensionPath: string; event: string; error: string }): void;
}

const call = (target: Rec | undefined, name: string, ...args: unknown[]): unknown => {
  const f = target?.[name];
  return typeof f === "function" ? (f as Fn).apply(target, args as never[]) : undefined;
};

/** pion's session controls over the bound host: its SessionManager for the tree, its actions for the rest. */
function controlOf(b: RunnerBinding): SessionControl {
  const sm = () => b.sessionManager;
  const rt = (name: string, ...args: unknown[]) => (b.runtime[name] as Fn)(...(args as never[]));
  return {
    reload: () => b.commands.reload(),
    header: () => call(sm(), "getHeader"),
    file: () => call(sm(), "getSessionFile") as string | undefined,
    sessionId: () => (call(sm(), "getSessionId") as string | undefined) ?? "",
    leafId: () => (call(sm(), "getLeafId") as string | null | undefined) ?? null,
    entries: () => (call(sm(), "getEntries") as unknown[] | undefined) ?? [],
    entry: (id) => call(sm(), "getEntry", id),
    branch: (fromId) => (call(sm(), "getBranch", fromId) as unknown[] | undefined) ?? [],
    name: () => call(sm(), "getSessionName") as string | undefined,
    systemPrompt: () => b.context.getSystemPrompt(),
    contextUsage: () => b.context.getContextUsage() as ReturnType<SessionControl["contextUsage"]>,
    compact: (customInstructions) => new Promise((onComplete, onError) => b.context.compact({ customInstructions, onComplete, onError })),
    thinkingLevel: () => rt("getThinkingLevel") as string,
    setThinkingLevel: (level) => void rt("setThinkingLevel", level),
    // The reference's setModel takes the model and answers a promise; pion's context awaits what it is given.
    setModel: (provider, id) => rt("setModel", call(b.modelRegistry, "find", provider, id) ?? { provider, id }) as boolean,
    activeTools: () => rt("getActiveTools") as string[],
    allTools: () => rt("getAllTools") as ReturnType<SessionControl["allTools"]>,
    setActiveTools: (names) => void rt("setActiveTools", names),
    command: (type, args) => {
      if (type === "new_session") return b.commands.newSession(args);
      if (type === "switch_session") return b.commands.switchSession(String(args.sessionPath), args);
      return b.commands.fork(String(args.entryId), args);
    },
    navigate: (targetId, options) => b.commands.navigateTree(targetId, options),
    signal: () => b.context.getSignal(),
    apiKeyAndHeaders: async (provider) => {
      const apiKey = await call(b.modelRegistry, "getApiKeyForProvider", provider);
      return typeof apiKey === "string" ? { apiKey } : {};
    },
    scopedModels: () => b.context.getScopedModels(),
  };
}

function modelsOf(b: RunnerBinding): ModelLookup | undefined {
  const r = b.modelRegistry;
  if (!r) return undefined;
  return {
    find: (provider, id) => call(r, "find", provider, id) as Model | undefined,
    available: () => (call(r, "getAvailable") as Model[] | undefined) ?? [],
    all: () => (call(r, "getAll") as Model[] | undefined) ?? [],
  };
}

export function bindingPort(cwd: string, b: RunnerBinding): ExtensionSessionPort {
  let control: SessionControl | undefined;
  const rt = (name: string, ...args: unknown[]) => (b.runtime[name] as Fn)(...(args as never[]));
  return {
    cwd,
    get mode() {
      return b.mode as ExtensionMode;
    },
    hasUI: false,
    get projectTrusted() {
      return b.context.isProjectTrusted();
    },
    model: () => b.context.getModel(),
    isIdle: () => b.context.isIdle(),
    hasPendingMessages: () => b.context.hasPendingMessages(),
    abort: () => b.context.abort(),
    shutdown: () => b.context.shutdown(),
    sendMessage: (m, o) => void rt("sendMessage", m, o),
    sendUserMessage: (t, o) => void rt("sendUserMessage", t, o),
    appendEntry: (c, d) => void rt("appendEntry", c, d),
    setSessionName: (n) => void rt("setSessionName", n),
    getSessionName: () => rt("getSessionName") as string | undefined,
    setLabel: (id, l) => void rt("setLabel", id, l),
    writeFrame: (frame) => {
      if (frame.type === "extension_error") b.report({ extensionPath: String(frame.extensionPath), event: String(frame.event), error: String(frame.error) });
    },
    models: () => modelsOf(b),
    // Present once a runner holds a SessionManager: before that, reads answer empty as during pion's own loading.
    control: () => (b.sessionManager ? (control ??= controlOf(b)) : undefined),
  };
}
