/**
 * What a composed session reads again after start-up: `ctx.reload()`, and a session change
 * (new_session, switch_session, fork, clone, or the same from an extension), each followed by
 * session_start and resources_discover.
 *
 * `ctx.reload()` works as the reference's: refused while a prompt runs or a compaction is written;
 * otherwise session_shutdown (reason "reload"), the settings files read again (the project's only
 * when the folder was trusted at start-up), the queue modes, `interruptMode`, the retry and
 * compaction settings and the bash shell (`shellPath`, `shellCommandPrefix`) taken from them (the
 * session asks for `limits`, `httpIdleTimeoutMs`, `thinkingBudgets` and `images.blockImages` at
 * each run or request), the extensions the settings list now loaded anew (those no longer listed stay
 * shut down), tools newly added to `defaultTools` and the extensions' tools activated, the
 * resources loaded again, then session_start and resources_discover (reason "reload"). The
 * model, thinking level, permissions and sandbox stay as start-up chose them.
 *
 * A session change works as the reference's new runtime for the new session: after
 * session_shutdown the settings are read again under the same trust rule and applied as by a
 * reload, the built-in tools are exactly those `defaultTools` (or `--tools`) select now, a
 * setActiveTools choice is forgotten, and a session without messages starts on the model and
 * thinking level start-up would choose now (the command line's, else the settings' defaults); a
 * session with messages goes on with its own (the command line's model winning). Then the
 * extensions the settings list now are bound to it (a module loaded before keeps its module
 * state, its factory runs again), the resources are loaded again, then session_start and
 * resources_discover (reason "startup"). Permissions and sandbox stay as start-up chose them.
 */
import type { Settings } from "../config.ts";
import type { ExtensionRunner, ExtensionSource } from "../extensions/types.ts";
import { splitMcpToolSpec } from "../mcp/select.ts";
import type { ModelRegistry } from "../providers/models.ts";
import { clampThinkingLevel } from "../providers/thinking.ts";
import type { Model } from "../providers/types.ts";
import type { SessionRenewal, SessionStart } from "../rpc/session-handlers.ts";
import { COMPACTION_DEFAULTS } from "../session/compaction.ts";
import type { SessionOptions } from "../session/session-types.ts";
import type { AgentSession } from "../session/session.ts";
import { BUILTIN_TOOL_NAMES, startingTools } from "../tools/select.ts";
import { errorMessage, PionError } from "../util/errors.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";
import type { LocalShell } from "../tools/index.ts";
import { chooseStartupModel, keepCommandLineChoice, startingThinking, type StartupModel } from "./compose-model.ts";
import { loadResources, type Resources } from "./compose-resources.ts";
import { localShell, readSettings } from "./compose-settings.ts";
import { withDiscoveredResources } from "./extension-events.ts";
import type { SessionRef } from "./extension-port.ts";

/** The settings a session goes by now and the resources loaded from them; a reload or a session change replaces both. */
export interface LiveSettings {
  settings: Settings;
  resources: Resources;
}

type RetryCompaction = Pick<SessionOptions, "retry" | "compaction">;

/** The built-in tools `--tools`, else the settings' `defaultTools`, select (MCP entries aside). Throws naming unknown tools. */
export const builtinSelection = (o: CliOptions, settings: Settings): string[] =>
  startingTools({ ...o, tools: splitMcpToolSpec(o.tools ?? settings.defaultTools).rest }, undefined, [...BUILTIN_TOOL_NAMES, "todo"]);

/** The retry and compaction numbers of `settings`; the session reads these objects at each use. */
export function retryAndCompaction(settings: Settings): RetryCompaction {
  const retry = settings.retry;
  return {
    retry: { maxRetries: retry?.maxRetries ?? 3, baseDelayMs: retry?.baseDelayMs ?? 2000, ...(retry?.maxAgentDelayMs !== undefined ? { maxAgentDelayMs: retry.maxAgentDelayMs } : {}) },
    compaction: { reserveTokens: settings.compaction?.reserveTokens ?? COMPACTION_DEFAULTS.reserveTokens, keepRecentTokens: settings.compaction?.keepRecentTokens ?? COMPACTION_DEFAULTS.keepRecentTokens },
  };
}

/** `target` holds exactly `fresh`'s keys and values afterwards (the same object, so its readers see them). */
function replaceContents(target: object, fresh: object): void {
  for (const key of Object.keys(target)) if (!(key in fresh)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, fresh);
}

export interface LifecycleDeps {
  o: CliOptions;
  /** The project-trust decision made at start-up; a reload or session change never trusts a folder anew. */
  trusted: boolean;
  live: LiveSettings;
  session: AgentSession;
  /** Absent when no extension loaded at start-up (none can join later). */
  extensions?: ExtensionRunner;
  ref: SessionRef;
  /** The extensions a session with these settings loads (the command line's among them). */
  extensionList: (settings: Settings) => readonly ExtensionSource[];
  /** The built-in tools' names in use; a reload adds names new in `defaultTools`, a session change replaces them. */
  builtinNames: string[];
  /** The objects the session was given as its `retry` and `compaction` settings. */
  retryCompaction: RetryCompaction;
  /** The bash shell the tools read at each call (settings `shellPath`, `shellCommandPrefix`). */
  shell: LocalShell;
  /** Where start-up chose the model from; a new session chooses from it again. */
  models: ModelRegistry;
  /** What cycle_model goes through, replaced in place when a session change finds another scope. */
  scopedModels: Model[];
  /** mcp.json read again after a reload or session change (compose-mcp.ts), unless an extension configures MCP meanwhile. */
  mcp: { markReread(): void; reread(): Promise<void> };
}

export function sessionLifecycle(d: LifecycleDeps) {
  const { o, trusted, live, session, extensions, ref } = d;
  // resources_discover after session_start: the paths handlers return join the skills and prompts.
  const discover = async (reason: "startup" | "reload", start: SessionStart = { reason }) => {
    if (!extensions) return;
    await extensions.notify("session_start", start);
    if (extensions.handles("resources_discover")) live.resources = loadResources(o, trusted, await withDiscoveredResources(live.settings, extensions, o.cwd, reason));
  };

  /** The settings files read again (the project's only when trusted at start-up); unreadable ones leave those read before. */
  const readAgain = async (): Promise<Settings> => {
    try {
      return await readSettings(o, trusted);
    } catch (err) {
      log("settings", `${errorMessage(err)}; the settings read before stay`);
      return live.settings;
    }
  };

  /** The settings' values a session keeps until the files change them (pion's set_* commands change the session only). */
  const applyRunSettings = (before: Settings, fresh: Settings) => {
    if (fresh.steeringMode !== before.steeringMode) session.queues.steeringMode = fresh.steeringMode ?? "one-at-a-time";
    if (fresh.followUpMode !== before.followUpMode) session.queues.followUpMode = fresh.followUpMode ?? "one-at-a-time";
    if (fresh.compaction?.enabled !== before.compaction?.enabled) session.autoCompaction = fresh.compaction?.enabled ?? true;
    if (fresh.retry?.enabled !== before.retry?.enabled) session.autoRetry = fresh.retry?.enabled ?? true;
    if (fresh.interruptMode !== before.interruptMode) session.interruptMode = fresh.interruptMode ?? "wait";
    replaceContents(d.shell, localShell(fresh));
    const numbers = retryAndCompaction(fresh);
    replaceContents(d.retryCompaction.retry, numbers.retry);
    replaceContents(d.retryCompaction.compaction, numbers.compaction);
  };

  const selection = (settings: Settings): string[] | undefined => {
    try {
      return builtinSelection(o, settings);
    } catch (err) {
      log("settings", `defaultTools: ${errorMessage(err)}; no tool activated by it`);
      return undefined;
    }
  };

  /**
   * Built-in tools newly added to `defaultTools` become active, removed ones stay active, and those
   * an extension turned off (`setActiveTools`) stay off; the reloaded extensions' tools are all
   * active again (but those registered inactive), as in the reference.
   */
  const activateTools = (before: Settings, fresh: Settings) => {
    const had = new Set(selection(before) ?? d.builtinNames);
    const added = (selection(fresh) ?? []).filter((name) => !had.has(name));
    for (const name of added) if (!d.builtinNames.includes(name)) d.builtinNames.push(name);
    if (!ref.activeTools) return;
    const registered = (extensions?.tools() ?? []).filter((t) => t.defaultActive !== false).map((t) => t.name);
    ref.activeTools = new Set([...ref.activeTools, ...added, ...registered]);
  };

  const reload = async () => {
    if (session.isStreaming) throw new PionError("Wait for the current response to finish before reloading.", "busy");
    if (session.isCompacting) throw new PionError("Wait for compaction to finish before reloading.", "busy");
    await extensions?.notify("session_shutdown", { reason: "reload" });
    d.mcp.markReread();
    const before = live.settings;
    const fresh = await readAgain();
    live.settings = fresh;
    applyRunSettings(before, fresh);
    await extensions?.reloadExtensions("fresh", d.extensionList(fresh));
    activateTools(before, fresh);
    live.resources = loadResources(o, trusted, fresh);
    await discover("reload");
    await d.mcp.reread();
  };

  /** The model and thinking level start-up would choose under `settings`; undefined (logged) when it cannot choose. */
  const startupChoice = (settings: Settings): StartupModel | undefined => {
    try {
      return chooseStartupModel(d.models, o, settings);
    } catch (err) {
      log("models", `${errorMessage(err)}; the session keeps its model`);
      return undefined;
    }
  };
  let choice: StartupModel | undefined;

  const renewal: SessionRenewal = {
    prepare: async () => {
      d.mcp.markReread();
      const before = live.settings;
      const fresh = await readAgain();
      live.settings = fresh;
      applyRunSettings(before, fresh);
      const names = selection(fresh);
      if (names) d.builtinNames.splice(0, d.builtinNames.length, ...names);
      ref.activeTools = undefined;
      choice = startupChoice(fresh);
      if (!choice) return;
      d.scopedModels.splice(0, d.scopedModels.length, ...choice.scopedModels);
      // Set before the change, so a new session's first entries record them.
      if (choice.model) session.model = choice.model;
      session.thinkingLevel = clampThinkingLevel(session.model, startingThinking(choice, fresh));
    },
    finish: async (start) => {
      // Counted, not built: a resumed session may be a file of hundreds of MB read a window at a time.
      if (session.messageCount() > 0) {
        session.restoreSettings();
        if (choice) keepCommandLineChoice(session, choice, o);
      }
      await extensions?.reloadExtensions("same", d.extensionList(live.settings));
      live.resources = loadResources(o, trusted, live.settings);
      await discover("startup", start);
      await d.mcp.reread();
    },
  };

  return { discover, reload, renewal };
}
