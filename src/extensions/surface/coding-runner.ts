/**
 * pi-coding-agent's `discoverAndLoadExtensions(configuredPaths, cwd, agentDir)` and
 * `ExtensionRunner`, as hosts and extensions' own tests use them: load extensions outside a
 * session, look at what they registered, bind actions, and fire events at them. Loading is
 * pion's loader (the same virtual modules, resolution and `pi` API as in a session) and events
 * go through pion's runner (the same handler order, folding and error reports); the result's
 * `extensions` are the reference's `Extension` objects as live views of pion's registrations.
 *
 * Where pion differs: the project's own `.pi/extensions` / `.pion/extensions` load only when
 * the folder is trusted (pion's rule everywhere; the reference loads them unasked); the event bus
 * argument is not used (each load has its own `pi.events`); a `tool_call` handler that throws
 * blocks the call instead of rejecting; handlers' `ctx.ui` is pion's headless one whatever
 * `setUIContext` is given. Methods for what pion does not run (turn boundaries, `message_end`
 * replacement, cache warming, UI prompt tracking, MCP server reports) throw saying so.
 */
import { existsSync, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { loadUserSettings, pionHome } from "../../config.ts";
import { decideProjectTrust } from "../../trust/project-trust.ts";
import { expandHome } from "../../util/home-path.ts";
import type { ExtensionRecord } from "../api.ts";
import type { InlineExtension } from "../types.ts";
import { discoverExtensions, scanLevel } from "../discover.ts";
import { packageResources } from "../package-resources.ts";
import { Runner } from "../runner.ts";
import type { ShellExec } from "../../tools/shell.ts";
import { createExtensionRuntime } from "./agent-session.ts";
import { bindingPort, defaultCommandActions, defaultContextActions, type CommandActions, type ContextActions, type RunnerBinding } from "./coding-runner-port.ts";

type Rec = Record<string, unknown>;
type RunnerError = { extensionPath: string; event: string; error: string; stack?: string };

interface Loaded {
  runner: Runner;
  binding: RunnerBinding;
  views: WeakMap<ExtensionRecord, Rec>;
}

/** By the result's `runtime`: what an ExtensionRunner built on that result runs. */
const loads = new WeakMap<object, Loaded>();

/** The reference's `Extension` object: a live view of one of pion's registrations. */
function extensionView(r: ExtensionRecord): Rec {
  return {
    path: r.path,
    resolvedPath: r.path,
    sourceInfo: r.sourceInfo,
    handlers: r.handlers,
    get tools() {
      return new Map([...r.tools].map(([name, definition]) => [name, { definition, sourceInfo: r.sourceInfo }]));
    },
    messageRenderers: new Map(),
    entryRenderers: new Map(),
    get commands() {
      return new Map([...r.commands].map(([name, def]) => [name, { name, sourceInfo: r.sourceInfo, ...def }]));
    },
    get flags() {
      return new Map([...r.flags].map(([name, flag]) => [name, { name, extensionPath: r.path, ...flag }]));
    },
    shortcuts: new Map(),
  };
}

function newBinding(runtime: Rec, report: RunnerBinding["report"]): RunnerBinding {
  return { runtime, mode: "print", context: defaultContextActions(), commands: defaultCommandActions(), report };
}

/**
 * The reference's order: the project's folders (when trusted), `agentDir/extensions` (unless
 * `noDiscovery`), then each configured path.
 */
export function pathsToLoad(configuredPaths: readonly string[], cwd: string, agentDir: string, noDiscovery = false): string[] {
  const home = pionHome();
  const trusted = !noDiscovery && decideProjectTrust({ home, cwd, defaultProjectTrust: loadUserSettings(home).defaultProjectTrust }).trusted;
  const paths = discoverExtensions({ home: agentDir, userDirs: [agentDir], cwd, extra: [], noDiscovery, project: trusted }).map((e) => e.path);
  for (const p of configuredPaths) {
    const path = resolve(cwd, expandHome(p));
    if (!existsSync(path) || !statSync(path).isDirectory()) paths.push(path); // a missing one is the loader's to report
    else {
      // A package (its manifest or index) loads as one; any other folder, each extension in it.
      const entries = packageResources(path).extensions;
      paths.push(...(entries.length > 0 ? entries : scanLevel([path], "user").map((e) => e.path)));
    }
  }
  return [...new Set(paths)];
}

export async function discoverAndLoadExtensions(configuredPaths: readonly string[], cwd: string, agentDir: string = pionHome(), _eventBus?: unknown) {
  const root = resolve(cwd);
  return loadExtensionSet(pathsToLoad(configuredPaths, root, resolve(expandHome(agentDir))), [], root);
}

/**
 * Extension paths and factories loaded outside a session, into the reference's `LoadExtensionsResult`
 * whose `runtime` an ExtensionRunner runs them from. Paths load first, each recorded as the
 * reference records it (`local`, temporary); `fresh` evaluates their modules anew.
 */
export async function loadExtensionSet(paths: readonly string[], factories: readonly InlineExtension[], cwd: string, fresh = false) {
  const runtime = createExtensionRuntime();
  const errors: { path: string; error: string }[] = [];
  // Load failures are the result's errors; later ones go to the runner built on it (its constructor takes `report` over).
  const binding = newBinding(runtime, (e) => void errors.push({ path: e.extensionPath, error: e.error }));
  const { loadExtensions } = await import("../loader.ts");
  const found = paths.map((path) => ({ path, found: { source: "local", scope: "temporary" as const, origin: "top-level" as const, baseDir: dirname(path) } }));
  const runner = (await loadExtensions([...found, ...factories], bindingPort(cwd, binding), { nested: true, fresh })) as Runner;
  const views = new WeakMap<ExtensionRecord, Rec>();
  const extensions = runner.extensionRecords().map((r) => {
    const view = extensionView(r);
    views.set(r, view);
    return view;
  });
  loads.set(runtime, { runner, binding, views });
  return { extensions, errors, warnings: [] as unknown[], runtime };
}

const notInPion = (method: string, why: string): never => {
  throw new Error(`ExtensionRunner.${method} is not available in pion: ${why}`);
};

const ACTIONS = ["sendMessage", "sendUserMessage", "appendEntry", "setSessionName", "getSessionName", "setLabel", "getActiveTools", "getAllTools", "getSettings", "setActiveTools", "refreshTools", "getCommands", "setModel", "getThinkingLevel", "setThinkingLevel"];
const BEFORE = new Set(["session_before_switch", "session_before_fork", "session_before_compact", "session_before_tree"]);

export class ExtensionRunner {
  readonly #runner: Runner;
  readonly #binding: RunnerBinding;
  readonly #views: WeakMap<ExtensionRecord, Rec>;
  readonly #listeners = new Set<(e: RunnerError) => void>();
  #ui: unknown;
  #stale: string | undefined;

  constructor(
    readonly extensions: Rec[],
    readonly runtime: Rec,
    readonly cwd: string,
    readonly sessionManager: object,
    readonly modelRegistry: object,
  ) {
    const loaded = loads.get(runtime) ?? emptyLoad(runtime, cwd);
    this.#runner = loaded.runner;
    this.#binding = loaded.binding;
    this.#views = loaded.views;
    // Only the extensions given run (a host may leave some of a load out), in the order given.
    const given = new Set(extensions);
    for (const r of [...this.#runner.extensionRecords()]) if (!given.has(this.#views.get(r) as Rec)) this.#runner.remove(r);
    const byView = new Map(this.#runner.extensionRecords().map((r) => [this.#views.get(r), r]));
    this.#runner.order(extensions.flatMap((e) => byView.get(e) ?? []));
    Object.assign(this.#binding, { sessionManager: sessionManager as Rec, modelRegistry: modelRegistry as Rec, report: (e: RunnerError) => this.emitError(e) });
  }

  bindCore(actions: Rec, contextActions: ContextActions, providerActions?: Rec): void {
    for (const name of ACTIONS) if (typeof actions[name] === "function") this.runtime[name] = actions[name];
    this.runtime.createContext = () => this.createContext();
    this.#binding.context = { ...defaultContextActions(), ...contextActions };
    const register = (event: string, extensionPath: string, run: () => void) => {
      try {
        run();
      } catch (err) {
        this.emitError({ extensionPath, event, error: err instanceof Error ? err.message : String(err) });
      }
    };
    // Registrations made while loading reach the host's provider actions, else its model registry.
    const target = (name: string) => {
      const owner = (typeof providerActions?.[name] === "function" ? providerActions : this.modelRegistry) as Record<string, (...a: unknown[]) => unknown>;
      return (...a: unknown[]) => owner[name]!(...a);
    };
    for (const p of this.#runner.providers()) register("register_provider", p.extensionPath, () => target("registerProvider")(p.name, p.config));
    for (const d of this.#runner.virtualModels()) register("register_virtual_model", "<unknown>", () => target("registerVirtualModel")(d));
  }

  bindCommandContext(actions?: CommandActions): void {
    this.#binding.commands = actions ?? defaultCommandActions();
  }

  setUIContext(uiContext?: unknown, mode = "print"): void {
    this.#ui = uiContext;
    this.#binding.mode = mode;
  }
  getUIContext(): unknown {
    return this.#ui ?? this.#runner.context().ui;
  }
  hasUI(): boolean {
    return this.#ui !== undefined;
  }

  getExtensionPaths(): string[] {
    return this.extensions.map((e) => e.path as string);
  }
  #allViews(): Rec[] {
    return this.#runner.extensionRecords().map((r) => this.#views.get(r) ?? extensionView(r));
  }
  /** First registration of a name wins, in load order. */
  getAllRegisteredTools(): Rec[] {
    const byName = new Map<string, Rec>();
    for (const e of this.#allViews()) for (const [name, t] of e.tools as Map<string, Rec>) if (!byName.has(name)) byName.set(name, t);
    return [...byName.values()];
  }
  getToolDefinition(toolName: string): unknown {
    return this.getAllRegisteredTools().find((t) => (t.definition as Rec).name === toolName)?.definition;
  }
  getFlags(): Map<string, Rec> {
    const out = new Map<string, Rec>();
    for (const e of this.#allViews()) for (const [name, f] of e.flags as Map<string, Rec>) if (!out.has(name)) out.set(name, f);
    return out;
  }
  setFlagValue(name: string, value: boolean | string): void {
    (this.runtime.flagValues as Map<string, unknown>).set(name, value);
    this.#runner.setFlagValues({ [name]: value });
  }
  /** The flags' defaults, then the values set. */
  getFlagValues(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    for (const [name, f] of this.getFlags()) if (f.default !== undefined) out.set(name, f.default);
    for (const [name, v] of this.runtime.flagValues as Map<string, unknown>) out.set(name, v);
    return out;
  }
  getShortcuts(_resolvedKeybindings?: unknown): Map<string, unknown> {
    return new Map(); // pion has no keyboard
  }
  getShortcutDiagnostics(): unknown[] {
    return [];
  }

  invalidate(message = "This extension ctx is stale after session replacement or reload."): void {
    if (this.#stale) return;
    this.#stale = message;
    (this.runtime.invalidate as (m: string) => void)(message);
  }
  assertActive(): void {
    if (this.#stale) throw new Error(this.#stale);
  }

  onError(listener: (e: RunnerError) => void): () => boolean {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  emitError(error: RunnerError): void {
    if (this.#stale) return;
    for (const l of this.#listeners) l(error);
  }

  hasHandlers(eventType: string): boolean {
    return this.#runner.handles(eventType);
  }

  // Renderers draw on a terminal: pion has none, so none are ever used.
  getMessageRenderer(_customType: string): undefined {
    return undefined;
  }
  getEntryRenderer(_customType: string): undefined {
    return undefined;
  }
  getMarkdownTransformers(): unknown[] {
    return [];
  }
  resolveToolRenderers(_toolName: string, base: () => unknown): unknown {
    return base();
  }

  /** Every command, named as pion's runner names them (`name:1`, `name:2`... when several extensions share one). */
  resolveRegisteredCommands(): Rec[] {
    const names = this.#runner.commands();
    const defs = this.#allViews().flatMap((e) => [...(e.commands as Map<string, Rec>).values()]);
    return defs.map((d, i) => ({ ...d, invocationName: names[i]?.name ?? d.name }));
  }
  getRegisteredCommands(): Rec[] {
    return this.resolveRegisteredCommands();
  }
  getCommandDiagnostics(): unknown[] {
    return [];
  }
  getCommand(name: string): Rec | undefined {
    return this.resolveRegisteredCommands().find((c) => c.invocationName === name);
  }
  getModelRegistry(): object {
    return this.modelRegistry;
  }
  shutdown(): void {
    this.#binding.context.shutdown();
  }
  getActiveTools(): unknown {
    this.assertActive();
    return (this.runtime.getActiveTools as () => unknown)();
  }

  createContext(): Rec {
    this.assertActive();
    return this.#runner.context() as unknown as Rec;
  }
  createToolContext(toolCallId: string, signal?: AbortSignal): Rec {
    const c = this.#binding.context;
    return Object.defineProperties(this.createContext(), {
      tools: { get: () => c.getCallableTools?.() ?? [] },
      executeTool: {
        value: async (name: string, args: unknown, options: { signal?: AbortSignal } = {}) => {
          if (!c.executeTool) {
            const text = "Nested tool calls are not available in this context";
            return { toolCall: { type: "toolCall", id: `${toolCallId}/0`, name, arguments: {} }, result: { content: [{ type: "text", text }], details: {} }, isError: true };
          }
          return c.executeTool(toolCallId, name, args, { ...options, signal: options.signal ?? signal });
        },
      },
    });
  }
  createCommandContext(): Rec {
    const b = this.#binding;
    return Object.assign(this.createContext(), {
      getSystemPromptOptions: () => b.context.getSystemPromptOptions?.() ?? { cwd: this.cwd },
      waitForIdle: () => b.commands.waitForIdle(),
      newSession: (o?: unknown) => b.commands.newSession(o),
      fork: (entryId: string, o?: unknown) => b.commands.fork(entryId, o),
      navigateTree: (targetId: string, o?: unknown) => b.commands.navigateTree(targetId, o),
      switchSession: (sessionPath: string, o?: unknown) => b.commands.switchSession(sessionPath, o),
      reload: () => b.commands.reload(),
    });
  }

  isSessionBeforeEvent(event: { type: string }): boolean {
    return BEFORE.has(event.type);
  }

  /** A session_before_* event answers the handlers' last result (or the first that cancels); any other, nothing. */
  async emit(event: Rec & { type: string }): Promise<unknown> {
    const { type, ...payload } = event;
    if (BEFORE.has(type)) return this.#runner.askBefore(type, payload);
    await this.#runner.notify(type, payload);
    return undefined;
  }

  async emitToolCall(event: { type?: string; toolCallId: string; toolName: string; input: Rec }): Promise<{ block: true; reason: string } | undefined> {
    if (!this.#runner.handles("tool_call")) return undefined;
    const decision = await this.#runner.onToolCall({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input });
    if (decision.block) return { block: true, reason: decision.reason };
    // Handlers edited a copy; the reference's edit the event's own input.
    if (event.input && decision.input !== event.input) {
      for (const key of Object.keys(event.input)) delete event.input[key];
      Object.assign(event.input, decision.input);
    }
    return undefined;
  }

  /** undefined when no handler changed the result. */
  async emitToolResult(event: Rec & { toolCallId: string; toolName: string; input: Rec; content: unknown[]; isError: boolean }): Promise<Rec | undefined> {
    if (!this.#runner.handles("tool_result")) return undefined;
    const before = { content: event.content, details: event.details, isError: event.isError, ...("structuredContent" in event ? { structuredContent: event.structuredContent } : {}) };
    const after = await this.#runner.onToolResult({ toolCallId: event.toolCallId, toolName: event.toolName, input: event.input }, before);
    const changed = (["content", "details", "isError", "structuredContent"] as const).some((k) => after[k] !== before[k as keyof typeof before]);
    return changed ? { content: after.content, details: after.details, structuredContent: after.structuredContent, isError: after.isError, usage: event.usage } : undefined;
  }

  /** Run the `user_bash` handlers: `{ operations }` to run it elsewhere, `{ result }` instead of running it, undefined to run it here. */
  async emitUserBash(event: { command: string; excludeFromContext?: boolean; cwd: string }): Promise<Rec | undefined> {
    const out = await this.#runner.onUserBash({ command: event.command, excludeFromContext: event.excludeFromContext === true, cwd: event.cwd });
    if (!out) return undefined;
    if ("error" in out) throw new Error(out.error);
    if ("result" in out) return { result: out.result };
    const exec: ShellExec = out.exec;
    return { operations: { exec: async (command: string, cwd: string, o: Parameters<ShellExec>[2]) => ({ exitCode: await exec(command, cwd, o) }) } };
  }

  async emitContext(messages: unknown[]): Promise<unknown[]> {
    return this.#runner.onContext(structuredClone(messages));
  }
  async emitBeforeProviderRequest(payload: unknown): Promise<unknown> {
    return this.#runner.onProviderRequest(payload);
  }
  /** Handlers change the headers in place. */
  async emitBeforeProviderHeaders(headers: Rec): Promise<Rec> {
    await this.#runner.notify("before_provider_headers", { headers });
    return headers;
  }

  /**
   * `before_agent_start`: handlers get the trigger's fields, pion's `systemPrompt` (the options'
   * `forceSystemPrompt`, else the bound `getSystemPrompt()`) and `systemPromptOptions`, which they
   * may edit in place (a section of their own); a returned `systemPrompt` becomes `forceSystemPrompt`.
   */
  async emitBeforeAgentStart(trigger: Rec | undefined, systemPromptOptions: Rec = {}): Promise<{ messages: unknown[]; systemPromptOptions: Rec }> {
    const options = promptOptions(systemPromptOptions);
    const current = typeof options.forceSystemPrompt === "string" ? options.forceSystemPrompt : this.#binding.context.getSystemPrompt();
    const prompt = typeof trigger?.prompt === "string" ? trigger.prompt : "";
    const out = await this.#runner.onBeforeAgentStart(prompt, current, { ...trigger, systemPromptOptions: options });
    if (out.systemPrompt !== undefined) options.forceSystemPrompt = out.systemPrompt;
    return { messages: out.messages ?? [], systemPromptOptions: options };
  }

  /** The skill and prompt paths handlers return (pion's runner keeps no note of which extension gave each). */
  async emitResourcesDiscover(cwd: string, reason: string): Promise<Rec> {
    const out = await this.#runner.onResourcesDiscover({ cwd, reason });
    const at = (path: string) => ({ path, extensionPath: "<unknown>" });
    return { skillPaths: out.skillPaths.map(at), promptPaths: out.promptPaths.map(at), themePaths: [] };
  }

  /** `input`: transforms chain, `handled` stops. */
  async emitInput(text: string, images?: unknown[], source = "interactive", _streamingBehavior?: string): Promise<Rec> {
    const out = await this.#runner.onInput(text, images, source as "rpc");
    if (out.action === "handled") return { action: "handled" };
    return out.text !== text || out.images !== images ? { action: "transform", text: out.text, images: out.images } : { action: "continue" };
  }

  emitBoundary(): never {
    return notInPion("emitBoundary", "pion's session runs turn boundaries itself");
  }
  emitMessageEnd(): never {
    return notInPion("emitMessageEnd", "pion does not let message_end handlers replace a message");
  }
  emitCacheWarmingDecision(): never {
    return notInPion("emitCacheWarmingDecision", "pion does not warm provider caches");
  }
  reportUnhandledMcpServers(): never {
    return notInPion("reportUnhandledMcpServers", "pion's MCP servers are its own, not extensions'");
  }
  wrapUIPromptContext(): never {
    return notInPion("wrapUIPromptContext", "pion has no terminal UI");
  }
  withUIPrompt(): never {
    return notInPion("withUIPrompt", "pion has no terminal UI");
  }
  emitUIPromptEvent(): never {
    return notInPion("emitUIPromptEvent", "pion has no terminal UI");
  }
}

const list = (v: unknown): unknown[] => (Array.isArray(v) ? [...v] : []);
const record = (v: unknown): Rec => (v && typeof v === "object" ? { ...(v as Rec) } : {});

/** The system prompt options as the reference's runner hands them to handlers: every field present, a copy of each list and map. */
function promptOptions(o: Rec): Rec {
  return {
    customPrompt: o.customPrompt,
    forceSystemPrompt: o.forceSystemPrompt,
    selectedTools: Array.isArray(o.selectedTools) ? [...o.selectedTools] : ["read", "bash", "edit", "write"],
    hiddenTools: list(o.hiddenTools),
    toolSnippets: record(o.toolSnippets),
    toolGuidelines: Object.fromEntries(Object.entries(record(o.toolGuidelines)).map(([name, g]) => [name, list(g)])),
    promptGuidelines: list(o.promptGuidelines),
    appendSystemPrompt: o.appendSystemPrompt ?? "",
    sections: record(o.sections),
    cwd: o.cwd,
    contextFiles: list(o.contextFiles).map(record),
    skills: list(o.skills).map(record),
  };
}

/** A runner over extensions this module did not load (none, or a runtime from createExtensionRuntime): it runs none. */
function emptyLoad(runtime: Rec, cwd: string): Loaded {
  const binding = newBinding(runtime, () => {});
  return { runner: new Runner(bindingPort(cwd, binding)), binding, views: new WeakMap() };
}

export const codingRunnerExports: Record<string, unknown> = { discoverAndLoadExtensions, ExtensionRunner };
