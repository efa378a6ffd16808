/**
 * pion as an ACP agent (stable v1): initialize, sessions created, loaded, resumed, forked (the
 * unstable `session/fork`), closed, deleted and listed from the store, each with the editor's
 * `additionalDirectories` (writable roots of a workspace-write sandbox), prompts streamed as
 * `session/update`, cancel, and the model and thinking level as session config options. Several
 * sessions live side by side; each has its own run. `$/cancel_request` is applied by the SDK,
 * which aborts the named request's signal (a prompt's ends it `cancelled`).
 */
import * as acp from "@agentclientprotocol/sdk";
import type * as unstable from "@agentclientprotocol/sdk/unstable";
import * as v from "valibot";
import { VERSION } from "../config.ts";
import type { ComposeHooks, Composed } from "../modes/compose.ts";
import type { McpServerConfig } from "../mcp/config.ts";
import type { SessionStore } from "../store/store.ts";
import { errorMessage } from "../util/errors.ts";
import { PERMISSION_MODES, type PermissionMode } from "../permissions/rules.ts";
import { acpApprovals } from "./approvals.ts";
import { elicitationDialogs } from "./elicitation.ts";
import { clientTextOps, RecordingFiles } from "./files.ts";
import { currentTitle, infoUpdate, sessionTitle } from "./session-info.ts";
import { SessionLink } from "./session-link.ts";
import { EditorTerminals } from "./terminal.ts";
import { replayMessage } from "./updates.ts";

export interface AcpAgentDeps {
  store: SessionStore;
  /** Builds a pion session for `cwd` (resuming `resume`, or a copy of `fork`, when given) around the shared store. */
  compose: (o: { cwd: string; resume?: string; fork?: string; additionalDirectories?: string[] }, hooks: ComposeHooks) => Promise<Composed>;
  /** Ends a session `compose` made: its MCP servers stop and its lock is released. */
  release: (composed: Composed) => Promise<void>;
  /** MCP servers from `session/new` as pion configurations (a bad entry throws naming it). */
  toMcpConfigs: (servers: readonly acp.McpServer[], cwd: string) => McpServerConfig[];
  /** Names of the environment variables that hold provider keys, for messages. */
  keyHint: string;
  /** Whether some provider has a key (what the "environment" auth method can check). */
  hasKey: () => boolean;
  /**
   * What opening the store found and repaired since the last call (a damaged pion.db set aside
   * and rebuilt), each sent to the editor as a `_pion/session_store_recovered` notification.
   */
  storeRecoveries?: () => Record<string, unknown>[];
}

const MODE_NAMES: Record<PermissionMode, { name: string; description: string }> = {
  auto: { name: "Auto", description: "Every tool call runs unless a rule denies it" },
  ask: { name: "Ask", description: "Calls that can change something wait for your approval" },
  "read-only": { name: "Read only", description: "Only read-only tools run" },
};

export function createAcpAgent(deps: AcpAgentDeps): acp.AgentApp {
  const sessions = new Map<string, SessionLink>();
  /** The additional directories each live session was opened with (none: absent). */
  const roots = new Map<string, string[]>();
  let clientCaps: acp.ClientCapabilities | undefined;

  /** The store opens on first use, inside a request: its repairs are told to that request's editor. */
  const announceRecoveries = (client: acp.AgentContext): void => {
    for (const r of deps.storeRecoveries?.() ?? []) void client.notify("_pion/session_store_recovered", r).catch(() => undefined);
  };

  const get = (sessionId: string): SessionLink => {
    const link = sessions.get(sessionId);
    if (!link) throw acp.RequestError.sessionNotFound(sessionId);
    return link;
  };

  /** A live session for `cwd`: a new one, the stored `from.resume`, or a copy of the stored `from.fork`. */
  async function open(
    client: acp.AgentContext,
    cwd: string,
    mcpServers: readonly acp.McpServer[],
    from: { resume?: string; fork?: string; additionalDirectories?: string[] } = {},
  ): Promise<SessionLink> {
    if (!cwd.startsWith("/")) throw acp.RequestError.invalidParams({ field: "cwd" }, "cwd must be an absolute path");
    const relative = from.additionalDirectories?.find((d) => !d.startsWith("/"));
    if (relative !== undefined) throw acp.RequestError.invalidParams({ field: "additionalDirectories" }, `additionalDirectories must be absolute paths: ${relative}`);
    let mcp: McpServerConfig[];
    try {
      mcp = deps.toMcpConfigs(mcpServers, cwd);
    } catch (err) {
      throw acp.RequestError.invalidParams({ field: "mcpServers" }, errorMessage(err));
    }
    let sessionId = "";
    const files = new RecordingFiles(clientTextOps(client, clientCaps?.fs, () => sessionId));
    const terminals = clientCaps?.terminal ? new EditorTerminals(client, () => sessionId) : undefined;
    let composed: Composed;
    try {
      composed = await deps.compose({ cwd, ...from }, { store: deps.store, files, shellExec: terminals?.exec, permissionGate: true, todoTool: true, dialogs: elicitationDialogs(client, clientCaps, () => sessionId) });
    } catch (err) {
      const msg = errorMessage(err);
      if (msg.startsWith("No API key")) throw acp.RequestError.authRequired(undefined, msg);
      const stored = from.resume ?? from.fork;
      if (/not found/i.test(msg) && stored) throw acp.RequestError.sessionNotFound(stored);
      throw acp.RequestError.internalError(undefined, msg);
    }
    if (!composed.session.model) {
      await deps.release(composed);
      throw acp.RequestError.authRequired(
        undefined,
        `No model with an API key is configured: set ${deps.keyHint}, or configure a provider in $PION_HOME/models.json`,
      );
    }
    // The editor's model picker lists a llama.cpp server's models when LLAMA_BASE_URL is set.
    await composed.refreshModels(false);
    sessionId = composed.session.sessionId;
    if (composed.permissions) composed.permissions.port = acpApprovals(client, () => sessionId);
    const link = new SessionLink(composed, (update) => client.notify("session/update", { sessionId, update }), files, terminals);
    sessions.set(sessionId, link);
    if (from.additionalDirectories?.length) roots.set(sessionId, from.additionalDirectories);
    // The editor's servers join the user's (mcp.json, a trusted project's), never replace them.
    if (mcp.length > 0) await composed.addMcpServers(mcp);
    return link;
  }

  /**
   * `session/close`: the session's prompts end `cancelled`, its MCP servers stop and its lock is
   * released; later requests for it answer "session not found". False when it was not live.
   */
  async function closeLink(sessionId: string): Promise<boolean> {
    const link = sessions.get(sessionId);
    if (!link) return false;
    sessions.delete(sessionId);
    roots.delete(sessionId);
    await link.cancel();
    await link.flushed();
    await deps.release(link.composed);
    return true;
  }

  /** The permission modes as ACP session modes; each says whether commands run in pion's sandbox. */
  function modes(link: SessionLink): acp.SessionModeState | undefined {
    const gate = link.composed.permissions;
    if (!gate) return undefined;
    const box = link.composed.sandbox?.policy;
    const sandboxed = box ? `; commands run in the ${box.mode} sandbox${box.network ? "" : ", without network"}` : "";
    return {
      currentModeId: gate.mode,
      availableModes: PERMISSION_MODES.map((id) => ({ id, name: MODE_NAMES[id].name, description: `${MODE_NAMES[id].description}${sandboxed}` })),
    };
  }

  function configOptions(link: SessionLink): acp.SessionConfigOption[] {
    const s = link.composed.session;
    const models = s.availableModels();
    const current = s.model;
    const out: acp.SessionConfigOption[] = [];
    if (current) {
      out.push({
        id: "model",
        name: "Model",
        category: "model",
        type: "select",
        currentValue: `${current.provider}/${current.id}`,
        options: models.map((m) => ({ value: `${m.provider}/${m.id}`, name: m.name ?? m.id, description: m.provider })),
      });
    }
    const levels = s.availableThinkingLevels();
    if (levels.length > 1) {
      out.push({
        id: "thinking",
        name: "Thinking",
        category: "thought_level",
        type: "select",
        currentValue: s.thinkingLevel,
        options: levels.map((l) => ({ value: l, name: l })),
      });
    }
    return out;
  }

  /**
   * The session's title when it has one (a name, a stored first prompt) and its prompt templates,
   * skills and extension commands, sent after the response that made the session.
   */
  function announceCommands(link: SessionLink): void {
    const title = currentTitle(link.composed.session);
    if (title !== undefined) setTimeout(() => link.send(infoUpdate(title)), 0);
    const commands = link.composed.commands() as { name: string; description?: string }[];
    if (commands.length === 0) return;
    const availableCommands = commands.map((c) => ({ name: c.name, description: c.description ?? "", input: { hint: "arguments" } }));
    setTimeout(() => link.send({ sessionUpdate: "available_commands_update", availableCommands }), 0);
  }

  return acp
    .agent({ name: "pion" })
    .onRequest("initialize", ({ params }) => {
      clientCaps = params.clientCapabilities;
      // `fork` is in the SDK's unstable schema only (the stable type has no field for it).
      const sessionCapabilities: unstable.SessionCapabilities = {
        list: {},
        resume: {},
        close: {},
        fork: {},
        delete: {},
        additionalDirectories: {},
      };
      return {
        // ACP: the requested version when the agent speaks it, else the latest it does. pion speaks
        // only v1, so that is the answer to any request (a client that cannot speak it disconnects).
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "pion", title: "pion", version: VERSION },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities,
        },
        authMethods: [
          {
            id: "environment",
            name: "API key in the environment",
            description: `pion reads provider keys from its environment (${deps.keyHint}) or $PION_HOME/models.json; set one before starting it`,
          },
        ],
      };
    })
    .onRequest("authenticate", ({ params }) => {
      if (params.methodId !== "environment") throw acp.RequestError.invalidParams({ field: "methodId" }, `Unknown auth method: ${params.methodId}`);
      // Keys are read from the environment at start: authenticating can only confirm one is there.
      if (!deps.hasKey()) throw acp.RequestError.authRequired(undefined, `No provider key found: set ${deps.keyHint} before starting pion`);
      return {};
    })
    .onRequest("session/new", async ({ params, client }) => {
      const link = await open(client, params.cwd, params.mcpServers ?? [], { additionalDirectories: params.additionalDirectories });
      announceRecoveries(client);
      announceCommands(link);
      return { sessionId: link.sessionId, modes: modes(link), configOptions: configOptions(link) };
    })
    .onRequest("session/load", async ({ params, client }) => {
      await closeLink(params.sessionId);
      const link = await open(client, params.cwd, params.mcpServers ?? [], { resume: params.sessionId, additionalDirectories: params.additionalDirectories });
      announceRecoveries(client);
      for (const m of link.composed.session.messages()) {
        for (const update of replayMessage(m, params.cwd)) await client.notify("session/update", { sessionId: link.sessionId, update });
      }
      announceCommands(link);
      return { modes: modes(link), configOptions: configOptions(link) };
    })
    .onRequest("session/resume", async ({ params, client }) => {
      // A session live in this process is reattached as it is, unless the editor names other
      // additional directories (the request's list is the session's whole list): then it is
      // reopened with them, as a stored one is opened, without replaying it.
      let link = sessions.get(params.sessionId);
      const dirs = params.additionalDirectories ?? [];
      if (link && (roots.get(params.sessionId) ?? []).join("\0") !== dirs.join("\0")) {
        await closeLink(params.sessionId);
        link = undefined;
      }
      if (!link) {
        link = await open(client, params.cwd, params.mcpServers ?? [], { resume: params.sessionId, additionalDirectories: dirs });
        announceCommands(link);
      }
      return { modes: modes(link), configOptions: configOptions(link) };
    })
    .onRequest("session/close", async ({ params }) => {
      if (!(await closeLink(params.sessionId))) throw acp.RequestError.sessionNotFound(params.sessionId);
      return {};
    })
    .onRequest("session/fork", parseFork, async ({ params, client }): Promise<unstable.ForkSessionResponse> => {
      const link = await open(client, params.cwd, params.mcpServers, { fork: params.sessionId, additionalDirectories: params.additionalDirectories });
      // Opening the source to copy it gave up its writer lock, which a live source still needs.
      if (sessions.has(params.sessionId)) deps.store.acquireSession(params.sessionId);
      announceCommands(link);
      return { sessionId: link.sessionId, modes: modes(link), configOptions: configOptions(link) };
    })
    .onRequest("session/delete", async ({ params }) => {
      // Live here: closed first (its run ends, its lock goes). Held by another live process: refused, kept.
      const wasLive = await closeLink(params.sessionId);
      try {
        deps.store.deleteSession(params.sessionId);
      } catch (err) {
        const code = (err as { code?: unknown }).code;
        // A live session that never got an entry was never stored: closing it was all there was.
        if (code === "unknown_session") {
          if (wasLive) return {};
          throw acp.RequestError.sessionNotFound(params.sessionId);
        }
        if (code === "session_locked") throw acp.RequestError.invalidRequest({ sessionId: params.sessionId }, `${errorMessage(err)}; close it there first`);
        throw acp.RequestError.internalError(undefined, errorMessage(err));
      }
      return {};
    })
    .onRequest("session/set_mode", ({ params }) => {
      const link = get(params.sessionId);
      const gate = link.composed.permissions;
      if (!gate || !(PERMISSION_MODES as readonly string[]).includes(params.modeId)) {
        throw acp.RequestError.invalidParams({ field: "modeId" }, `Unknown mode: ${params.modeId}; expected ${PERMISSION_MODES.join(", ")}`);
      }
      gate.mode = params.modeId as PermissionMode;
      link.send({ sessionUpdate: "current_mode_update", currentModeId: gate.mode });
      return {};
    })
    .onRequest("session/list", ({ params, client }) => {
      const page = deps.store.listSessions({ cwd: params.cwd ?? undefined, cursor: params.cursor ?? undefined });
      announceRecoveries(client);
      return {
        sessions: page.sessions.map((s) => ({
          sessionId: s.sessionId,
          cwd: s.cwd,
          title: sessionTitle(s.name, s.firstMessage) ?? null,
          updatedAt: s.updatedAt,
          ...(roots.has(s.sessionId) ? { additionalDirectories: roots.get(s.sessionId) } : {}),
        })),
        ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
      };
    })
    .onRequest("session/set_config_option", ({ params }) => {
      const link = get(params.sessionId);
      const s = link.composed.session;
      const value = String(params.value);
      if (params.configId === "model") {
        const model = s.availableModels().find((m) => `${m.provider}/${m.id}` === value);
        if (!model) throw acp.RequestError.invalidParams({ field: "value" }, `Unknown model: ${value}`);
        s.setModel(model);
      } else if (params.configId === "thinking") {
        if (!s.availableThinkingLevels().includes(value as never)) throw acp.RequestError.invalidParams({ field: "value" }, `Unknown thinking level: ${value}`);
        s.setThinkingLevel(value as never);
      } else throw acp.RequestError.invalidParams({ field: "configId" }, `Unknown config option: ${params.configId}`);
      return { configOptions: configOptions(link) };
    })
    .onRequest("session/prompt", async ({ params, signal }) => {
      const link = get(params.sessionId);
      try {
        return await link.prompt(params.prompt, signal);
      } catch (err) {
        throw acp.RequestError.internalError(undefined, errorMessage(err));
      }
    })
    .onNotification("session/cancel", async ({ params }) => {
      await sessions.get(params.sessionId)?.cancel();
    });
}

const ForkParams = v.object({
  sessionId: v.string(),
  cwd: v.string(),
  mcpServers: v.optional(v.array(v.custom<acp.McpServer>((x) => typeof x === "object" && x !== null, "an MCP server object")), []),
  additionalDirectories: v.optional(v.array(v.string())),
});

/** `session/fork` params (unstable schema; the stable SDK passes them unchecked): invalid params name the field. */
function parseFork(params: unknown): v.InferOutput<typeof ForkParams> {
  const r = v.safeParse(ForkParams, params);
  if (!r.success) throw acp.RequestError.invalidParams(undefined, v.summarize(r.issues));
  return r.output;
}
