/**
 * MCP servers and pion's credentials: every path that starts a stdio server (a session,
 * `pion mcp list`) gives it the credential guard's environment, never a provider key; and
 * the values `${VAR}` puts into an mcp.json entry's `headers` and `env` are credentials like
 * provider keys: kept from every other process pion starts, masked in what pion records.
 */
import { describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const ENV_SERVER = resolve(import.meta.dir, "../fixtures/mcp/env-server.ts");
const BUN = process.execPath;
const MODEL = { id: "m", name: "m", reasoning: false, input: ["text"], contextWindow: 100000, maxTokens: 4096 };
const tag = () => crypto.randomUUID().replaceAll("-", "");

/** A stdio server that writes the environment it got to `file`. */
const envServer = (file: string, extra: Record<string, unknown> = {}) => ({ command: BUN, args: [ENV_SERVER, file], exposure: "direct", ...extra });
const readEnv = (file: string) => JSON.parse(readFileSync(file, "utf8")) as Record<string, string>;
const writeMcp = (home: string, servers: Record<string, unknown>) => writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
/** Which of `names` are set in `env`. */
const present = (env: Record<string, string>, names: string[]) => names.filter((n) => n in env);

const waitConnected = (p: Pion, name: string): Promise<Rec> =>
  p.waitFor((r) => r.type === "mcp_status" && r.name === name && (r.state === "connected" || r.state === "failed"), 0, 30000);

setDefaultTimeout(60_000);

describe("MCP servers get the credential guard's environment", () => {
  test.concurrent("pion mcp list and a session start a stdio server without the provider keys, a models.json $VAR key included", async () => {
    const t = tag();
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url, { proxy: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "$MY_PROXY_KEY", models: [MODEL] } });
    const env = { ANTHROPIC_API_KEY: `sk-ant-${t}`, OPENAI_API_KEY: `sk-openai-${t}`, MY_PROXY_KEY: `proxy-${t}`, PLAIN_SETTING: "kept" };
    const keys = ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "MY_PROXY_KEY"];

    const listed = join(dirs.cwd, "list-env.json");
    writeMcp(dirs.home, { probe: envServer(listed) });
    const list = await runPion(["mcp", "list", "--json"], { ...dirs, env });
    expect(list.code).toBe(0);
    expect(JSON.parse(list.stdout).servers[0]).toMatchObject({ name: "probe", state: "connected" });

    const inSession = join(dirs.cwd, "session-env.json");
    writeMcp(dirs.home, { probe: envServer(inSession) });
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", "proxy/m"] });
    expect((await waitConnected(p, "probe")).state).toBe("connected");
    await p.close();

    for (const [where, file] of [["mcp list", listed], ["session", inSession]] as const) {
      const got = readEnv(file);
      expect({ where, keys: present(got, keys) }).toEqual({ where, keys: [] });
      expect({ where, plain: got.PLAIN_SETTING, path: typeof got.PATH }).toEqual({ where, plain: "kept", path: "string" });
      expect(readFileSync(file, "utf8")).not.toContain(t);
    }
    await fake.stop();
  });
});

describe("${VAR} values of mcp.json are credentials", () => {
  test.concurrent("not in the bash tool's, the RPC bash command's or another server's environment; masked in results, events, the model's context and the session", async () => {
    const t = tag();
    const fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    const ownFile = join(dirs.cwd, "own-env.json");
    const probeFile = join(dirs.cwd, "probe-env.json");
    writeMcp(dirs.home, {
      // Never connects (nothing listens on port 1): its header's variable is a credential all the same.
      remote: { url: "http://127.0.0.1:1/mcp", headers: { Authorization: "Bearer ${MY_MCP_TOKEN}" } },
      own: envServer(ownFile, { env: { SERVER_TOKEN: "${MY_SERVER_SECRET}", HOME_COPY: "${HOME}" } }),
      probe: envServer(probeFile),
    });
    const env = { MY_MCP_TOKEN: `mcp-${t}`, MY_SERVER_SECRET: `srv-${t}`, TOKEN_COPY: `Bearer mcp-${t}`, PLAIN_SETTING: "kept" };
    const secrets = ["MY_MCP_TOKEN", "MY_SERVER_SECRET", "TOKEN_COPY"];
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const names = (out: string) => out.split("\n").map((l) => l.split("=")[0]!);

    // At once, before the servers start: the host's bash command.
    const host = await p.request({ type: "bash", command: "env" });
    expect(secrets.filter((n) => names(host.data.output).includes(n))).toEqual([]);
    expect(names(host.data.output)).toContain("PLAIN_SETTING");

    expect((await waitConnected(p, "own")).state).toBe("connected");
    expect((await waitConnected(p, "probe")).state).toBe("connected");
    const own = readEnv(ownFile);
    expect({ token: own.SERVER_TOKEN, home: own.HOME_COPY, inherited: present(own, secrets) }).toEqual({ token: `srv-${t}`, home: process.env.HOME!, inherited: [] });
    const probe = readEnv(probeFile);
    expect({ leaked: present(probe, secrets), plain: probe.PLAIN_SETTING, home: probe.HOME }).toEqual({ leaked: [], plain: "kept", home: process.env.HOME! });
    expect(readFileSync(probeFile, "utf8")).not.toContain(t);

    // The model's bash tool: no variable, and a value printed anyway is masked.
    writeFileSync(join(dirs.cwd, "k.txt"), `mcp-${t} srv-${t}\n`);
    fake.enqueue({ blocks: [{ type: "toolCall", id: "b", name: "bash", arguments: { command: "cat k.txt; env" } }] }, { blocks: [{ type: "text", text: "ok" }] });
    const from = p.records.length;
    await p.request({ type: "prompt", message: "go" });
    await p.waitFor("agent_settled", from);
    const end = p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === "b")!;
    const text = (end.result.content as Rec[]).map((c) => c.text).join("");
    expect(text.split("\n")[0]).toBe("[redacted: MY_MCP_TOKEN] [redacted: MY_SERVER_SECRET]");
    expect(secrets.filter((n) => names(text).includes(n))).toEqual([]);
    expect(names(text)).toContain("PLAIN_SETTING");

    const state = await p.request({ type: "get_state" });
    await p.close();
    await fake.stop();
    expect(JSON.stringify(p.records)).not.toContain(t);
    expect(JSON.stringify(fake.requests.map((r) => r.body))).not.toContain(t);
    const jsonl = readFileSync(state.data.sessionFile, "utf8");
    expect(jsonl).toContain("[redacted: MY_MCP_TOKEN]");
    expect(jsonl).not.toContain(t);
  });
});
