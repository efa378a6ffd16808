/**
 * The reference's session services and runtime for in-process sessions (agent-session.ts):
 * `createAgentSessionServices` gathers what a session in one folder needs (a ModelRuntime over
 * pion's models, the settings, a DefaultResourceLoader, diagnostics), `createAgentSessionFromServices`
 * makes the session on them (its requests use the runtime's keys), and `AgentSessionRuntime` owns
 * one session at a time and replaces it: a new session, another session's file, a fork at an
 * entry, an imported session file, each in the reference's session files when the current session
 * has one (session-manager.ts). The session being replaced gets `session_shutdown`; no
 * `session_before_*` handler is asked, and `withSession` (an extension context of the new
 * session) is refused.
 */
import { constants, copyFileSync, existsSync, mkdirSync } from "node:fs";
import { basename, join, parse, resolve } from "node:path";
import { pionHome } from "../../config.ts";
import type { Model, ThinkingLevel } from "../../providers/types.ts";
import { contentText } from "../../store/entries.ts";
import { sessionDirFor } from "../../store/paths.ts";
import { expandHome } from "../../util/home-path.ts";
import type { ToolDefinition } from "../api.ts";
import { ModelRuntime } from "./agent-runtime-models.ts";
import { DefaultResourceLoader, type DefaultResourceLoaderOptions } from "./agent-runtime-resources.ts";
import { branchMessages, createAgentSession } from "./agent-session.ts";
import type { AgentSession } from "./agent-session-class.ts";
import { SettingsManager } from "./coding-settings.ts";
import { ModelRegistry } from "./coding-models.ts";
import { SessionManager } from "./session-manager.ts";

type Rec = Record<string, unknown>;

export interface AgentSessionRuntimeDiagnostic {
  type: "info" | "warning" | "error";
  message: string;
}

interface ResourceLoaderLike {
  getExtensions(): { extensions: { flags?: Map<string, { type: string }> }[]; runtime: Rec & { flagValues: Map<string, unknown> } };
  getSystemPrompt?(): string | undefined;
  reload?(options?: unknown): Promise<void>;
}

export interface AgentSessionServices {
  cwd: string;
  agentDir: string;
  modelRuntime: ModelRuntime;
  settingsManager: SettingsManager;
  resourceLoader: ResourceLoaderLike;
  diagnostics: AgentSessionRuntimeDiagnostic[];
}

export interface CreateAgentSessionServicesOptions {
  cwd: string;
  agentDir?: string;
  settingsManager?: SettingsManager;
  modelRuntime?: ModelRuntime;
  modelRuntimeSignal?: AbortSignal;
  extensionFlagValues?: Map<string, boolean | string>;
  resourceLoaderOptions?: Omit<DefaultResourceLoaderOptions, "cwd" | "agentDir" | "settingsManager">;
  resourceLoaderReloadOptions?: unknown;
}

/** What the runtime uses of a SessionManager (pion's, session-manager.ts). */
interface SessionManagerLike {
  getCwd(): string;
  getSessionFile(): string | undefined;
  getSessionId(): string;
  getEntry(id: string): unknown;
  getEntries(): unknown[];
  getBranch(): unknown[];
  isPersisted(): boolean;
  getSessionDir(): string;
  newSession(options?: { parentSession?: string }): string | undefined;
  createBranchedSession(leafId: string): string | undefined;
  appendMessage(message: unknown): string;
  appendModelChange(provider: string, modelId: string): string;
  appendThinkingLevelChange(level: string): string;
}

export interface CreateAgentSessionFromServicesOptions {
  services: AgentSessionServices;
  sessionManager: SessionManagerLike;
  sessionStartEvent?: Rec;
  model?: Model;
  thinkingLevel?: ThinkingLevel;
  scopedModels?: { model: Model; thinkingLevel?: ThinkingLevel }[];
  tools?: string[];
  excludeTools?: string[];
  noTools?: "all" | "builtin";
  customTools?: ToolDefinition[];
}

const absolute = (p: string) => resolve(expandHome(p));
const errorText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** Flag values for the loaded extensions' flags: an unknown flag, or a string flag without a value, is an error. */
function applyFlagValues(loader: ResourceLoaderLike, values: Map<string, boolean | string> | undefined): AgentSessionRuntimeDiagnostic[] {
  if (!values) return [];
  const result = loader.getExtensions();
  const flags = new Map<string, string>();
  for (const ext of result.extensions) for (const [name, flag] of ext.flags ?? []) flags.set(name, flag.type);
  const out: AgentSessionRuntimeDiagnostic[] = [];
  const unknown: string[] = [];
  for (const [name, value] of values) {
    const type = flags.get(name);
    if (type === undefined) unknown.push(name);
    else if (type === "boolean") result.runtime.flagValues.set(name, true);
    else if (typeof value === "string") result.runtime.flagValues.set(name, value);
    else out.push({ type: "error", message: `Extension flag "--${name}" requires a value` });
  }
  if (unknown.length > 0) out.push({ type: "error", message: `Unknown option${unknown.length === 1 ? "" : "s"}: ${unknown.map((n) => `--${n}`).join(", ")}` });
  return out;
}

/** The folder's services: pion's models (or `agentDir`'s models.json and auth.json when it is not pion's home), settings and resources. */
export async function createAgentSessionServices(options: CreateAgentSessionServicesOptions): Promise<AgentSessionServices> {
  const cwd = absolute(options.cwd);
  const agentDir = options.agentDir ? absolute(options.agentDir) : pionHome();
  const ownFiles = agentDir === resolve(pionHome()) ? {} : { authPath: join(agentDir, "auth.json"), modelsPath: join(agentDir, "models.json") };
  const modelRuntime = options.modelRuntime ?? (await ModelRuntime.create({ ...ownFiles, ...(options.modelRuntimeSignal ? { signal: options.modelRuntimeSignal } : {}) }));
  const settingsManager = options.settingsManager ?? SettingsManager.create(cwd, agentDir);
  const resourceLoader = new DefaultResourceLoader({ ...options.resourceLoaderOptions, cwd, agentDir, settingsManager }) as unknown as ResourceLoaderLike;
  await resourceLoader.reload?.(options.resourceLoaderReloadOptions);
  const diagnostics: AgentSessionRuntimeDiagnostic[] = [];
  // Registrations an extension made while loading go to the runtime (pion's refuses them, as a diagnostic).
  const runtime = resourceLoader.getExtensions().runtime as unknown as Rec & Record<"pendingProviderRegistrations" | "pendingNativeProviderRegistrations" | "pendingVirtualModelRegistrations", { extensionPath: string }[]>;
  for (const list of ["pendingProviderRegistrations", "pendingNativeProviderRegistrations", "pendingVirtualModelRegistrations"] as const) {
    for (const { extensionPath } of runtime[list] ?? []) {
      try {
        if (list === "pendingProviderRegistrations") modelRuntime.registerProvider();
        else if (list === "pendingNativeProviderRegistrations") modelRuntime.registerNativeProvider();
        else modelRuntime.registerVirtualModel();
      } catch (err) {
        diagnostics.push({ type: "error", message: `Extension "${extensionPath}" error: ${errorText(err)}` });
      }
    }
    runtime[list] = [];
  }
  await modelRuntime.refresh();
  diagnostics.push(...applyFlagValues(resourceLoader, options.extensionFlagValues));
  return { cwd, agentDir, modelRuntime, settingsManager, resourceLoader, diagnostics };
}

/** The newest entry of `type` on the manager's branch. */
const lastOnBranch = (manager: SessionManagerLike, type: string) => (manager.getBranch() as Rec[]).findLast((e) => e.type === type);

/**
 * The session's model: the one given, else the session's last model change, else the settings'
 * default, else the first with a key. Its thinking level: the one given, else the session's, else
 * the settings' default.
 */
function initialModel(o: CreateAgentSessionFromServicesOptions): { model?: Model; thinkingLevel?: ThinkingLevel } {
  return startingModel(o.services.modelRuntime, o.services.settingsManager, o.sessionManager, o);
}

/** The reference's choice when no model is given: the session's last, the settings' default, else the first model with a key. */
function startingModel(modelRuntime: ModelRuntime, settingsManager: unknown, sessionManager: SessionManagerLike | undefined, given: { model?: Model; thinkingLevel?: ThinkingLevel }): { model?: Model; thinkingLevel?: ThinkingLevel } {
  const settings = settingsManager as { getDefaultProvider(): string | undefined; getDefaultModel(): string | undefined; getDefaultThinkingLevel(): ThinkingLevel | undefined };
  const change = sessionManager ? lastOnBranch(sessionManager, "model_change") : undefined;
  const fromSession = change ? modelRuntime.getModel(String(change.provider), String(change.modelId)) : undefined;
  const provider = settings.getDefaultProvider();
  const id = settings.getDefaultModel();
  const fromSettings = provider && id ? modelRuntime.getModel(provider, id) : undefined;
  const model = given.model ?? fromSession ?? fromSettings ?? modelRuntime.getAvailableSnapshot()[0];
  const level = sessionManager ? (lastOnBranch(sessionManager, "thinking_level_change")?.thinkingLevel as ThinkingLevel | undefined) : undefined;
  const thinkingLevel = given.thinkingLevel ?? level ?? settings.getDefaultThinkingLevel();
  return { ...(model ? { model } : {}), ...(thinkingLevel ? { thinkingLevel } : {}) };
}

/**
 * The package's `createAgentSession`: with no `model`, the model (and thinking level) is chosen as
 * the reference chooses it, over `options.modelRuntime` or one on the agent folder's files and the
 * settings (`options.settingsManager`, else the folder's), and the session's requests use that
 * runtime's keys; with a model, exactly what it was given.
 */
async function createAgentSessionWithDefaults(options: Parameters<typeof createAgentSession>[0] & { agentDir?: string } = {}) {
  if (options.model) return createAgentSession(options);
  const cwd = absolute(options.cwd ?? (options.sessionManager as { getCwd?(): string } | undefined)?.getCwd?.() ?? process.cwd());
  const agentDir = options.agentDir ? absolute(options.agentDir) : pionHome();
  const ownFiles = agentDir === resolve(pionHome()) ? {} : { authPath: join(agentDir, "auth.json"), modelsPath: join(agentDir, "models.json") };
  const modelRuntime = (options.modelRuntime as ModelRuntime | undefined) ?? (await ModelRuntime.create(ownFiles));
  const settingsManager = options.settingsManager ?? SettingsManager.create(cwd, agentDir);
  const chosen = startingModel(modelRuntime, settingsManager, options.sessionManager as SessionManagerLike | undefined, options);
  const result = await createAgentSession({ ...options, cwd, ...chosen, settingsManager, modelRuntime, modelRegistry: options.modelRegistry ?? new ModelRegistry(modelRuntime) });
  result.session.agent.getApiKey = async (provider: string) => (await modelRuntime.getAuth(provider))?.auth.apiKey;
  return result;
}

/** A session on the services: createAgentSession's result, its requests made with the services' ModelRuntime keys. */
export async function createAgentSessionFromServices(options: CreateAgentSessionFromServicesOptions) {
  const { services } = options;
  const result = await createAgentSession({
    cwd: services.cwd,
    ...initialModel(options),
    ...(options.tools ? { tools: options.tools } : {}),
    ...(options.excludeTools ? { excludeTools: options.excludeTools } : {}),
    ...(options.noTools ? { noTools: options.noTools } : {}),
    ...(options.customTools ? { customTools: options.customTools } : {}),
    resourceLoader: services.resourceLoader as never,
    sessionManager: options.sessionManager as never,
    settingsManager: services.settingsManager,
    modelRegistry: new ModelRegistry(services.modelRuntime),
    modelRuntime: services.modelRuntime,
  });
  result.session.agent.getApiKey = async (provider: string) => (await services.modelRuntime.getAuth(provider))?.auth.apiKey;
  return result;
}

export interface CreateAgentSessionRuntimeResult {
  session: AgentSession;
  services: AgentSessionServices;
  diagnostics: AgentSessionRuntimeDiagnostic[];
  extensionsResult?: unknown;
  modelFallbackMessage?: string;
}

export type CreateAgentSessionRuntimeFactory = (options: { cwd: string; agentDir: string; sessionManager: SessionManagerLike; sessionStartEvent?: Rec }) => Promise<CreateAgentSessionRuntimeResult>;

/** A session file whose working folder is gone cannot be resumed there. */
function assertSessionCwd(manager: SessionManagerLike, fallbackCwd: string): void {
  const file = manager.getSessionFile();
  const cwd = manager.getCwd();
  if (!file || !cwd || existsSync(cwd)) return;
  const err = new Error(`Stored session working directory does not exist: ${cwd}\nSession file: ${file}\nCurrent working directory: ${fallbackCwd}`);
  err.name = "MissingSessionCwdError";
  throw err;
}

const noExtensionContext = (method: string) => new Error(`AgentSessionRuntime.${method}: withSession is not available in pion (the runtime does not rebind extensions to a new session's context)`);

/** A free name in `dir` for a copy of `file`: its own, else `<name>-<n><ext>`. */
function freeName(dir: string, file: string): string {
  const { name, ext } = parse(file);
  let out = join(dir, basename(file));
  for (let n = 1; existsSync(out); n++) out = join(dir, `${name}-${n}${ext}`);
  return out;
}

/** Owns the current session and its services; each replacement tears the current one down, then builds the next with the factory. */
export class AgentSessionRuntime {
  #session: AgentSession;
  #services: AgentSessionServices;
  readonly #create: CreateAgentSessionRuntimeFactory;
  #diagnostics: AgentSessionRuntimeDiagnostic[];
  #fallback: string | undefined;
  readonly #reported = new Set<string>();
  #rebind: ((session: AgentSession) => Promise<void>) | undefined;
  #beforeInvalidate: (() => void) | undefined;

  constructor(session: AgentSession, services: AgentSessionServices, createRuntime: CreateAgentSessionRuntimeFactory, diagnostics: AgentSessionRuntimeDiagnostic[] = [], modelFallbackMessage?: string) {
    this.#session = session;
    this.#services = services;
    this.#create = createRuntime;
    this.#diagnostics = diagnostics;
    this.#fallback = modelFallbackMessage;
  }

  get session(): AgentSession {
    return this.#session;
  }
  get services(): AgentSessionServices {
    return this.#services;
  }
  get cwd(): string {
    return this.#services.cwd;
  }
  get diagnostics(): readonly AgentSessionRuntimeDiagnostic[] {
    return this.#diagnostics;
  }
  get modelFallbackMessage(): string | undefined {
    return this.#fallback;
  }

  /** The diagnostics not returned before (by type and message), now marked returned. */
  takeUnreportedDiagnostics(): AgentSessionRuntimeDiagnostic[] {
    return this.#diagnostics.filter((d) => {
      const key = `${d.type}\0${d.message}`;
      if (this.#reported.has(key)) return false;
      this.#reported.add(key);
      return true;
    });
  }

  setRebindSession(rebind?: (session: AgentSession) => Promise<void>): void {
    this.#rebind = rebind;
  }
  setBeforeSessionInvalidate(callback?: () => void): void {
    this.#beforeInvalidate = callback;
  }

  get #manager(): SessionManagerLike {
    return this.#session.sessionManager as unknown as SessionManagerLike;
  }

  async #teardown(reason = "quit", targetSessionFile?: string): Promise<void> {
    await this.#session.abort();
    const runner = this.#session.extensionRunner;
    if (runner.hasHandlers("session_shutdown")) await runner.emit({ type: "session_shutdown", reason, ...(targetSessionFile ? { targetSessionFile } : {}) });
    this.#beforeInvalidate?.();
    this.#session.dispose();
  }

  async #replace(cwd: string, sessionManager: SessionManagerLike, reason: string, previousSessionFile: string | undefined): Promise<void> {
    const next = await this.#create({ cwd, agentDir: this.#services.agentDir, sessionManager, sessionStartEvent: { type: "session_start", reason, previousSessionFile } });
    this.#session = next.session;
    this.#services = next.services;
    this.#diagnostics = next.diagnostics;
    this.#fallback = next.modelFallbackMessage;
    await this.#rebind?.(this.#session);
  }

  /** Continue in the session file at `sessionPath` (appended to from now on). */
  async switchSession(sessionPath: string, options: { cwdOverride?: string; withSession?: unknown } = {}): Promise<{ cancelled: boolean }> {
    if (options.withSession) throw noExtensionContext("switchSession");
    const previous = this.#session.sessionFile;
    const manager = SessionManager.open(sessionPath, undefined, options.cwdOverride) as unknown as SessionManagerLike;
    assertSessionCwd(manager, this.cwd);
    await this.#teardown("resume", manager.getSessionFile());
    await this.#replace(manager.getCwd(), manager, "resume", previous);
    return { cancelled: false };
  }

  /** A new, empty session in the same folder (a new file in the session folder when the current one has a file); `setup` may add entries before it starts. */
  async newSession(options: { parentSession?: string; setup?: (manager: SessionManagerLike) => Promise<void>; withSession?: unknown } = {}): Promise<{ cancelled: boolean }> {
    if (options.withSession) throw noExtensionContext("newSession");
    const previous = this.#session.sessionFile;
    const manager = (this.#manager.isPersisted() ? SessionManager.create(this.cwd, this.#manager.getSessionDir()) : SessionManager.inMemory(this.cwd)) as unknown as SessionManagerLike;
    if (options.parentSession) manager.newSession({ parentSession: options.parentSession });
    await this.#teardown("new", manager.getSessionFile());
    await this.#replace(this.cwd, manager, "new", previous);
    if (options.setup) {
      await options.setup(this.#manager);
      this.#session.agent.state.messages = branchMessages(this.#manager);
    }
    return { cancelled: false };
  }

  /**
   * Continue from an entry of the current session: before a user message (its text is returned
   * as `selectedText`, to edit and send again) or `at` any entry. The session keeps only that branch.
   */
  async fork(entryId: string, options: { position?: "before" | "at"; withSession?: unknown } = {}): Promise<{ cancelled: boolean; selectedText?: string }> {
    if (options.withSession) throw noExtensionContext("fork");
    const entry = this.#manager.getEntry(entryId) as (Rec & { id: string; parentId: string | null; message?: { role: string; content: unknown } }) | undefined;
    if (!entry) throw new Error("Invalid entry ID for forking");
    let target: string | null = entry.id;
    let selectedText: string | undefined;
    if ((options.position ?? "before") === "before") {
      if (entry.type !== "message" || entry.message?.role !== "user") throw new Error("Invalid entry ID for forking");
      target = entry.parentId;
      selectedText = contentText(entry.message.content as never);
    }
    const previous = this.#session.sessionFile;
    const done = { cancelled: false, ...(selectedText === undefined ? {} : { selectedText }) };
    if (this.#manager.isPersisted()) {
      // A fork of a file-backed session is a new file beside it, whose parent is the current one.
      if (!previous) throw new Error("Persisted session is missing a session file");
      const dir = this.#manager.getSessionDir();
      let manager: SessionManagerLike;
      if (target === null) {
        manager = SessionManager.create(this.cwd, dir) as unknown as SessionManagerLike;
        manager.newSession({ parentSession: previous });
      } else {
        if (!existsSync(previous)) throw new Error("This session has no file yet (it is written with the first message): send a message before forking it");
        manager = SessionManager.open(previous, dir) as unknown as SessionManagerLike;
        manager.createBranchedSession(target);
      }
      await this.#teardown("fork", manager.getSessionFile());
      await this.#replace(manager.getCwd(), manager, "fork", previous);
      return done;
    }
    const manager = this.#manager;
    await this.#teardown("fork", manager.getSessionFile());
    if (target === null) manager.newSession(previous === undefined ? {} : { parentSession: previous });
    else manager.createBranchedSession(target);
    await this.#replace(this.cwd, manager, "fork", previous);
    return done;
  }

  /** Continue in a copy of the session file at `inputPath`, put in the current session folder (the file itself when it is there already). */
  async importFromJsonl(inputPath: string, cwdOverride?: string): Promise<{ cancelled: boolean }> {
    const source = resolve(inputPath);
    if (!existsSync(source)) throw new Error(`Session file not found: ${source}`);
    // An in-memory session has no folder: the default one for the cwd, as SessionManager.create uses.
    const dir = this.#manager.getSessionDir() || sessionDirFor(join(pionHome(), "sessions"), this.cwd);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const stored = resolve(dir, basename(source)) === source;
    const target = stored ? source : freeName(dir, source);
    if (!stored) copyFileSync(source, target, constants.COPYFILE_EXCL);
    const previous = this.#session.sessionFile;
    const manager = SessionManager.open(target, dir, cwdOverride) as unknown as SessionManagerLike;
    assertSessionCwd(manager, this.cwd);
    await this.#teardown("resume", target);
    await this.#replace(manager.getCwd(), manager, "resume", previous);
    return { cancelled: false };
  }

  /** End the current session for good. */
  async dispose(): Promise<void> {
    await this.#teardown("quit");
    await this.#services.modelRuntime.settleCredentialWrites();
  }
}

/** The first session from `createRuntime`, kept by the returned runtime for each later replacement. */
export async function createAgentSessionRuntime(createRuntime: CreateAgentSessionRuntimeFactory, options: { cwd: string; agentDir: string; sessionManager: SessionManagerLike; sessionStartEvent?: Rec }): Promise<AgentSessionRuntime> {
  assertSessionCwd(options.sessionManager, options.cwd);
  const result = await createRuntime(options);
  return new AgentSessionRuntime(result.session, result.services, createRuntime, result.diagnostics, result.modelFallbackMessage);
}

export const agentRuntimeExports: Record<string, unknown> = {
  createAgentSession: createAgentSessionWithDefaults,
  ModelRuntime,
  DefaultResourceLoader,
  createAgentSessionServices,
  createAgentSessionFromServices,
  AgentSessionRuntime,
  createAgentSessionRuntime,
};
