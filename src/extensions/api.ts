/**
 * The `pi` object an extension's factory receives, and what it records: handlers, tools,
 * commands. Headless pion offers the part of the reference's ExtensionAPI that makes sense
 * without a terminal; renderer/shortcut registrations are inert (tui-stand-ins.ts), and calls
 * pion cannot honour (providers, model switching) throw so the extension sees why.
 */
import { setProviderStream } from "../providers/apis.ts";
import { fromReferenceStream, type ReferenceStreamFn } from "./surface/ai-providers-streams.ts";
import { CLI_FOUND, sourceInfoAt, type SourceInfo } from "../resources/source-info.ts";
import { errorMessage } from "../util/errors.ts";
import { compileJsonSchema } from "../util/json-schema.ts";
import type { ImageContent, Model, ThinkingLevel } from "../providers/types.ts";
import type { ToolAnnotations } from "../tools/tool.ts";
import type { ExecOptions, ExecResult } from "./exec.ts";
import { TUI_API_STAND_INS } from "./tui-stand-ins.ts";
import { toJsonSchema } from "./type-builder.ts";
import type { ExtensionUi } from "./ui-bridge.ts";
import type { ExtensionMessage, ExtensionMode, SendMessageOptions, SlashCommandInfo } from "./types.ts";

export interface ExtensionContext {
  ui: ExtensionUi;
  mode: ExtensionMode;
  hasUI: boolean;
  cwd: string;
  readonly model: { provider: string; id: string } | undefined;
  /** The models pion knows, virtual ones included. */
  modelRegistry: ExtensionModelRegistry;
  /** The running prompt's abort signal; undefined when idle (context-members.ts, with the other session members). */
  readonly signal: AbortSignal | undefined;
  isIdle(): boolean;
  abort(): void;
  shutdown(): void;
  hasPendingMessages(): boolean;
  /** Whether this run trusts the cwd's own resources: an extension honours its project config only then. */
  isProjectTrusted(): boolean;
}

export interface ExtensionCommandContext extends ExtensionContext {
  waitForIdle(): Promise<void>;
}

export interface ToolUpdate {
  content: unknown[];
  details?: unknown;
}

export interface ToolDefinition {
  name: string;
  label?: string;
  description: string;
  parameters?: unknown;
  promptSnippet?: string;
  promptGuidelines?: string[];
  /** MCP's tool annotations; `readOnlyHint: true` spares the tool approval in ask mode and lets it run in read-only mode. */
  annotations?: ToolAnnotations;
  /** `false`: registered inactive (`--tools`, `defaultTools` or `pi.setActiveTools` activates it). */
  defaultActive?: boolean;
  prepareArguments?(args: unknown): unknown;
  execute(
    toolCallId: string,
    params: Record<string, unknown>,
    signal: AbortSignal | undefined,
    onUpdate: ((update: ToolUpdate) => void) | undefined,
    ctx: ExtensionContext,
  ): Promise<{ content: unknown[]; details?: unknown; isError?: boolean }> | { content: unknown[]; details?: unknown; isError?: boolean };
}

/** `ctx.modelRegistry`: lookups over pion's models and calls to them; pion has no classifier models. */
export interface ExtensionModelRegistry {
  find(provider: string, id: string): Model | undefined;
  getAvailable(): Model[];
  getAll(): Model[];
  /** Models of another type than chat (classifiers): pion has none. */
  findOfType(type: string, provider: string, id: string): undefined;
  /** The request auth of a model's provider, as the reference's registry answers it. */
  getApiKeyAndHeaders(model: { provider: string }): Promise<{ ok: true; apiKey?: string; headers?: Record<string, string> }>;
  getApiKey(model: { provider: string } | string): Promise<string | undefined>;
  classify(...args: unknown[]): Promise<never>;
  /** Model calls through pion's providers (model-calls.ts). */
  stream: typeof import("./model-calls.ts").streamModel;
  streamSimple: typeof import("./model-calls.ts").streamModel;
  complete: typeof import("./model-calls.ts").completeModel;
}

/** `pi.registerVirtualModel`: a selectable model whose `route` picks a physical model for each request. */
export interface VirtualModelDefinition {
  provider: string;
  id: string;
  name?: string;
  /** The levels offered for selection (default ["off"]); their meaning is the router's. */
  thinkingLevels?: ThinkingLevel[];
  contextWindow?: number;
  maxTokens?: number;
  input?: ("text" | "image")[];
  route(request: Record<string, unknown>, ctx: ExtensionContext): unknown;
}

export interface CommandDefinition {
  description?: string;
  handler(args: string, ctx: ExtensionCommandContext): unknown;
  getArgumentCompletions?(prefix: string): unknown;
}

/** The events pion fires, with the fields handlers can rely on; other events carry `type` plus the session's payload. */
export interface ExtensionEventMap {
  input: { type: "input"; text: string; images?: unknown[]; source: "rpc" | "extension" };
  before_agent_start: { type: "before_agent_start"; prompt: string; systemPrompt: string; messageType: "user" };
  context: { type: "context"; messages: unknown[] };
  tool_call: { type: "tool_call"; toolCallId: string; toolName: string; input: Record<string, unknown> };
  tool_result: {
    type: "tool_result";
    toolCallId: string;
    toolName: string;
    input: Record<string, unknown>;
    content: unknown[];
    details?: unknown;
    isError: boolean;
    structuredContent?: unknown;
  };
  session_start: { type: "session_start"; reason?: string; previousSessionFile?: string };
  session_before_switch: { type: "session_before_switch"; reason?: string; targetSessionFile?: string };
  session_before_fork: { type: "session_before_fork"; entryId?: string; position?: string };
}

export type AnyEvent = { type: string } & Record<string, unknown>;
export type Handler = (event: AnyEvent, ctx: ExtensionContext) => unknown;

export interface EventBus {
  on(channel: string, handler: (data: unknown) => void): () => void;
  emit(channel: string, data?: unknown): void;
  /** Drops every handler of every channel. */
  clear(): void;
}

export interface ExtensionApi {
  on<K extends keyof ExtensionEventMap>(event: K, handler: (event: ExtensionEventMap[K], ctx: ExtensionContext) => unknown): () => void;
  on(event: string, handler: (event: AnyEvent, ctx: ExtensionContext) => unknown): () => void;
  registerTool(tool: ToolDefinition): void;
  registerCommand(name: string, options: CommandDefinition): void;
  getCommands(): SlashCommandInfo[];
  sendMessage(message: ExtensionMessage, options?: SendMessageOptions): void;
  sendUserMessage(content: string | unknown[], options?: { deliverAs?: "steer" | "followUp" }): void;
  appendEntry(customType: string, data?: unknown): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args?: string[], options?: ExecOptions): Promise<ExecResult>;
  events: EventBus;
  registerFlag(name: string, options: FlagOptions): void;
  getFlag(name: string): unknown;
  registerShortcut(shortcut: string, options: unknown): void;
  registerMessageRenderer(customType: string, renderer: unknown): void;
  registerEntryRenderer(customType: string, renderer: unknown): void;
  registerToolRenderer(resolver: unknown): void;
  registerMarkdownTransformer(transformer: unknown, options?: unknown): void;
  registerProvider(name: string, config: unknown): void;
  unregisterProvider(name: string): void;
  registerVirtualModel(model: VirtualModelDefinition): void;
  unregisterVirtualModel(provider: string, id: string): void;
}

/** `pi.registerFlag` options, as in the reference: a `--name` switch or a `--name <value>` option. */
export interface FlagOptions {
  type?: "boolean" | "string";
  description?: string;
  default?: boolean | string;
}

export interface FlagRegistration {
  type: "boolean" | "string";
  description?: string;
  default?: boolean | string;
}

/** What one loaded extension registered. Arrays/maps are read by the runner. */
export interface ExtensionRecord {
  path: string;
  /** Where it came from (the reference's `sourceInfo`). */
  sourceInfo: SourceInfo;
  handlers: Map<string, Handler[]>;
  tools: Map<string, ToolDefinition>;
  commands: Map<string, CommandDefinition>;
  flags: Map<string, FlagRegistration>;
  /** By `provider/id`. */
  virtualModels: Map<string, VirtualModelDefinition>;
  /** `pi.registerProvider`: provider name → its models.json-style configuration. */
  providers: Map<string, unknown>;
}

/** The runner's side of the API: what `pi` delegates to. */
export interface ApiHost {
  cwd: string;
  events: EventBus;
  listCommands(): SlashCommandInfo[];
  sendMessage(message: ExtensionMessage, options?: SendMessageOptions): void;
  sendUserMessage(text: string, options?: { deliverAs?: "steer" | "followUp" }, images?: ImageContent[]): void;
  appendEntry(customType: string, data?: unknown): void;
  setSessionName(name: string): void;
  getSessionName(): string | undefined;
  setLabel(entryId: string, label: string | undefined): void;
  exec(command: string, args: string[], options?: ExecOptions): Promise<ExecResult>;
  /** Values the command line gave to extension flags (set once every extension has loaded). */
  flagValues: ReadonlyMap<string, boolean | string>;
}

export function newExtensionRecord(path: string, sourceInfo: SourceInfo = sourceInfoAt(path, CLI_FOUND)): ExtensionRecord {
  return { path, sourceInfo, handlers: new Map(), tools: new Map(), commands: new Map(), flags: new Map(), virtualModels: new Map(), providers: new Map() };
}

export function createExtensionApi(record: ExtensionRecord, host: ApiHost): ExtensionApi {
  const on = (event: string, handler: Handler): (() => void) => {
    if (typeof handler !== "function") throw new TypeError(`pi.on("${event}"): handler must be a function`);
    const list = record.handlers.get(event) ?? [];
    list.push(handler);
    record.handlers.set(event, list);
    return () => {
      const current = record.handlers.get(event);
      const at = current?.indexOf(handler) ?? -1;
      if (current && at >= 0) current.splice(at, 1);
    };
  };
  return {
    on: on as ExtensionApi["on"],
    registerTool(tool) {
      if (!tool || typeof tool.name !== "string" || !tool.name) throw new TypeError("pi.registerTool: a tool needs a name");
      if (typeof tool.execute !== "function") throw new TypeError(`pi.registerTool("${tool.name}"): execute must be a function`);
      try {
        compileJsonSchema(toJsonSchema(tool.parameters));
      } catch (err) {
        throw new TypeError(`pi.registerTool("${tool.name}"): its parameters schema cannot be checked: ${errorMessage(err)}`);
      }
      record.tools.set(tool.name, tool);
    },
    registerCommand(name, options) {
      if (typeof name !== "string" || !name) throw new TypeError("pi.registerCommand: a command needs a name");
      if (!options || typeof options.handler !== "function") throw new TypeError(`pi.registerCommand("${name}"): handler must be a function`);
      record.commands.set(name.replace(/^\//, ""), options);
    },
    getCommands: () => host.listCommands(),
    sendMessage: (message, options) => host.sendMessage(message, options),
    sendUserMessage: (content, options) => {
      const { text, images } = splitUserContent(content);
      host.sendUserMessage(text, options, images);
    },
    appendEntry: (customType, data) => host.appendEntry(customType, data),
    setSessionName: (name) => host.setSessionName(name),
    getSessionName: () => host.getSessionName(),
    setLabel: (entryId, label) => host.setLabel(entryId, label),
    exec: (command, args = [], options) => host.exec(command, args, options),
    events: host.events,
    registerFlag(name, options) {
      if (typeof name !== "string" || !/^[a-z0-9][a-z0-9-]*$/i.test(name)) {
        throw new TypeError(`pi.registerFlag: invalid flag name ${JSON.stringify(name)} (letters, digits and -)`);
      }
      const type = options?.type ?? "boolean";
      if (type !== "boolean" && type !== "string") throw new TypeError(`pi.registerFlag("${name}"): type must be "boolean" or "string"`);
      const dflt = options?.default;
      if (dflt !== undefined && typeof dflt !== type) throw new TypeError(`pi.registerFlag("${name}"): the default must be a ${type}`);
      record.flags.set(name, { type, ...(options?.description ? { description: options.description } : {}), ...(dflt !== undefined ? { default: dflt } : {}) });
    },
    // Only the extension that registered a flag reads it; in the factory it is still the default.
    getFlag: (name) => {
      const flag = record.flags.get(name);
      if (!flag) return undefined;
      return host.flagValues.has(name) ? host.flagValues.get(name) : flag.default;
    },
    ...TUI_API_STAND_INS,
    registerProvider(name, config) {
      if (typeof name !== "string" || !name || !config || typeof config !== "object") throw new TypeError("pi.registerProvider(name, config): config is a models.json provider");
      customStream(name, config);
      record.providers.set(name, config);
    },
    unregisterProvider(name) {
      if (record.providers.has(name)) setProviderStream(name, undefined);
      record.providers.delete(name);
    },
    registerVirtualModel(model) {
      record.virtualModels.set(virtualModelKey(model), checkVirtualModel(model));
    },
    unregisterVirtualModel(provider, id) {
      record.virtualModels.delete(`${provider}/${id}`);
    },
  };
}

/**
 * A provider's own `streamSimple` (the reference's legacy option, for a wire API nothing else
 * speaks): that provider's models on its `api` stream through it; the other providers' models on
 * the same API do not.
 */
function customStream(name: string, config: object): void {
  const { api, streamSimple, stream } = config as { api?: unknown; streamSimple?: unknown; stream?: unknown };
  const fn = typeof streamSimple === "function" ? streamSimple : typeof stream === "function" ? stream : undefined;
  if (!fn) return setProviderStream(name, undefined);
  if (typeof api !== "string" || !api) throw new TypeError(`Provider ${name}: "api" is required when registering streamSimple.`);
  setProviderStream(name, { api, stream: fromReferenceStream(fn as ReferenceStreamFn) });
}

/** What `registerProvider` set up outside the record (a provider's own stream), undone when the record goes (a reload). */
export function dropRecordProviders(record: ExtensionRecord): void {
  for (const name of record.providers.keys()) setProviderStream(name, undefined);
}

/** `sendUserMessage` content as the reference splits it: the text parts joined by newlines, the images beside (the session fits them to the model). */
export function splitUserContent(content: string | unknown[]): { text: string; images?: ImageContent[] } {
  if (typeof content === "string") return { text: content };
  const texts: string[] = [];
  const images: ImageContent[] = [];
  for (const part of content) {
    const p = part as { type?: unknown; text?: unknown; data?: unknown; mimeType?: unknown } | null;
    if (p?.type === "text" && typeof p.text === "string") texts.push(p.text);
    else if (p?.type === "image" && typeof p.data === "string" && typeof p.mimeType === "string") images.push({ type: "image", data: p.data, mimeType: p.mimeType });
  }
  return { text: texts.join("\n"), ...(images.length > 0 ? { images } : {}) };
}

export function createEventBus(onError: (channel: string, err: unknown) => void): EventBus {
  const listeners = new Map<string, Set<(data: unknown) => void>>();
  return {
    on(channel, handler) {
      const set = listeners.get(channel) ?? new Set();
      set.add(handler);
      listeners.set(channel, set);
      return () => set.delete(handler);
    },
    emit(channel, data) {
      for (const handler of [...(listeners.get(channel) ?? [])]) {
        try {
          const r: unknown = handler(data);
          if (r instanceof Promise) r.catch((err: unknown) => onError(channel, err));
        } catch (err) {
          onError(channel, err);
        }
      }
    },
    clear() {
      listeners.clear();
    },
  };
}

const LEVELS: readonly string[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

function virtualModelKey(model: VirtualModelDefinition): string {
  if (!model || typeof model.provider !== "string" || !model.provider || typeof model.id !== "string" || !model.id) {
    throw new TypeError("pi.registerVirtualModel: a virtual model needs a provider and an id");
  }
  return `${model.provider}/${model.id}`;
}

function checkVirtualModel(model: VirtualModelDefinition): VirtualModelDefinition {
  const name = `pi.registerVirtualModel("${model.provider}/${model.id}")`;
  if (typeof model.route !== "function") throw new TypeError(`${name}: route must be a function`);
  const levels = model.thinkingLevels;
  if (levels !== undefined && (!Array.isArray(levels) || levels.some((l) => !LEVELS.includes(l)))) {
    throw new TypeError(`${name}: thinkingLevels must list levels of ${LEVELS.join(", ")}`);
  }
  for (const key of ["contextWindow", "maxTokens"] as const) {
    const n = model[key];
    if (n !== undefined && (typeof n !== "number" || !(n >= 0))) throw new TypeError(`${name}: ${key} must be a number of tokens`);
  }
  return model;
}
