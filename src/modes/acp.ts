import { toServerConfig, type McpServerConfig } from "../mcp/config.ts";
import { loadModels } from "../providers/models.ts";
import type { Composed } from "./compose.ts";
import { composeSession, sessionStorage, type CliOptions } from "./compose.ts";
import { withSettingsSessionDir } from "./session-dir.ts";

/**
 * ACP mode: the Agent Client Protocol (JSON-RPC 2.0, newline-delimited) on stdin/stdout, with the
 * official SDK (loaded only here). Sessions are made on `session/new` / `session/load`, for the
 * cwd the editor names, around one shared store. Ends when stdin closes and what was asked
 * before then is answered.
 */
export async function runAcpMode(given: CliOptions): Promise<number> {
  // One store for every session: its folder is the process cwd's (a session's own cwd may differ).
  const opts = withSettingsSessionDir(given);
  const acp = await import("@agentclientprotocol/sdk");
  const [{ createAcpAgent }, { orderInput }] = await Promise.all([import("../acp/agent.ts"), import("../acp/input-order.ts")]);
  // A damaged pion.db set aside when the store opens: told to the editor of the request that opened it.
  const recoveries: Record<string, unknown>[] = [];
  const { store } = sessionStorage(opts, (r) => recoveries.push({ movedTo: r.movedTo, recovered: r.recovered, unreadable: r.unreadable, message: r.message }));
  const open = new Set<Composed>();
  const app = createAcpAgent({
    store,
    keyHint: "ANTHROPIC_API_KEY, OPENAI_API_KEY or another provider's key variable",
    hasKey: () => loadModels(opts.home, opts.env, { apiKey: opts.apiKey }).available().length > 0,
    storeRecoveries: () => recoveries.splice(0),
    compose: async (o, hooks) => {
      // Settings and project trust are decided per session, for the cwd the editor names.
      const composed = await composeSession(
        { ...opts, cwd: o.cwd, session: o.resume, fork: o.fork, additionalDirectories: o.additionalDirectories, continue: false, mode: "acp" },
        hooks,
      );
      open.add(composed);
      return composed;
    },
    release: async (c) => {
      open.delete(c);
      await c.close();
      await c.end();
    },
    toMcpConfigs: (servers, cwd) => servers.map((s) => toMcpConfig(s, cwd, opts.env)),
  });
  const out = Bun.stdout.writer();
  const output = new WritableStream<Uint8Array>({
    async write(chunk) {
      out.write(chunk);
      await out.flush();
    },
  });
  // initialize is answered before what follows it; the end of stdin waits for every answer.
  const conn = app.connect(orderInput(acp.ndJsonStream(output, Bun.stdin.stream())));
  await conn.closed;
  for (const c of open) {
    await c.session.abort();
    await c.close();
    await c.end();
  }
  store.close();
  await out.flush();
  return 0;
}

/** An MCP server from `session/new` as pion's configuration (validated as mcp.json entries are). */
function toMcpConfig(s: import("@agentclientprotocol/sdk").McpServer, cwd: string, env: Record<string, string | undefined>): McpServerConfig {
  const pairs = (list: readonly { name: string; value: string }[] | undefined) => Object.fromEntries((list ?? []).map((p) => [p.name, p.value]));
  const raw =
    "type" in s && (s.type === "http" || s.type === "sse")
      ? { type: s.type, url: s.url, headers: pairs(s.headers) }
      : { command: (s as { command: string }).command, args: (s as { args?: string[] }).args ?? [], env: pairs((s as { env?: { name: string; value: string }[] }).env) };
  // An editor's servers are declared to the model, as editors expect of them.
  const cfg = toServerConfig(s.name, { ...raw, exposure: "direct" }, "session", env, cwd);
  if ("error" in cfg) throw new Error(cfg.error);
  return cfg;
}
