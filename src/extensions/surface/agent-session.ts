/**
 * pi-coding-agent's in-process sessions for extensions: `createAgentSession(options)` builds an
 * `AgentSession` (agent-session-class.ts) on pi-agent-core's `Agent`, so its requests go through
 * pion's providers with the session's keys (a `modelRuntime`'s when one is given), and its tools
 * are pion's built-ins for the session's folder plus `customTools` and the resource loader's
 * extensions' (agent-session-extensions.ts). `tools` is the reference's allowlist (default read,
 * bash, edit, write and every extension and custom tool): a name no tool has yet becomes active
 * once an extension registers it. The system prompt is pion's, with the resource loader's prompt
 * as its base and its appended prompts and context files; the SessionManager (default: a new
 * in-memory one) records every message.
 * `createExtensionRuntime` is the reference's not-yet-bound runtime object that resource loaders
 * hand back from `getExtensions()`.
 */
import type { Model, ThinkingLevel } from "../../providers/types.ts";
import { clampThinkingLevel } from "../../providers/thinking.ts";
import { buildSystemPrompt } from "../../resources/system-prompt.ts";
import type { AgentMessage } from "../../store/entries.ts";
import type { ExtensionContext, ToolDefinition } from "../api.ts";
import { adaptTool } from "../tool-adapter.ts";
import { toolFactoryExports } from "../tool-factories.ts";
import { Agent } from "./agent.ts";
import type { AgentTool } from "./agent-core.ts";
import { AgentSession, type SessionRecord } from "./agent-session-class.ts";
import { SessionExtensions } from "./agent-session-extensions.ts";
import { ModelRegistry } from "./coding-models.ts";
import { convertToLlm } from "./compaction-context.ts";
import { SessionManager } from "./session-manager.ts";

type Rec = Record<string, unknown>;

const BUILT_IN = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;
const DEFAULT_TOOLS = ["read", "bash", "edit", "write"];

interface ResourceLoaderLike {
  getSystemPrompt?(): string | undefined;
  getAppendSystemPrompt?(): string[];
  getAgentsFiles?(): { agentsFiles: { path: string; content: string }[] };
  getSkills?(): { skills: { name: string; description: string; filePath: string; disableModelInvocation?: boolean }[] };
  getExtensions?(): unknown;
}

interface ModelRuntimeLike {
  getAuth(provider: string): Promise<{ auth: { apiKey?: string } } | undefined>;
}

export interface CreateAgentSessionOptions {
  cwd?: string;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
  noTools?: "all" | "builtin";
  tools?: string[];
  excludeTools?: string[];
  customTools?: ToolDefinition[];
  resourceLoader?: ResourceLoaderLike;
  sessionManager?: SessionManager;
  settingsManager?: unknown;
  modelRegistry?: unknown;
  modelRuntime?: unknown;
  /** What `bindExtensions` fires first (default: a startup `session_start`). */
  sessionStartEvent?: Record<string, unknown> & { type: string };
}

type Manager = SessionRecord & { getCwd(): string };

function builtInTool(name: string, cwd: string): AgentTool {
  const Name = name[0]!.toUpperCase() + name.slice(1);
  return (toolFactoryExports()[`create${Name}Tool`] as (cwd: string) => AgentTool)(cwd);
}

/**
 * The tools by name (built-ins unless `noTools`, then the custom ones) and which start active;
 * the extensions' tools join them when the session refreshes its tools.
 */
function toolLoadout(o: CreateAgentSessionOptions, cwd: string): { all: Map<string, AgentTool>; active: string[]; allowed?: string[] } {
  const all = new Map<string, AgentTool>();
  if (!o.noTools) for (const name of BUILT_IN) all.set(name, builtInTool(name, cwd));
  for (const t of o.customTools ?? []) all.set(t.name, t as AgentTool);
  const excluded = new Set(o.excludeTools ?? []);
  const defaults = o.noTools === "all" ? [] : [...(o.noTools ? [] : DEFAULT_TOOLS), ...(o.customTools ?? []).map((t) => t.name)];
  // As in the reference: a list of only `+name` / `-name` entries changes the default selection.
  const modifiers = o.tools?.filter((n) => n.startsWith("+") || n.startsWith("-")) ?? [];
  if (modifiers.length > 0 && modifiers.length < o.tools!.length) throw new Error("Invalid tools option: tool names cannot be mixed with +name or -name entries");
  const chosen = modifiers.length === 0 ? (o.tools ?? defaults) : applyModifiers(defaults, modifiers);
  const allowed = modifiers.length === 0 ? o.tools : o.noTools === "all" ? chosen : undefined;
  return { all, active: chosen.filter((n) => all.has(n) && !excluded.has(n)), ...(allowed ? { allowed } : {}) };
}

function applyModifiers(base: readonly string[], modifiers: readonly string[]): string[] {
  const out = [...base];
  for (const m of modifiers) {
    const name = m.slice(1);
    const at = out.indexOf(name);
    if (m.startsWith("+") && at === -1 && name) out.push(name);
    else if (m.startsWith("-") && at !== -1) out.splice(at, 1);
  }
  return out;
}

const NO_EXTENSIONS = () => ({ extensions: [], runtime: createExtensionRuntime() });

/** The loader's extensions as the reference's result holds them (none without a loader, or from one whose result has no extension runtime). */
function extensionsOf(loader: ResourceLoaderLike | undefined): { extensions: Record<string, unknown>[]; runtime: Record<string, unknown> } {
  const result = loader?.getExtensions?.() as { extensions?: unknown; runtime?: { invalidate?: unknown } } | undefined;
  if (!result || !Array.isArray(result.extensions) || typeof result.runtime?.invalidate !== "function") return NO_EXTENSIONS();
  return result as { extensions: Record<string, unknown>[]; runtime: Record<string, unknown> };
}

function systemPrompt(cwd: string, tools: AgentTool[], loader: ResourceLoaderLike | undefined): string {
  const noContext = () => ({}) as ExtensionContext;
  const custom = loader?.getSystemPrompt?.();
  const append = (loader?.getAppendSystemPrompt?.() ?? []).filter((p) => p.length > 0).join("\n\n");
  return buildSystemPrompt({
    cwd,
    tools: tools.map((t) => adaptTool(t, "agent", noContext)),
    ...(custom ? { custom } : {}),
    ...(append ? { append } : {}),
    contextFiles: loader?.getAgentsFiles?.().agentsFiles ?? [],
    // The loader's skills are listed for the model, as in the reference's session prompt.
    skills: (loader?.getSkills?.().skills ?? []).map((s) => ({ ...s, disableModelInvocation: s.disableModelInvocation === true })) as never,
  });
}

/** A model given by provider and id only (pion's `ctx.model`) completed from the registry passed beside it. */
function fullModel(model: Model | undefined, registry: unknown): Model | undefined {
  if (!model || model.api) return model;
  const find = (registry as { find?: (provider: string, id: string) => Model | undefined } | undefined)?.find;
  return find?.call(registry, model.provider, model.id) ?? model;
}

/** The messages recorded on the manager's current branch: what a session on it starts from. */
export function branchMessages(manager: Pick<SessionRecord, "getBranch">): AgentMessage[] {
  return (manager.getBranch() as { type: string; message?: unknown }[]).flatMap((e) => (e.type === "message" && e.message ? [e.message as AgentMessage] : []));
}

const created = new WeakMap<AgentSession, CreateAgentSessionOptions>();

/** The options `createAgentSession` made `session` with (its custom tools, its `tools` allowlist...). */
export const sessionOptionsOf = (session: AgentSession): CreateAgentSessionOptions | undefined => created.get(session);

export async function createAgentSession(options: CreateAgentSessionOptions = {}) {
  const manager = (options.sessionManager ?? SessionManager.inMemory(options.cwd ?? process.cwd())) as unknown as Manager;
  const cwd = options.cwd ?? manager.getCwd() ?? process.cwd();
  const { all, active, allowed } = toolLoadout(options, cwd);
  const tools = active.map((n) => all.get(n)!);
  const existing = branchMessages(manager);
  const model = fullModel(options.model, options.modelRegistry);
  // The reference's default level, then clamped to what the model offers.
  const thinkingLevel: ThinkingLevel = model ? clampThinkingLevel(model, options.thinkingLevel ?? "medium") : "off";
  const prompt = systemPrompt(cwd, tools, options.resourceLoader);
  const runtime = options.modelRuntime as ModelRuntimeLike | undefined;
  // The provider events reach the session's extensions, as the reference's session wires them.
  let made: AgentSession | undefined;
  const runner = () => (made?.hasExtensions ? made.extensionRunner : undefined);
  const agent = new Agent({
    onPayload: async (payload) => {
      const r = runner();
      return r?.hasHandlers("before_provider_request") ? r.emitBeforeProviderRequest(payload) : undefined;
    },
    onResponse: async (response) => {
      const r = runner();
      if (r?.hasHandlers("after_provider_response")) await r.emit({ type: "after_provider_response", status: response.status, headers: response.headers });
    },
    initialState: { systemPrompt: prompt, ...(model ? { model } : {}), thinkingLevel, tools, messages: existing },
    sessionId: manager.getSessionId(),
    cwd,
    convertToLlm: (messages) => convertToLlm(messages),
    ...(runtime && typeof runtime.getAuth === "function" ? { getApiKey: async (provider: string) => (await runtime.getAuth(provider))?.auth.apiKey } : {}),
  });
  if (existing.length === 0) {
    if (model) manager.appendModelChange(model.provider, model.id);
    manager.appendThinkingLevelChange(thinkingLevel);
  }
  const registry = options.modelRegistry ?? (runtime ? new ModelRegistry(runtime) : undefined);
  const extensions = extensionsOf(options.resourceLoader);
  const session = new AgentSession({
    agent,
    sessionManager: manager,
    settingsManager: options.settingsManager,
    cwd,
    resourceLoader: options.resourceLoader,
    modelRegistry: registry,
    toolsByName: all,
    systemPrompt: prompt,
    ...(allowed ? { allowedTools: allowed } : {}),
    ...(options.excludeTools ? { excludedTools: options.excludeTools } : {}),
    extensions: (s, emit) => new SessionExtensions(s, emit, { result: extensions, cwd, sessionManager: manager, modelRegistry: (registry ?? {}) as object, ...(options.sessionStartEvent ? { startEvent: options.sessionStartEvent } : {}) }),
  });
  created.set(session, options);
  made = session;
  const extensionsResult = options.resourceLoader?.getExtensions?.() ?? { ...extensions, errors: [] };
  return { session, extensionsResult, ...(model ? {} : { modelFallbackMessage: "No model given: pass options.model (for example ctx.model)" }) };
}

/**
 * The runtime of extensions not yet bound to a session: actions throw until then, provider
 * and virtual-model registrations wait in their queues.
 */
export function createExtensionRuntime(): Rec {
  const notInitialized = () => {
    throw new Error("Extension runtime not initialized. Action methods cannot be called during extension loading.");
  };
  let stale: string | undefined;
  const unsubscribers = new Set<() => void>();
  const runtime: Rec & { pendingProviderRegistrations: Rec[]; pendingNativeProviderRegistrations: Rec[]; pendingVirtualModelRegistrations: Rec[] } = {
    ...Object.fromEntries(
      ["sendMessage", "sendUserMessage", "appendEntry", "setSessionName", "getSessionName", "setLabel", "getActiveTools", "getAllTools", "getSettings", "setActiveTools", "getCommands", "getThinkingLevel", "setThinkingLevel", "createContext"].map((n) => [n, notInitialized]),
    ),
    refreshTools: () => {},
    setModel: () => Promise.reject(new Error("Extension runtime not initialized")),
    flagValues: new Map(),
    pendingProviderRegistrations: [],
    pendingNativeProviderRegistrations: [],
    pendingVirtualModelRegistrations: [],
    assertActive: () => {
      if (stale) throw new Error(stale);
    },
    invalidate: (message?: string) => {
      if (stale) return;
      stale = message ?? "This extension ctx is stale after session replacement or reload.";
      for (const u of [...unsubscribers]) u();
      unsubscribers.clear();
    },
    trackEventBusSubscription: (unsubscribe: () => void) => {
      let live = true;
      const tracked = () => {
        if (!live) return;
        live = false;
        unsubscribers.delete(tracked);
        unsubscribe();
      };
      unsubscribers.add(tracked);
      return tracked;
    },
    reportError: () => {},
    registerProvider: (name: string, config: unknown, extensionPath = "<unknown>") => void runtime.pendingProviderRegistrations.push({ name, config, extensionPath }),
    registerNativeProvider: (provider: unknown, extensionPath = "<unknown>") => void runtime.pendingNativeProviderRegistrations.push({ provider, extensionPath }),
    unregisterProvider: (name: string) => {
      runtime.pendingProviderRegistrations = runtime.pendingProviderRegistrations.filter((r) => r.name !== name);
      runtime.pendingNativeProviderRegistrations = runtime.pendingNativeProviderRegistrations.filter((r) => (r.provider as { id?: string }).id !== name);
    },
    registerVirtualModel: (definition: unknown, extensionPath = "<unknown>") => void runtime.pendingVirtualModelRegistrations.push({ definition, extensionPath }),
    unregisterVirtualModel: (provider: string, id: string) => {
      runtime.pendingVirtualModelRegistrations = runtime.pendingVirtualModelRegistrations.filter(({ definition }) => {
        const d = definition as { provider?: string; id?: string };
        return d.provider !== provider || d.id !== id;
      });
    },
  };
  return runtime;
}

export const agentSessionExports: Record<string, unknown> = { createAgentSession, AgentSession, createExtensionRuntime };
