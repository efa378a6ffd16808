/**
 * pion as an ACP agent (stable v1): initialize, sessions created, loaded and listed from the
 * store, prompts streamed as `session/update`, cancel, and the model and thinking level as
 * session config options. Several sessions live side by side; each has its own run.
 */
import * as acp from "@agentclientprotocol/sdk";
import { VERSION } from "../config.ts";
import type { ComposeHooks, Composed } from "../modes/compose.ts";
import type { McpServerConfig } from "../mcp/config.ts";
import type { SessionStore } from "../store/store.ts";
import { errorMessage } from "../util/errors.ts";
import { PERMISSION_MODES, type PermissionMode } from "../permissions/rules.ts";
import { acpApprovals } from "./approvals.ts";
import { clientTextOps, RecordingFiles } from "./files.ts";
import { SessionLink } from "./session-link.ts";
import { replayMessage } from "./updates.ts";

export interface AcpAgentDeps {
  store: SessionStore;
  /** Builds a pion session for `cwd` (resuming `resume` when given) around the shared store. */
  compose: (o: { cwd: string; resume?: string }, hooks: ComposeHooks) => Promise<Composed>;
  /** MCP servers from `session/new` as pion configurations (a bad entry throws naming it). */
  toMcpConfigs: (servers: readonly acp.McpServer[], cwd: string) => McpServerConfig[];
  /** Names of the environment variables that hold provider keys, for messages. */
  keyHint: string;
  /** Whether some provider has a key (what the "environment" auth method can check). */
  hasKey: () => boolean;
}

const MODE_NAMES: Record<PermissionMode, { name: string; description: string }> = {
  auto: { name: "Auto", description: "Every tool call runs unless a rule denies it" },
  ask: { name: "Ask", description: "Calls that can change something wait for your approval" },
  "read-only": { name: "Read only", description: "Only read-only tools run" },
};

export function createAcpAgent(deps: AcpAgentDeps): acp.AgentApp {
  const sessions = new Map<string, SessionLink>();
  let clientCaps: acp.ClientCapabilities | undefined;

  const get = (sessionId: string): SessionLink => {
    const link = sessions.get(sessionId);
    if (!link) throw acp.RequestError.sessionNotFound(sessionId);
    return link;
  };

  async function open(client: acp.AgentContext, cwd: string, mcpServers: readonly acp.McpServer[], resume?: string): Promise<SessionLink> {
    if (!cwd.startsWith("/")) throw acp.RequestError.invalidParams({ field: "cwd" }, "cwd must be an absolute path");
    let mcp: McpServerConfig[];
    try {
      mcp = deps.toMcpConfigs(mcpServers, cwd);
    } catch (err) {
      throw acp.RequestError.invalidParams({ field: "mcpServers" }, errorMessage(err));
    }
    let sessionId = "";
    const files = new RecordingFiles(clientTextOps(client, clientCaps?.fs, () => sessionId));
    let composed: Composed;
    try {
      composed = await deps.compose({ cwd, resume }, { store: deps.store, files, permissionGate: true, todoTool: true });
    } catch (err) {
      const msg = errorMessage(err);
      if (msg.startsWith("No API key")) throw acp.RequestError.authRequired(undefined, msg);
      if (/not found/i.test(msg) && resume) throw acp.RequestError.sessionNotFound(resume);
      throw acp.RequestError.internalError(undefined, msg);
    }
    if (!composed.session.model) {
      await composed.close();
      composed.session.release();
      throw acp.RequestError.authRequired(
        undefined,
        `No model with an API key is configured: set ${deps.keyHint}, or configure a provider in $PION_HOME/models.json`,
      );
    }
    sessionId = composed.session.sessionId;
    if (composed.permissions) composed.permissions.port = acpApprovals(client, () => sessionId);
    const link = new SessionLink(composed, (update) => client.notify("session/update", { sessionId, update }), files);
    sessions.set(sessionId, link);
    // The editor's servers join the user's (mcp.json, a trusted project's), never replace them.
    if (mcp.length > 0) await composed.addMcpServers(mcp);
    return link;
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

  /** Prompt templates, skills and extension commands, sent after the response that made the session. */
  function announceCommands(link: SessionLink): void {
    const commands = link.composed.commands() as { name: string; description?: string }[];
    if (commands.length === 0) return;
    const availableCommands = commands.map((c) => ({ name: c.name, description: c.description ?? "", input: { hint: "arguments" } }));
    setTimeout(() => link.send({ sessionUpdate: "available_commands_update", availableCommands }), 0);
  }

  return acp
    .agent({ name: "pion" })
    .onRequest("initialize", ({ params }) => {
      clientCaps = params.clientCapabilities;
      return {
        // ACP: the requested version when the agent speaks it, else the latest it does. pion speaks
        // only v1, so that is the answer to any request (a client that cannot speak it disconnects).
        protocolVersion: acp.PROTOCOL_VERSION,
        agentInfo: { name: "pion", title: "pion", version: VERSION },
        agentCapabilities: {
          loadSession: true,
          promptCapabilities: { image: true, audio: false, embeddedContext: true },
          mcpCapabilities: { http: true, sse: false },
          sessionCapabilities: { list: {} },
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
      const link = await open(client, params.cwd, params.mcpServers ?? []);
      announceCommands(link);
      return { sessionId: link.sessionId, modes: modes(link), configOptions: configOptions(link) };
    })
    .onRequest("session/load", async ({ params, client }) => {
      const existing = sessions.get(params.sessionId);
      if (existing) {
        sessions.delete(params.sessionId);
        await existing.composed.close();
        existing.composed.session.release();
      }
      const link = await open(client, params.cwd, params.mcpServers ?? [], params.sessionId);
      for (const m of link.composed.session.messages()) {
        for (const update of replayMessage(m, params.cwd)) await client.notify("session/update", { sessionId: link.sessionId, update });
      }
      announceCommands(link);
      return { modes: modes(link), configOptions: configOptions(link) };
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
    .onRequest("session/list", ({ params }) => {
      const page = deps.store.listSessions({ cwd: params.cwd ?? undefined, cursor: params.cursor ?? undefined });
      return {
        sessions: page.sessions.map((s) => ({
          sessionId: s.sessionId,
          cwd: s.cwd,
          title: s.name ?? s.firstMessage?.slice(0, 80) ?? null,
          updatedAt: s.updatedAt,
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
