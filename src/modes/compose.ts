import { accessSync, constants } from "node:fs";
import { builtinSource, hostToolSource, type SourceInfo } from "../resources/source-info.ts";
import { join, resolve } from "node:path";
import { loadUserSettings, type Settings } from "../config.ts";
import { createCredentialGuard, type CredentialGuard } from "../credentials/guard.ts";
import { toolMasker } from "../credentials/mask-tools.ts";
import { chooseStartupModel, keepCommandLineChoice, startingThinking } from "./compose-model.ts";
import { loadModels, type ModelRegistry } from "../providers/models.ts";
import { llamaConfigured, namesLlamaCpp } from "../providers/llama-cpp.ts";
import { liveRegistry, type LiveRegistry } from "./llama-models.ts";
import { createScriptedStream, loadScript, scriptedModel } from "../providers/scripted.ts";
import { streamByApi } from "../providers/index.ts";
import type { Model, StreamFn } from "../providers/types.ts";
import { listCommands } from "../resources/commands.ts";
import { expandPromptTemplate } from "../resources/prompt-templates.ts";
import { expandSkillCommand } from "../resources/skills.ts";
import { extensionsToLoad, loadResources, resourceScope } from "./compose-resources.ts";
import { applyHttpProxy, imagePolicy, localShell, readSettings, settingsReport } from "./compose-settings.ts";
import { builtinSelection, retryAndCompaction, sessionLifecycle, type LiveSettings } from "./compose-reload.ts";
import { withSettingsSessionDir } from "./session-dir.ts";
import { projectConfigDirs } from "../config-dirs.ts";
import { buildSystemPrompt } from "../resources/system-prompt.ts";
import { errorMessage } from "../util/errors.ts";
import { log } from "../util/log.ts";
import { divertStdout } from "../util/stdout-guard.ts";
import { AgentSession } from "../session/session.ts";
import type { ExtensionFrame } from "../session/session-types.ts";
import type { SessionHeader } from "../store/entries.ts";
import { ensurePrivateDir, sessionFilePath } from "../store/paths.ts";
import { openSessionFolder } from "./open-store.ts";
import type { Recovery } from "../store/db-recovery.ts";
import { LazyStore } from "../store/lazy-store.ts";
import { openSqliteStore } from "../store/sqlite-store.ts";
import type { SessionStore } from "../store/store.ts";
import { HostTools } from "../extensions/host-tools.ts";
import type { ExtensionRunner, ExtensionSource, InlineExtension, RegisteredFlag } from "../extensions/types.ts";
import type { SessionRenewal } from "../rpc/session-handlers.ts";
import type { DialogHost } from "../extensions/ui-bridge.ts";
import { BUILTIN_TOOL_NAMES, toolMatcher } from "../tools/select.ts";
import { attachSession, extensionPort, toolsInUse, type SessionRef } from "./extension-port.ts";
import { forwardEvents, withProviderHooks } from "./extension-events.ts";
import { openStartupSession } from "./startup-session.ts";
import { extensionRouter, withVirtualModels } from "./virtual-models.ts";
import type { McpServerConfig } from "../mcp/config.ts";
import type { McpServerStatus } from "../mcp/connection.ts";
import { splitMcpToolSpec } from "../mcp/select.ts";
import { startMcp } from "./compose-mcp.ts";
import { builtinCommands, BUILTIN_PREFIX } from "../resources/builtin-commands.ts";
import { createBuiltinCommands, type BuiltinCommands } from "./builtin-commands.ts";
import type { TextFileOps } from "../tools/file-ops.ts";
import type { ShellExec } from "../tools/shell.ts";
import type { Tool } from "../tools/tool.ts";
import { decideProjectTrust, skippedNotice, type ProjectTrust } from "../trust/project-trust.ts";
import type { PermissionGate } from "../permissions/gate.ts";
import type { Sandbox } from "../sandbox/sandbox.ts";
import { composeSandbox } from "./compose-sandbox.ts";
import type { PermissionMode } from "../permissions/rules.ts";

export interface CliOptions {
  cwd: string;
  home: string;
  env: Record<string, string | undefined>;
  /** --approve (true) / --no-approve (false): this run's project-trust decision; --no-approve wins. */
  approve?: boolean;
  provider?: string;
  model?: string;
  models?: string;
  thinking?: string;
  name?: string;
  apiKey?: string;
  noSession: boolean;
  session?: string;
  sessionDir?: string;
  continue?: boolean;
  mode?: "rpc" | "json" | "print" | "acp";
  extensions?: string[];
  noExtensions?: boolean;
  /** Extensions given as factories, loaded after the rest: `main(args, { extensionFactories })` and `runRpcMode(runtime)` in `pion run` (program.ts). */
  inlineExtensions?: InlineExtension[];
  /** No `/llama` or `/mcp` command: a session of the reference's SDK has no built-in extensions (`runRpcMode` in `pion run`). */
  noBuiltinExtensions?: boolean;
  tools?: string;
  /** `--exclude-tools`: names or `*` patterns removed from every tool source, after the rest. */
  excludeTools?: string;
  /** `--no-tools`: no built-in or extension tools unless `--tools` names them. */
  noTools?: boolean;
  /** `--no-builtin-tools`: no built-in tools unless `--tools` names them; extension tools stay. */
  noBuiltinTools?: boolean;
  /** `--session-id`: open this folder's session with that id, or create it (with `fork`: the fork's id). */
  sessionId?: string;
  /** `--fork <path|id>`: start in a copy of that session. */
  fork?: string;
  skills?: string[];
  noSkills?: boolean;
  promptTemplates?: string[];
  noPromptTemplates?: boolean;
  noContextFiles?: boolean;
  /** Text, or a file whose contents replace the base prompt. */
  systemPrompt?: string;
  /** Texts or files, appended in order. */
  appendSystemPrompt?: string[];
  /** `--no-mcp`: no MCP server connects. */
  noMcp?: boolean;
  /**
   * `--offline` / `PI_OFFLINE`: the reference's "disable automatic network activity". pion starts
   * none of its own (no catalog refresh, update check or download; cli.ts passes PI_OFFLINE=1 on
   * to extensions and the processes pion starts); what the user configured or asked for still
   * connects: model requests, MCP servers (stdio and HTTP), `pion models refresh`.
   */
  offline?: boolean;
  /** `--verbose`: what was loaded, on stderr. */
  verbose?: boolean;
  /**
   * Set when the command line holds options no built-in flag knows: called once extensions
   * are loaded with the flags they registered; returns their values or throws (a usage error).
   */
  resolveExtensionFlags?: (registered: RegisteredFlag[]) => Record<string, boolean | string>;
  /** Run limits from --max-turns / --max-cost; they win over settings.limits. */
  maxTurns?: number;
  maxCostUsd?: number;
  /** Overrides settings `permissions.mode`. */
  permissionMode?: PermissionMode;
  /** `--sandbox <off|read-only|workspace-write>`: overrides settings `sandbox.mode`. */
  sandbox?: string;
  /**
   * Workspace roots beside the cwd that the host named for this session (ACP
   * `additionalDirectories`; absolute): writable in a workspace-write sandbox. The tools take any
   * path already, so without a sandbox they change nothing.
   */
  additionalDirectories?: string[];
  /** --allow / --deny rules, added to the settings' rules. */
  allow?: string[];
  deny?: string[];
}

/** What a wire layer that serves several sessions (ACP) gives each one beyond its options. */
export interface ComposeHooks {
  /** A store shared with the process's other sessions; its owner closes it. */
  store?: SessionStore;
  /** Where read, write and edit take text from and put it (ACP: through the editor). */
  files?: TextFileOps;
  /** Where bash runs its commands (ACP: the editor's terminal); unused when pion's sandbox is on. */
  shellExec?: ShellExec;
  /** Build the permission gate even in auto mode without rules (ACP switches modes at run time). */
  permissionGate?: boolean;
  /** Offer the todo tool from the start (ACP editors show its plan; elsewhere it joins once a host sets one). */
  todoTool?: boolean;
  /** Where extensions' dialogs go (ACP: the editor's elicitation, when it offers it); ctx.hasUI is then true. */
  dialogs?: DialogHost;
}

export interface Composed {
  session: AgentSession;
  scopedModels: Model[];
  /** Re-reads run-time providers' models (llama.cpp) before a listing or a switch to one. */
  refreshModels: LiveRegistry["refresh"];
  store: SessionStore;
  cwd: string;
  fileFor: (h: SessionHeader) => string | undefined;
  hostTools: HostTools;
  commands: () => unknown[];
  /** The reference's built-in commands (`/mcp`, `/llama`), answered by pion. */
  builtins?: BuiltinCommands;
  extensions?: ExtensionRunner;
  /** Around a session change: settings, model, tools, resources and extensions as for a new runtime (compose-reload.ts). */
  renewal: SessionRenewal;
  /** Tool permissions; absent in auto mode without rules (everything runs, nothing to check). */
  permissions?: PermissionGate;
  /** pion's sandbox around the model's commands; absent when it is off. */
  sandbox?: Sandbox;
  /** Aborted when an extension asks pion to shut down. */
  shutdown: AbortSignal;
  /** Whether the cwd's own resources loaded; MCP and any later project resource ask `projectTrust.trusted`. */
  projectTrust: ProjectTrust;
  /** MCP servers of the session (empty when none is configured). */
  mcpStatus: () => McpServerStatus[];
  /**
   * Adds MCP servers given at run time (an ACP client's) to the configured ones and starts
   * them all; a given server replaces a configured one of the same name.
   */
  addMcpServers: (servers: McpServerConfig[]) => Promise<void>;
  /** Stops what the session started in the background (MCP servers). */
  close: () => Promise<void>;
  /** The process is done with the session: extensions see `session_shutdown` (reason "quit"), then it is released. */
  end: () => Promise<void>;
  /** Environments for the processes pion starts (MCP servers too) and output masking. */
  guard: CredentialGuard;
}

/** The registry plus one keyless model (the scripted provider's). */
function withModel(base: ModelRegistry, model: Model): ModelRegistry {
  const own = (p: string) => p === model.provider;
  return {
    ...base,
    providers: () => [...base.providers(), model.provider],
    models: (p) => (own(p) ? [model] : base.models(p)),
    all: () => [...base.all(), model],
    apiKey: (p) => (own(p) ? "none" : base.apiKey(p)),
    keyOrigin: (p) => (own(p) ? "models.json" : base.keyOrigin(p)),
    requestAuth: async (p, signal) => (own(p) ? { apiKey: "none" } : base.requestAuth(p, signal)),
    find: (p, id) => (own(p) && id === model.id ? model : base.find(p, id)),
    available: () => [...base.available(), model],
    credentials: () => base.credentials(),
    providerDefaults: (p) => (own(p) ? { api: model.api, baseUrl: model.baseUrl } : base.providerDefaults(p)),
  };
}

/** Where a session's JSONL export goes (nothing with --no-session). */
function sessionFiles(o: CliOptions): (h: SessionHeader) => string | undefined {
  const base = sessionsDir(o);
  return o.noSession ? () => undefined : (h) => sessionFilePath(base, h.cwd, h.timestamp, h.id);
}

const sessionsDir = (o: CliOptions) => (o.sessionDir ? resolve(o.cwd, o.sessionDir) : join(o.home, "sessions"));

/**
 * One database per sessions directory; --no-session keeps it in memory and writes no file. The
 * database opens on first use (a process that only answers queries never opens it); a folder
 * that cannot hold it is a start-up error all the same.
 */
export function sessionStorage(o: CliOptions, onRecovery?: (r: Recovery) => void): { store: SessionStore; fileFor: (h: SessionHeader) => string | undefined } {
  const base = sessionsDir(o);
  if (!o.noSession) usableDir(base);
  const fileFor = sessionFiles(o);
  const store = new LazyStore(() =>
    o.noSession ? openSqliteStore(":memory:") : openSessionFolder({ base, named: o.sessionDir !== undefined, env: o.env, fileFor, onRecovery }),
  );
  return { store, fileFor };
}

/** Creates `dir` (0700) if needed and checks it can be written. */
function usableDir(dir: string): void {
  try {
    ensurePrivateDir(dir);
    accessSync(dir, constants.W_OK);
  } catch (err) {
    throw new Error(`Cannot use the sessions directory ${dir}: ${errorMessage(err)}`);
  }
}

/** Build everything a mode needs from the CLI options. Throws with a one-line message. */
export async function composeSession(opts: CliOptions, hooks: ComposeHooks = {}): Promise<Composed> {
  let o = opts;
  // Trust first, from the command line and the user's own files: nothing of the project is read before it.
  const userSettings = loadUserSettings(o.home, o.env);
  const projectTrust = decideProjectTrust({ home: o.home, cwd: o.cwd, approve: o.approve, defaultProjectTrust: userSettings.defaultProjectTrust });
  const notice = skippedNotice(projectTrust, o.home);
  if (notice) log("trust", notice);
  const settings = await readSettings(o, projectTrust.trusted, userSettings);
  applyHttpProxy(userSettings, o.env);
  // A shared store (ACP) was opened in its folder already; the session's files go beside it.
  if (!hooks.store) o = withSettingsSessionDir(o, settings);
  const sandbox = o.sandbox !== undefined || settings.sandbox?.mode !== undefined || settings.projectSandbox?.mode !== undefined ? await composeSandbox(o, settings) : undefined;
  const live = liveRegistry((extraProviders) => loadModels(o.home, o.env, { provider: o.provider, apiKey: o.apiKey }, { extraProviders }), o.env);
  await live.refresh(namesLlamaCpp({ provider: o.provider ?? settings.defaultProvider, model: o.model ?? settings.defaultModel }));
  let registry = live.registry;
  let stream: StreamFn = imagePolicy(streamByApi, () => current.settings);
  if (o.provider === "scripted") {
    // --provider scripted --model <replies.json>: canned replies, no network.
    if (!o.model) throw new Error("--provider scripted needs --model <path to a JSON file of replies>");
    const file = resolve(o.cwd, o.model);
    const scripted = createScriptedStream(loadScript(file));
    const sm = scriptedModel(file);
    registry = withModel(registry, sm);
    const real = stream;
    stream = (req, signal) => (req.model.api === "scripted" ? scripted(req, signal) : real(req, signal));
    o = { ...o, model: sm.id };
  }

  // Resolved on first use (a process that starts nothing and prints no tool output never reads them).
  const guard = createCredentialGuard({ env: o.env, credentials: () => registry.credentials(), shellEnv: settings.shellEnv });
  registry.onNewCredentials((c) => guard.addCredentials(c));
  const maskTools = toolMasker(guard);

  const shell = localShell(settings);
  const toolSpec = splitMcpToolSpec(o.tools ?? settings.defaultTools);
  // An extension's tool registered inactive (`defaultActive: false`) is declared when --tools / defaultTools names it.
  const namedTools = new Set([o.tools ?? settings.defaultTools ?? []].flat().flatMap((s) => s.split(",")).map((s) => s.trim()).filter((s) => s !== "" && !s.startsWith("-")).map((s) => s.replace(/^\+/, "")));
  // Names newly added to defaultTools join it on ctx.reload(); a session change selects it anew (compose-reload.ts).
  const selectedNames = builtinSelection(o, settings);
  const excluded = o.excludeTools ? toolMatcher(o.excludeTools) : undefined;
  // The tools' code loads when the first run starts (prepare); their objects (schemas and
  // descriptions) are built on the first model request. A process that never runs never loads them.
  let toolModule: typeof import("../tools/index.ts") | undefined;
  const mcp = await startMcp(o, projectTrust.trusted, guard, (e) => void session.publish(e as unknown as ExtensionFrame));
  const prepare = async () => {
    // The bash parser loads while the first model request is out, not when the first call waits on it.
    permissions?.prepare();
    void sandbox?.probe();
    toolModule ??= await import("../tools/index.ts");
    await mcp.prepareRun();
  };
  let builtin: Map<string, Tool> | undefined;
  let todoTool: Tool | undefined;
  const builtinTools = () => {
    if (!builtin) {
      // Asked for before the first run (an extension's pi.getAllTools()): loaded now.
      toolModule ??= require("../tools/index.ts") as typeof import("../tools/index.ts");
      // A runner elsewhere cannot be sandboxed (the editor runs what it is given): with pion's
      // sandbox on, bash keeps pion's own sandboxed shell.
      const exec = sandbox ? undefined : hooks.shellExec;
      // Asked at each call: a ctx.reload() may change the setting, and the model its limits.
      const autoResizeImages = () => current.settings.images?.autoResize !== false;
      builtin = toolModule.createBuiltinTools({ images: true, autoResizeImages, model: () => session.model, guard, files: hooks.files, shell, ...(exec ? { exec } : {}), ...(sandbox ? { sandbox } : {}) });
      todoTool = toolModule.createTodoTool({ get: () => session.todos, set: (phases) => void session.setTodos(phases) });
      builtin.set("todo", todoTool);
    }
    const selected = new Map(selectedNames.map((name) => [name, builtin!.get(name)!]));
    // Without --tools every built-in is registered, those not selected inactive, as in the
    // reference: pi.getAllTools() lists grep, find and ls, and pi.setActiveTools can turn them on.
    const unselected = o.tools === undefined && !o.noTools ? BUILTIN_TOOL_NAMES.filter((n) => !selected.has(n)).map((n) => [n, builtin!.get(n)!] as const) : [];
    return { selected, unselected, todoTool: todoTool! };
  };
  const hostTools = new HostTools((frame) => void session.publish(frame));
  // Extensions load before the session exists; what they write meanwhile waits in `early`.
  const ref: SessionRef = {
    early: [],
    mcp: { home: o.home, env: o.env, disabled: o.noMcp === true, configure: (config) => mcp.configure(config), status: () => mcp.manager?.status() ?? [], command: () => mcp.command(), toolSearch: () => mcp.toolSet?.search, codemode: () => mcp.codemode(session) },
  };
  const shutdown = new AbortController();
  // `-e builtin:<name>` names one of the reference's built-in extensions, not a file.
  const extensionList = (s: Settings): ExtensionSource[] => [...extensionsToLoad({ ...o, extensions: o.extensions?.filter((e) => !e.startsWith(BUILTIN_PREFIX)) }, projectTrust.trusted, s), ...(o.inlineExtensions ?? [])];
  const extensionPaths = extensionList(settings);
  // The loader (and its virtual modules) is only imported when there is something to load;
  // from then on stdout is pion's alone (what extensions print goes to stderr).
  if (extensionPaths.length > 0) divertStdout();
  const extensions =
    extensionPaths.length > 0
      ? await (await import("../extensions/loader.ts")).loadExtensions(extensionPaths, extensionPort(ref, o.cwd, o.mode ?? "rpc", projectTrust.trusted, () => shutdown.abort(), guard, sandbox, hooks.dialogs), {
          reportAsyncErrors: true,
        })
      : undefined;
  const hasExtensions = extensions !== undefined && extensions.loaded.length > 0;
  // Before session_start, so handlers (and pi.getFlag) see the command line's values.
  const flagValues = o.resolveExtensionFlags?.(extensions?.registeredFlags() ?? []);
  if (flagValues && extensions) extensions.setFlagValues(flagValues);
  // The models extensions registered are chosen like any other (--model jev/auto).
  if (extensions) registry = withVirtualModels(registry, extensions);
  ref.models = registry;

  let startup = chooseStartupModel(registry, o, settings);
  // Nothing else to start on: a llama.cpp server at LLAMA_BASE_URL may be the model there is.
  if (!startup.model && !o.model && !o.provider && !settings.defaultModel && !settings.defaultProvider && llamaConfigured(o.env)) {
    await live.refresh(false);
    startup = chooseStartupModel(registry, o, settings);
  }
  const { model, scopedModels } = startup;

  // Host tools join from the next model call; the todo tool once the host set a plan.
  const tools = () => {
    const { selected, unselected, todoTool } = builtinTools();
    const all = new Map([...selected, ...unselected]);
    const from = new Map<string, SourceInfo>();
    const add = (t: Tool, source: SourceInfo) => (all.set(t.name, t), from.set(t.name, source));
    if (hooks.todoTool || session.todos.length > 0) all.set("todo", todoTool);
    for (const t of hostTools.tools()) add(t, hostToolSource(t.name));
    if (hasExtensions && !o.noTools) for (const t of extensions!.tools()) add(t, t.sourceInfo ?? builtinSource(t.name));
    if (!o.noTools) for (const t of mcp.tools(session)) if (toolSpec.mcp(t.name)) add(t, builtinSource("mcp"));
    if (excluded) for (const name of [...all.keys()]) if (excluded(name)) all.delete(name);
    const inactive = new Set(hasExtensions ? extensions!.tools().filter((t) => t.defaultActive === false && all.get(t.name) === t && !namedTools.has(t.name)).map((t) => t.name) : []);
    for (const [name, t] of unselected) if (all.get(name) === t) inactive.add(name);
    return maskTools(toolsInUse(ref, all, from, inactive));
  };
  ref.currentTools = tools;
  // What a ctx.reload() or a session change reads again (compose-reload.ts); everything after start-up reads it here.
  const current: LiveSettings = { settings, resources: loadResources(o, projectTrust.trusted, settings) };
  const retryCompaction = retryAndCompaction(settings);
  // A damaged database set aside when the store opens (on first use) is announced to the host too.
  const recovered: Recovery[] = [];
  let announce = (r: Recovery) => void recovered.push(r);
  const { store, fileFor } = hooks.store ? { store: hooks.store, fileFor: sessionFiles(o) } : sessionStorage(o, (r) => announce(r));

  const permissions = await composePermissions(o, settings, () => session, hooks.permissionGate === true || sandbox !== undefined, sandbox);
  // In ask mode the host may let a command the sandbox refused run again outside it.
  if (sandbox && permissions) sandbox.rerunOutside = (callId, command, signal) => permissions.allowOutsideSandbox({ id: callId, name: "bash" }, { command }, signal);
  // A sandbox that cannot start is announced once; the gate then asks before each bash call.
  const storeFrame = (r: Recovery) => ({ type: "session_store_recovered", movedTo: r.movedTo, recovered: r.recovered, unreadable: r.unreadable, message: r.message }) as unknown as ExtensionFrame;
  sandbox?.onUnavailable((p) => void session.publish({ type: "sandbox_status", mode: sandbox.policy.mode, available: false, reason: p.why, remedy: p.remedy } as unknown as ExtensionFrame));

  const session = new AgentSession({
    store,
    gate: permissions ? (call, args, tool, signal) => permissions.check(call, args, tool, signal) : undefined,
    stream: extensions ? withProviderHooks(stream, extensions) : stream,
    models: registry,
    tools,
    prepare,
    systemPrompt: (active) =>
      buildSystemPrompt({
        cwd: o.cwd,
        tools: active,
        custom: current.resources.systemPrompt,
        append: mcp.withPromptSection(current.resources.append),
        skills: current.resources.skills,
        contextFiles: current.resources.contextFiles,
      }),
    extensions: hasExtensions ? extensions : undefined,
    router: extensions && extensionRouter(extensions),
    autoResizeImages: () => current.settings.images?.autoResize !== false,
    expand: (text) => expandSkillCommand(expandPromptTemplate(text, current.resources.templates), current.resources.skills),
    cwd: o.cwd,
    model,
    thinkingLevel: startingThinking(startup, settings),
    steeringMode: settings.steeringMode ?? "one-at-a-time",
    followUpMode: settings.followUpMode ?? "one-at-a-time",
    interruptMode: settings.interruptMode ?? "wait",
    autoCompaction: settings.compaction?.enabled ?? true,
    autoRetry: settings.retry?.enabled ?? true,
    ...retryCompaction,
    // Asked at each run or request: a ctx.reload() or a session change may change the settings (the command line's limits win).
    limits: () => ({ maxTurns: o.maxTurns ?? current.settings.limits?.maxTurns, maxCostUsd: o.maxCostUsd ?? current.settings.limits?.maxCostUsd }),
    idleTimeoutMs: () => current.settings.httpIdleTimeoutMs,
    thinkingBudgets: () => current.settings.thinkingBudgets,
    fileFor,
    shellGuard: guard,
    shell,
  });
  announce = (r) => void session.publish(storeFrame(r));
  for (const r of recovered.splice(0)) announce(r);
  if (openStartupSession(session, store, o, fileFor)) keepCommandLineChoice(session, startup, o);
  const lifecycle = sessionLifecycle({ o, trusted: projectTrust.trusted, live: current, session, extensions: hasExtensions ? extensions : undefined, ref, extensionList, builtinNames: selectedNames, retryCompaction, shell, models: registry, scopedModels, mcp });
  const { renewal } = lifecycle;
  attachSession(ref, { session, store, fileFor, extensions, cwd: o.cwd, scopedModels, reload: lifecycle.reload, renewal });
  for (const frame of ref.early.splice(0)) void session.publish(frame);
  if (o.name) session.setName(o.name);
  const own = () => (hasExtensions ? extensions!.commands() : []);
  // ACP sessions get no built-in commands: an editor has its own ways to show MCP servers.
  const builtinSet = builtinCommands({ cliExtensions: o.extensions, noExtensions: o.noExtensions, noBuiltinExtensions: o.noBuiltinExtensions, noMcp: o.noMcp, listed: settings.listedResources?.extensions ?? [] });
  for (const name of builtinSet.unknown) log("extensions", `${name}: there is no such built-in extension`);
  const builtins =
    o.mode === "acp"
      ? undefined
      : createBuiltinCommands({ set: builtinSet, hasUI: (o.mode ?? "rpc") === "rpc", extensionCommands: () => own().map((c) => c.name), mcp: () => mcp.command(), write: (frame) => void session.publish(frame as unknown as ExtensionFrame) });
  const commands = () => {
    const listed = builtins?.listed();
    const mine = own().map((c) => ({ name: c.name, description: c.description, source: "extension" as const, path: c.path, sourceInfo: c.sourceInfo }));
    // Factories given to main() or runRpcMode load after the built-in extensions, as in the reference.
    const inline = (c: (typeof mine)[number]) => c.sourceInfo?.source === "inline";
    return [...(listed?.first ?? []), ...mine.filter((c) => !inline(c)), ...(listed?.last ?? []), ...mine.filter(inline), ...listCommands(current.resources.skills, current.resources.templates)];
  };
  // pi.getCommands() answers this list too, from the first session_start on.
  ref.commands = commands;
  if (extensions && hasExtensions) {
    // Extensions see the agent's events in order, after they are written.
    forwardEvents(extensions, (fn) => session.subscribe(fn), () => session.model && { provider: session.model.provider, id: session.model.id }, session.thinkingLevel);
    await lifecycle.discover("startup");
  }
  if (o.verbose) {
    const m = session.model;
    const names = (list: readonly string[]) => (list.length > 0 ? list.join(", ") : "none");
    const lines = [
      `model: ${m ? `${m.provider}/${m.id}` : "none"}, thinking ${session.thinkingLevel}`,
      `session: ${session.sessionId} ${session.file ?? "(in memory)"}`,
      `tools: ${names(selectedNames.filter((n) => n !== "todo" && !excluded?.(n)))}`,
      `context files: ${names(current.resources.contextFiles.map((f) => f.path))}`,
      `skills: ${names(current.resources.skills.map((sk) => sk.name))}`,
      `prompt templates: ${names(current.resources.templates.map((t) => t.name))}`,
      `extensions: ${names(extensions?.loaded.map((e) => e.path) ?? [])}`,
      `network: ${o.offline ? "offline" : "on"}`,
    ];
    const scope = resourceScope(o, projectTrust.trusted);
    lines.push(...settingsReport(settings, { user: scope.userDirs ?? [], project: projectTrust.trusted ? projectConfigDirs(o.cwd) : [] }));
    if (current.resources.promptFiles.length > 0) lines.push(`system prompt files: ${current.resources.promptFiles.join(", ")}`);
    for (const line of lines) log("startup", line);
  }
  mcp.ready();
  return {
    session,
    scopedModels,
    refreshModels: live.refresh,
    store,
    cwd: o.cwd,
    fileFor,
    hostTools,
    commands,
    ...(builtins ? { builtins } : {}),
    extensions: hasExtensions ? extensions : undefined,
    renewal,
    permissions,
    ...(sandbox ? { sandbox } : {}),
    shutdown: shutdown.signal,
    projectTrust,
    guard,
    mcpStatus: () => mcp.manager?.status() ?? [],
    addMcpServers: (servers) => mcp.add(servers),
    close: async () => void (await mcp.manager?.stop()),
    end: async () => {
      if (hasExtensions) await extensions!.notify("session_shutdown", { reason: "quit" });
      session.release();
    },
  };
}

/** The permission gate, loaded only when a mode other than auto or a rule is configured. */
async function composePermissions(
  o: CliOptions,
  settings: Settings,
  session: () => AgentSession,
  always: boolean,
  sandbox: Sandbox | undefined,
): Promise<PermissionGate | undefined> {
  const user = settings.permissions;
  const configured =
    (o.permissionMode ?? user?.mode ?? "auto") !== "auto" ||
    [user?.allow, user?.ask, user?.deny, settings.projectDeny, o.allow, o.deny].some((list) => (list?.length ?? 0) > 0);
  if (!configured && !always) return undefined;
  const [{ PermissionGate }, { permissionConfig }] = await Promise.all([import("../permissions/gate.ts"), import("../permissions/config.ts")]);
  const config = permissionConfig(user, settings.projectDeny, { mode: o.permissionMode, allow: o.allow, deny: o.deny });
  if (sandbox) config.sandbox = { mode: sandbox.policy.mode, probe: () => sandbox.probe() };
  return new PermissionGate(config, {
    cwd: o.cwd,
    sessionId: () => session().sessionId,
    grantedRules: () => session().grantedRules(),
    record: async (entry) => void (await session().record(entry, entry.addedRules)),
  });
}
