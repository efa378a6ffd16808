/**
 * Dispatches session events to extension handlers and folds their results. Handlers run in
 * extension load order, then registration order, over a snapshot taken when dispatch starts.
 * A throwing handler becomes an `extension_error` frame (and a stderr line) and dispatch goes
 * on; for `tool_call` a throw blocks the call (fail closed, as the reference does).
 */
import { completeModel, streamModel } from "./model-calls.ts";
import { apiMembers, commandMembers, contextMembers } from "./context-members.ts";
import { log } from "../util/log.ts";
import type { SourceInfo } from "../resources/source-info.ts";
import {
  createEventBus,
  createExtensionApi,
  dropRecordProviders,
  newExtensionRecord,
  type AnyEvent,
  type ApiHost,
  type EventBus,
  type ExtensionApi,
  type ExtensionCommandContext,
  type ExtensionContext,
  type ExtensionModelRegistry,
  type ExtensionRecord,
  type Handler,
  type VirtualModelDefinition,
} from "./api.ts";
import { execProgram } from "./exec.ts";
import { type BashOperations, execThrough } from "./tool-factories.ts";
import { adaptTool } from "./tool-adapter.ts";
import type {
  BeforeAgentStartOutcome,
  ExtensionMessage,
  ExtensionRunner,
  UserBashOutcome,
  ExtensionSessionPort,
  ExtensionSource,
  ExtensionTool,
  InputOutcome,
  RegisteredFlag,
  ReloadModules,
  SlashCommandInfo,
  ToolCallDecision,
  ToolCallInfo,
  ToolResultInfo,
} from "./types.ts";
import { UiBridge, type UiResponse } from "./ui-bridge.ts";
import { guardStale } from "./stale.ts";

const IDLE_POLL_MS = 25;

export class Runner implements ExtensionRunner {
  private readonly records: ExtensionRecord[] = [];
  private readonly bridge: UiBridge;
  private readonly host: ApiHost;
  private readonly flagValues = new Map<string, boolean | string>();

  constructor(private readonly port: ExtensionSessionPort) {
    this.bridge = new UiBridge(port.hasUI, (frame) => port.writeFrame(frame), port.dialogs);
    const events = createEventBus((channel, err) => this.reportError("(events)", `events:${channel}`, err));
    this.host = {
      cwd: port.cwd,
      events,
      listCommands: () => this.slashCommands(),
      sendMessage: (m, o) => port.sendMessage(m, o),
      sendUserMessage: (t, o, images) => port.sendUserMessage(t, o, images),
      appendEntry: (c, d) => port.appendEntry(c, d),
      setSessionName: (n) => port.setSessionName(n),
      getSessionName: () => port.getSessionName(),
      setLabel: (id, l) => port.setLabel(id, l),
      exec: (command, args, options) => execProgram(command, args, port.cwd, options, port.shellGuard?.childEnv()),
      flagValues: this.flagValues,
    };
  }

  private reloader: ((modules: ReloadModules, paths?: readonly ExtensionSource[]) => Promise<void>) | undefined;

  /** How `reloadExtensions` loads the extensions again (the loader sets it). */
  setReloader(reload: (modules: ReloadModules, paths?: readonly ExtensionSource[]) => Promise<void>): void {
    this.reloader = reload;
  }

  /** Drop every registration and run the extensions' factories again (flag values stay); `paths` replaces the list. */
  async reloadExtensions(modules: ReloadModules = "fresh", paths?: readonly ExtensionSource[]): Promise<void> {
    // The instances being replaced: their captured pi and ctx throw from now on (stale.ts).
    this.generation++;
    for (const record of this.records) this.drop(record);
    this.records.length = 0;
    await this.reloader?.(modules, paths);
  }

  /** What an extension's record holds outside it: its providers' streams and its `pi.events` subscriptions. */
  private drop(record: ExtensionRecord): void {
    dropRecordProviders(record);
    for (const off of this.subscriptions.get(record) ?? []) off();
    this.subscriptions.delete(record);
  }

  /** Counts reloads and rebinds: a `pi` or `ctx` made in an earlier one is stale. */
  private generation = 0;

  private staleCheck(): () => boolean {
    const made = this.generation;
    return () => this.generation !== made;
  }

  private readonly subscriptions = new Map<ExtensionRecord, Set<() => void>>();

  /** The shared bus, with what this record subscribes remembered so `drop` can undo it. */
  private eventsFor(record: ExtensionRecord): EventBus {
    const bus = this.host.events;
    const mine = new Set<() => void>();
    this.subscriptions.set(record, mine);
    return {
      ...bus,
      on: (channel, handler) => {
        const off = bus.on(channel, handler);
        const tracked = () => (mine.delete(tracked), off());
        mine.add(tracked);
        return tracked;
      },
    };
  }

  get loaded(): { path: string }[] {
    return this.records.map((r) => ({ path: r.path }));
  }

  /** The loaded extensions' registrations, live, in load order (the reference's `Extension` objects are views of them). */
  extensionRecords(): readonly ExtensionRecord[] {
    return this.records;
  }

  /** Every extension whose code ran, loaded or not: its timers and promises may still fail later. */
  private readonly started = new Set<string>();

  paths(): readonly string[] {
    return [...this.started];
  }

  /** An extension's code is about to run (its module is imported): its failures are its own from now on. */
  track(path: string): void {
    this.started.add(path);
  }

  /** Start recording a new extension; the loader removes it again when its factory fails. */
  add(path: string, sourceInfo?: SourceInfo): { record: ExtensionRecord; api: ExtensionApi } {
    const record = newExtensionRecord(path, sourceInfo);
    this.records.push(record);
    const stale = this.staleCheck();
    const host = { ...this.host, events: guardStale(this.eventsFor(record), stale) };
    return { record, api: guardStale(Object.assign(createExtensionApi(record, host), apiMembers(this.port)), stale) };
  }

  /** Run the extensions in this order (stable: records not named keep theirs, after the named ones). */
  order(records: readonly ExtensionRecord[]): void {
    const rank = new Map(records.map((r, i) => [r, i]));
    this.records.sort((a, b) => (rank.get(a) ?? records.length) - (rank.get(b) ?? records.length));
  }

  remove(record: ExtensionRecord): void {
    const at = this.records.indexOf(record);
    if (at >= 0) this.records.splice(at, 1);
    this.drop(record);
  }

  registeredFlags(): RegisteredFlag[] {
    return this.records.flatMap((r) => [...r.flags].map(([name, f]) => ({ name, ...f, extensionPath: r.path })));
  }

  setFlagValues(values: Record<string, boolean | string>): void {
    for (const [name, value] of Object.entries(values)) this.flagValues.set(name, value);
  }

  reportError(extensionPath: string, event: string, err: unknown): void {
    const error = err instanceof Error ? err.message : String(err);
    log("extensions", `${extensionPath} (${event}): ${error}`);
    this.port.writeFrame({ type: "extension_error", extensionPath, event, error });
  }

  context(): ExtensionContext {
    return guardStale(this.plainContext(), this.staleCheck());
  }

  private plainContext(): ExtensionContext {
    const port = this.port;
    const base = {
      ui: this.bridge.ui,
      mode: port.mode,
      hasUI: port.hasUI,
      cwd: port.cwd,
      get model() {
        return port.model();
      },
      modelRegistry: this.modelRegistry,
      isIdle: () => port.isIdle(),
      abort: () => port.abort(),
      shutdown: () => port.shutdown(),
      hasPendingMessages: () => port.hasPendingMessages(),
      isProjectTrusted: () => port.projectTrusted,
    };
    return Object.defineProperties(base, Object.getOwnPropertyDescriptors(contextMembers(port))) as ExtensionContext;
  }

  private commandContext(): ExtensionCommandContext {
    const ctx = Object.assign(this.plainContext(), {
      waitForIdle: async () => {
        while (!this.port.isIdle()) await Bun.sleep(IDLE_POLL_MS);
      },
    });
    return guardStale(Object.assign(ctx, commandMembers(this.port, () => this.commandContext())), this.staleCheck());
  }

  private handlersFor(event: string): { record: ExtensionRecord; handler: Handler }[] {
    return this.records.flatMap((record) => (record.handlers.get(event) ?? []).map((handler) => ({ record, handler })));
  }

  /** Run one handler; a throw is reported and yields `failed`. */
  private async call(record: ExtensionRecord, handler: Handler, event: AnyEvent): Promise<{ failed: true } | { failed: false; value: unknown }> {
    try {
      return { failed: false, value: await handler(event, this.context()) };
    } catch (err) {
      this.reportError(record.path, event.type, err);
      return { failed: true };
    }
  }

  async notify(event: string, payload: Record<string, unknown>): Promise<void> {
    for (const { record, handler } of this.handlersFor(event)) await this.call(record, handler, { ...payload, type: event });
  }

  async onInput(text: string, images: unknown[] | undefined, source: "rpc" | "extension"): Promise<InputOutcome> {
    for (const { record, handler } of this.handlersFor("input")) {
      const r = await this.call(record, handler, { type: "input", text, ...(images ? { images } : {}), source });
      if (r.failed || !isObject(r.value)) continue;
      if (r.value.action === "handled") return { action: "handled" };
      if (r.value.action === "transform") {
        if (typeof r.value.text === "string") text = r.value.text;
        if (Array.isArray(r.value.images)) images = r.value.images;
      }
    }
    return images ? { action: "continue", text, images } : { action: "continue", text };
  }

  /** `fields` go on the event too (the surface's ExtensionRunner passes the host's `systemPromptOptions`). */
  async onBeforeAgentStart(prompt: string, systemPrompt: string, fields: Record<string, unknown> = {}): Promise<BeforeAgentStartOutcome> {
    let current = systemPrompt;
    const messages: ExtensionMessage[] = [];
    for (const { record, handler } of this.handlersFor("before_agent_start")) {
      const r = await this.call(record, handler, { ...fields, type: "before_agent_start", prompt, systemPrompt: current, messageType: "user" });
      if (r.failed || !isObject(r.value)) continue;
      if (typeof r.value.systemPrompt === "string") current = r.value.systemPrompt;
      const m = r.value.message;
      if (isObject(m) && typeof m.customType === "string" && (typeof m.content === "string" || Array.isArray(m.content))) {
        messages.push({
          customType: m.customType,
          content: m.content,
          ...(typeof m.display === "boolean" ? { display: m.display } : {}),
          ...("details" in m ? { details: m.details } : {}),
        });
      }
    }
    return { ...(current !== systemPrompt ? { systemPrompt: current } : {}), ...(messages.length ? { messages } : {}) };
  }

  handles(event: string): boolean {
    return this.handlersFor(event).length > 0;
  }

  async onProviderRequest(payload: unknown): Promise<unknown> {
    let current = payload;
    for (const { record, handler } of this.handlersFor("before_provider_request")) {
      const r = await this.call(record, handler, { type: "before_provider_request", payload: current });
      if (!r.failed && r.value !== undefined) current = r.value;
    }
    return current;
  }

  async onResourcesDiscover(event: { cwd: string; reason: string }): Promise<{ skillPaths: string[]; promptPaths: string[] }> {
    const out = { skillPaths: [] as string[], promptPaths: [] as string[] };
    const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
    for (const { record, handler } of this.handlersFor("resources_discover")) {
      const r = await this.call(record, handler, { type: "resources_discover", ...event });
      if (r.failed || !isObject(r.value)) continue;
      out.skillPaths.push(...strings(r.value.skillPaths));
      out.promptPaths.push(...strings(r.value.promptPaths));
    }
    return out;
  }

  async onContext(messages: unknown[]): Promise<unknown[]> {
    let current = messages;
    for (const { record, handler } of this.handlersFor("context")) {
      const r = await this.call(record, handler, { type: "context", messages: structuredClone(current) });
      if (!r.failed && isObject(r.value) && Array.isArray(r.value.messages)) current = r.value.messages;
    }
    return current;
  }

  async onToolCall(call: ToolCallInfo): Promise<ToolCallDecision> {
    // One mutable input shared by every handler, as documented: later handlers see earlier edits.
    const event = { type: "tool_call", toolCallId: call.toolCallId, toolName: call.toolName, input: structuredClone(call.input) };
    for (const { record, handler } of this.handlersFor("tool_call")) {
      const r = await this.call(record, handler, event);
      if (r.failed) return { block: true, reason: `Extension ${record.path} failed while checking this tool call` };
      if (isObject(r.value) && r.value.block === true) {
        return { block: true, reason: typeof r.value.reason === "string" ? r.value.reason : "Blocked by an extension" };
      }
    }
    return { block: false, input: isObject(event.input) ? event.input : call.input };
  }

  async onToolResult(call: ToolCallInfo, result: ToolResultInfo): Promise<ToolResultInfo> {
    const current: ToolResultInfo = { ...result };
    for (const { record, handler } of this.handlersFor("tool_result")) {
      const event = { type: "tool_result", toolCallId: call.toolCallId, toolName: call.toolName, input: call.input, ...current };
      const r = await this.call(record, handler, event);
      if (r.failed || !isObject(r.value)) continue;
      if (Array.isArray(r.value.content)) {
        current.content = r.value.content;
        // Data that described the old content may not describe the new.
        if (r.value.structuredContent === undefined) delete current.structuredContent;
      }
      if (r.value.structuredContent !== undefined) current.structuredContent = r.value.structuredContent;
      if ("details" in r.value) current.details = r.value.details;
      if (typeof r.value.isError === "boolean") current.isError = r.value.isError;
    }
    return current;
  }

  async onUserBash(event: { command: string; excludeFromContext: boolean; cwd: string }): Promise<UserBashOutcome | undefined> {
    for (const { record, handler } of this.handlersFor("user_bash")) {
      const r = await this.call(record, handler, { ...event, type: "user_bash" });
      if (r.failed) return { error: `Extension ${record.path} failed while handling this bash command` };
      if (!isObject(r.value)) continue;
      const { operations, result } = r.value as { operations?: unknown; result?: unknown };
      if (isObject(operations) && typeof operations.exec === "function") return { exec: execThrough(operations as unknown as BashOperations) };
      if (isObject(result) && typeof result.output === "string") {
        return {
          result: {
            output: result.output,
            ...(typeof result.exitCode === "number" ? { exitCode: result.exitCode } : {}),
            cancelled: result.cancelled === true,
            truncated: result.truncated === true,
            ...(typeof result.fullOutputPath === "string" ? { fullOutputPath: result.fullOutputPath } : {}),
          },
        };
      }
    }
    return undefined;
  }

  async beforeSessionChange(event: "session_before_switch" | "session_before_fork", payload: Record<string, unknown>): Promise<boolean> {
    return (await this.askBefore(event, payload))?.cancel === true;
  }

  async askBefore(event: string, payload: Record<string, unknown>): Promise<Record<string, unknown> | undefined> {
    let answer: Record<string, unknown> | undefined;
    for (const { record, handler } of this.handlersFor(event)) {
      const r = await this.call(record, handler, { ...payload, type: event });
      if (r.failed || !isObject(r.value)) continue;
      answer = r.value;
      if (answer.cancel === true) break;
    }
    return answer;
  }

  /** Adapted once per definition (the schema is compiled once). */
  private readonly adapted = new WeakMap<object, ExtensionTool>();

  /** First registration of a name wins, in load order (as in the reference). */
  tools(): ExtensionTool[] {
    const byName = new Map<string, ExtensionTool>();
    for (const record of this.records) {
      for (const def of record.tools.values()) {
        if (byName.has(def.name)) continue;
        try {
          let tool = this.adapted.get(def);
          if (!tool) {
            tool = { ...adaptTool(def, record.path, () => this.context()), sourceInfo: record.sourceInfo };
            this.adapted.set(def, tool);
          }
          byName.set(def.name, tool);
        } catch (err) {
          this.reportError(record.path, "register_tool", err);
        }
      }
    }
    return [...byName.values()];
  }

  commands(): { name: string; description?: string; path: string; sourceInfo: SourceInfo }[] {
    return this.resolvedCommands().map(({ name, description, path, sourceInfo }) => ({ name, ...(description ? { description } : {}), path, sourceInfo }));
  }

  async runCommand(text: string): Promise<boolean> {
    if (!text.startsWith("/")) return false;
    const space = text.indexOf(" ");
    const name = text.slice(1, space === -1 ? undefined : space);
    const args = space === -1 ? "" : text.slice(space + 1);
    const command = this.resolvedCommands().find((c) => c.name === name);
    if (!command) return false;
    try {
      await command.run(args, this.commandContext());
    } catch (err) {
      this.reportError(command.path, "command", err);
    }
    return true;
  }

  handleUiResponse(frame: UiResponse): void {
    this.bridge.respond(frame);
  }

  providers(): { name: string; config: unknown; extensionPath: string }[] {
    const byName = new Map<string, { name: string; config: unknown; extensionPath: string }>();
    for (const r of this.records) for (const [name, config] of r.providers) byName.set(name, { name, config, extensionPath: r.path });
    return [...byName.values()];
  }

  virtualModels(): VirtualModelDefinition[] {
    const byKey = new Map<string, VirtualModelDefinition>();
    for (const record of this.records) for (const [key, def] of record.virtualModels) byKey.set(key, def);
    return [...byKey.values()];
  }

  async routeVirtual(provider: string, id: string, request: Record<string, unknown>): Promise<unknown> {
    const def = this.virtualModels().find((d) => d.provider === provider && d.id === id);
    if (!def) throw new Error(`Virtual model ${provider}/${id} is not registered.`);
    return def.route(request, this.context());
  }

  private readonly modelRegistry: ExtensionModelRegistry = {
    find: (provider, id) => this.port.models?.()?.find(provider, id),
    getAvailable: () => this.port.models?.()?.available() ?? [],
    getAll: () => this.port.models?.()?.all() ?? [],
    findOfType: () => undefined,
    getApiKeyAndHeaders: async (model: { provider: string }) => {
      const auth = (await this.port.control?.()?.apiKeyAndHeaders(model.provider)) ?? {};
      return { ok: true, ...auth };
    },
    getApiKey: async (model: { provider: string } | string) => (await this.port.control?.()?.apiKeyAndHeaders(typeof model === "string" ? model : model.provider))?.apiKey,
    classify: () => Promise.reject(new Error("pion has no classifier models")),
    stream: streamModel,
    streamSimple: streamModel,
    complete: completeModel,
  };

  /** A name registered by several extensions gets `:1`, `:2`... in load order, as in the reference. */
  private resolvedCommands() {
    const counts = new Map<string, number>();
    for (const r of this.records) for (const name of r.commands.keys()) counts.set(name, (counts.get(name) ?? 0) + 1);
    const seen = new Map<string, number>();
    return this.records.flatMap((record) =>
      [...record.commands].map(([name, def]) => {
        const n = (seen.get(name) ?? 0) + 1;
        seen.set(name, n);
        return {
          name: (counts.get(name) ?? 0) > 1 ? `${name}:${n}` : name,
          description: typeof def.description === "string" ? def.description : undefined,
          path: record.path,
          sourceInfo: record.sourceInfo,
          run: (args: string, ctx: ExtensionCommandContext) => def.handler(args, ctx),
        };
      }),
    );
  }

  private slashCommands(): SlashCommandInfo[] {
    const all = this.port.commands?.();
    if (all) return all;
    const own = this.commands().map(
      (c): SlashCommandInfo => ({
        name: c.name,
        ...(c.description ? { description: c.description } : {}),
        source: "extension",
        sourceInfo: c.sourceInfo,
      }),
    );
    return own;
  }
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}
