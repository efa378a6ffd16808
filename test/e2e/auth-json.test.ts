/**
 * Credentials as the reference agent stores and names them: auth.json entries (a literal,
 * `$NAME`, `!command` key, an `env` of its own, OAuth logins refreshed against the token
 * endpoint), the precedence --api-key > auth.json > models.json > environment, the reference's
 * variable names, Anthropic's token variables, and `pion auth check`.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, tempDirs, writeFakeModels } from "../support/pion.ts";

const MODEL = "anthropic/claude-sonnet-4-5";
const fake = startFakeProvider();
afterAll(() => fake.stop());

/** PION_HOME with models.json moving anthropic (and zai) to the fake, plus `auth` as auth.json. */
function home(o: { auth?: Record<string, unknown>; anthropicKey?: string } = {}) {
  const dirs = tempDirs();
  const anthropic = { baseUrl: fake.url, ...(o.anthropicKey ? { apiKey: o.anthropicKey } : {}) };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers: { anthropic, zai: { baseUrl: `${fake.url}/v1` } } }));
  if (o.auth) writeFileSync(join(dirs.home, "auth.json"), JSON.stringify(o.auth, null, 2), { mode: 0o600 });
  return dirs;
}

/** One print-mode prompt; the request the fake got (undefined when pion sent none). */
async function ask(dirs: { home: string; cwd: string }, env: Record<string, string> = {}, args: string[] = []) {
  const before = fake.requests.length;
  fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
  const run = await runPion(["-p", "--no-session", "--model", MODEL, ...args, "hi"], { ...dirs, env });
  // A run that sends nothing leaves its reply queued: every reply is the same, so the next takes it.
  return { ...run, req: fake.requests.length > before ? fake.requests.at(-1) : undefined };
}

const check = (dirs: { home: string; cwd: string }, args: string[] = [], env: Record<string, string> = {}) =>
  runPion(["auth", "check", ...args], { ...dirs, env });

describe("auth.json api_key entries", () => {
  test("a literal key is sent, and auth check names auth.json as its source", async () => {
    const dirs = home({ auth: { anthropic: { type: "api_key", key: "sk-literal-from-auth-json" } } });
    const { code, req } = await ask(dirs);
    expect(code).toBe(0);
    expect(req!.headers["x-api-key"]).toBe("sk-literal-from-auth-json");
    const c = await check(dirs, ["--model", MODEL]);
    expect(c.code).toBe(0);
    expect(c.stdout).toBe(`${MODEL}: credential from auth.json\n`);
    expect(c.stdout + c.stderr).not.toContain("sk-literal");
    const json = await check(dirs, ["--model", MODEL, "--json"]);
    expect(JSON.parse(json.stdout)).toEqual({ ok: true, provider: "anthropic", model: "claude-sonnet-4-5", credential: "auth.json" });
    const flag = await check(dirs, ["--model", MODEL, "--api-key", "sk-flag"]);
    expect(flag.stdout).toBe(`${MODEL}: credential from --api-key\n`);
  });

  test("$NAME reads the environment; !command runs once and takes its trimmed output", async () => {
    const byName = await ask(home({ auth: { anthropic: { type: "api_key", key: "$MY_ANTHROPIC" } } }), { MY_ANTHROPIC: "sk-from-variable" });
    expect(byName.req!.headers["x-api-key"]).toBe("sk-from-variable");
    const byCommand = await ask(home({ auth: { anthropic: { type: "api_key", key: "!printf '  sk-from-command\\n'" } } }));
    expect(byCommand.req!.headers["x-api-key"]).toBe("sk-from-command");
  });

  test("the entry's env is the provider's environment: over the process's, for templates and commands", async () => {
    const env = { SHARED: "from-process" };
    const template = await ask(home({ auth: { anthropic: { type: "api_key", key: "${SHARED}", env: { SHARED: "sk-from-entry-env" } } } }), env);
    expect(template.req!.headers["x-api-key"]).toBe("sk-from-entry-env");
    const command = await ask(home({ auth: { anthropic: { type: "api_key", key: "!echo cmd-$SHARED", env: { SHARED: "entry" } } } }), env);
    expect(command.req!.headers["x-api-key"]).toBe("cmd-entry");
    // No key: the provider's own variable, set by the entry.
    const dirs = home({ auth: { anthropic: { type: "api_key", env: { ANTHROPIC_API_KEY: "sk-entry-variable" } } } });
    expect((await ask(dirs, { ANTHROPIC_API_KEY: "sk-process-variable" })).req!.headers["x-api-key"]).toBe("sk-entry-variable");
  });

  test("a command that fails, prints nothing or hangs past the timeout gives no key; the environment is next", async () => {
    for (const key of ["!exit 3", "!true", "!sleep 5; echo late"]) {
      const dirs = home({ auth: { anthropic: { type: "api_key", key } } });
      const t0 = Date.now();
      const missing = await check(dirs, ["--model", MODEL], { PION_COMMAND_TIMEOUT_MS: "300" });
      expect(missing.code).toBe(1);
      expect(missing.stderr).toContain("ANTHROPIC_API_KEY");
      expect(missing.stderr).toContain(join(dirs.home, "auth.json"));
      expect(Date.now() - t0).toBeLessThan(4000);
      const fallback = await check(dirs, ["--model", MODEL], { PION_COMMAND_TIMEOUT_MS: "300", ANTHROPIC_API_KEY: "sk-env" });
      expect(fallback.stdout).toBe(`${MODEL}: credential from ANTHROPIC_API_KEY\n`);
    }
  });

  test("precedence: --api-key, then auth.json, then models.json apiKey, then the environment", async () => {
    const env = { ANTHROPIC_API_KEY: "sk-level-env" };
    const auth = { anthropic: { type: "api_key", key: "sk-level-auth" } };
    const all = home({ auth, anthropicKey: "sk-level-models" });
    expect((await ask(all, env, ["--api-key", "sk-level-flag"])).req!.headers["x-api-key"]).toBe("sk-level-flag");
    expect((await ask(all, env)).req!.headers["x-api-key"]).toBe("sk-level-auth");
    expect((await ask(home({ anthropicKey: "sk-level-models" }), env)).req!.headers["x-api-key"]).toBe("sk-level-models");
    expect((await ask(home(), env)).req!.headers["x-api-key"]).toBe("sk-level-env");
  });

  test("a malformed auth.json is one warning naming the file, and the run goes on", async () => {
    const dirs = home();
    writeFileSync(join(dirs.home, "auth.json"), "{ not json");
    const { code, stderr, req } = await ask(dirs, { ANTHROPIC_API_KEY: "sk-still-works" });
    expect(code).toBe(0);
    expect(req!.headers["x-api-key"]).toBe("sk-still-works");
    const warnings = stderr.split("\n").filter((l) => l.includes(join(dirs.home, "auth.json")));
    expect(warnings).toHaveLength(1);
    expect(stderr).not.toMatch(/\bat .*\.ts:\d+/);
  });
});

/** A token endpoint: answers with `reply` and records each body. */
function tokenEndpoint(reply: () => Response) {
  const bodies: string[] = [];
  const server = Bun.serve({
    port: 0,
    fetch: async (req) => {
      bodies.push(await req.text());
      return reply();
    },
  });
  return { url: `http://127.0.0.1:${server.port}/token`, bodies, stop: () => server.stop(true) };
}

describe("OAuth logins", () => {
  const login = (access: string, expires: number) => ({ type: "oauth", access, refresh: "refresh-old-token", expires });

  test("a valid login goes out as Bearer with the OAuth beta flags and Claude Code's identity first", async () => {
    const { req, code } = await ask(home({ auth: { anthropic: login("sk-ant-oat01-still-valid", Date.now() + 3_600_000) } }));
    expect(code).toBe(0);
    expect(req!.headers.authorization).toBe("Bearer sk-ant-oat01-still-valid");
    expect(req!.headers["x-api-key"]).toBeUndefined();
    expect(req!.headers["anthropic-beta"]).toContain("oauth-2025-04-20");
    const system = (req!.body as { system: { text: string }[] }).system;
    expect(system[0]!.text).toContain("Claude Code");
    expect(system.length).toBeGreaterThan(1);
  });

  test("an expired login is refreshed under the lock and written back; other entries stay", async () => {
    const endpoint = tokenEndpoint(() => Response.json({ access_token: "sk-ant-oat01-refreshed", refresh_token: "refresh-new-token", expires_in: 3600 }));
    const other = { type: "api_key", key: "sk-other-provider" };
    const dirs = home({ auth: { openai: other, anthropic: { ...login("sk-ant-oat01-expired", Date.now() - 1000), note: "kept" } } });
    const { code, req } = await ask(dirs, { PION_OAUTH_TOKEN_URL_ANTHROPIC: endpoint.url });
    endpoint.stop();
    expect(code).toBe(0);
    expect(req!.headers.authorization).toBe("Bearer sk-ant-oat01-refreshed");
    expect(endpoint.bodies).toHaveLength(1);
    expect(JSON.parse(endpoint.bodies[0]!)).toMatchObject({ grant_type: "refresh_token", refresh_token: "refresh-old-token" });
    const file = join(dirs.home, "auth.json");
    const stored = JSON.parse(readFileSync(file, "utf8"));
    expect(stored.openai).toEqual(other);
    expect(stored.anthropic).toMatchObject({ type: "oauth", access: "sk-ant-oat01-refreshed", refresh: "refresh-new-token", note: "kept" });
    expect(stored.anthropic.expires).toBeGreaterThan(Date.now() + 3_000_000);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  test("a refresh that fails tells the user to log in again with the reference", async () => {
    const endpoint = tokenEndpoint(() => Response.json({ error: "invalid_grant" }, { status: 400 }));
    const dirs = home({ auth: { anthropic: login("sk-ant-oat01-expired", Date.now() - 1000) } });
    const { code, stderr, req } = await ask(dirs, { PION_OAUTH_TOKEN_URL_ANTHROPIC: endpoint.url });
    const c = await check(dirs, ["--model", MODEL], { PION_OAUTH_TOKEN_URL_ANTHROPIC: endpoint.url });
    endpoint.stop();
    expect(req).toBeUndefined();
    expect(code).toBe(1);
    expect(stderr).toContain("/login anthropic");
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("/login anthropic");
    expect(stderr + c.stderr).not.toContain("refresh-old-token");
  });

  test("a login pion cannot refresh says so and points at the reference", async () => {
    const dirs = home({ auth: { openrouter: login("sk-or-login", Date.now() - 1000) } });
    const c = await check(dirs, ["--provider", "openrouter"]);
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("/login openrouter");
  });

  test("Copilot: the GitHub login is exchanged for a Copilot token, sent with the editor headers", async () => {
    const seen: Record<string, string>[] = [];
    const server = Bun.serve({
      port: 0,
      fetch: (req) => {
        seen.push(Object.fromEntries(req.headers));
        return Response.json({ token: "tid=new-copilot-token;exp=1", expires_at: Math.floor(Date.now() / 1000) + 1800 });
      },
    });
    const dirs = tempDirs();
    writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers: { "github-copilot": { baseUrl: `${fake.url}/v1` } } }));
    const stored = { type: "oauth", access: "tid=old", refresh: "gho_github-login", expires: Date.now() - 1000, enterpriseUrl: "" };
    writeFileSync(join(dirs.home, "auth.json"), JSON.stringify({ "github-copilot": stored }));
    const before = fake.requests.length;
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const env = { PION_OAUTH_TOKEN_URL_GITHUB_COPILOT: `http://127.0.0.1:${server.port}/token` };
    const run = await runPion(["-p", "--no-session", "--model", "github-copilot/claude-haiku-4.5", "hi"], { ...dirs, env });
    server.stop(true);
    expect(run.code).toBe(0);
    expect(seen[0]!.authorization).toBe("Bearer gho_github-login");
    const req = fake.requests[before]!;
    expect(req.headers.authorization).toBe("Bearer tid=new-copilot-token;exp=1");
    expect(req.headers["copilot-integration-id"]).toBe("vscode-chat");
    const file = JSON.parse(readFileSync(join(dirs.home, "auth.json"), "utf8"))["github-copilot"];
    expect(file).toMatchObject({ access: "tid=new-copilot-token;exp=1", refresh: "gho_github-login", enterpriseUrl: "" });
  });

  test("an entry under the reference's provider id counts for pion's (meta for llama, kimi-coding for kimi-for-coding)", async () => {
    const dirs = home({ auth: { meta: { type: "api_key", key: "meta-key" }, "kimi-coding": login("kimi-access", Date.now() + 3_600_000) } });
    expect((await check(dirs, ["--provider", "llama"])).stdout).toContain("credential from auth.json");
    expect((await check(dirs, ["--provider", "kimi-for-coding"])).stdout).toContain("credential from auth.json");
  });
});

describe("environment variables", () => {
  test("ANTHROPIC_OAUTH_TOKEN is an OAuth token; ANTHROPIC_AUTH_TOKEN goes out as Bearer", async () => {
    const oauth = await ask(home(), { ANTHROPIC_OAUTH_TOKEN: "sk-ant-oat01-from-env" });
    expect(oauth.req!.headers.authorization).toBe("Bearer sk-ant-oat01-from-env");
    expect(oauth.req!.headers["anthropic-beta"]).toContain("oauth-2025-04-20");
    const bearer = await ask(home(), { ANTHROPIC_AUTH_TOKEN: "gateway-token-123", ANTHROPIC_API_KEY: "sk-loses" });
    expect(bearer.req!.headers.authorization).toBe("Bearer gateway-token-123");
    expect(bearer.req!.headers["x-api-key"]).toBeUndefined();
    expect((await check(home(), ["--model", MODEL], { ANTHROPIC_AUTH_TOKEN: "t" })).stdout).toContain("ANTHROPIC_AUTH_TOKEN");
  });

  test("the reference's names: ZAI_API_KEY and META_API_KEY beside models.dev's", async () => {
    const zai = await check(home(), ["--provider", "zai"], { ZAI_API_KEY: "z" });
    expect(zai.code).toBe(0);
    expect(zai.stdout).toContain("credential from ZAI_API_KEY");
    expect((await check(home(), ["--provider", "zai"], { ZHIPU_API_KEY: "z" })).stdout).toContain("ZHIPU_API_KEY");
    expect((await check(home(), ["--provider", "llama"], { META_API_KEY: "m" })).stdout).toContain("META_API_KEY");
  });

  test("GITHUB_TOKEN alone does not make Copilot usable; COPILOT_GITHUB_TOKEN does; GitHub Models keeps GITHUB_TOKEN", async () => {
    const dirs = home();
    const refused = await check(dirs, ["--provider", "github-copilot"], { GITHUB_TOKEN: "ghp_x" });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("COPILOT_GITHUB_TOKEN");
    expect((await check(dirs, ["--provider", "github-copilot"], { COPILOT_GITHUB_TOKEN: "c" })).code).toBe(0);
    expect((await check(dirs, ["--provider", "github-models"], { GITHUB_TOKEN: "ghp_x" })).code).toBe(0);
  });

  test("auth check with nothing configured exits 1 naming where it looked", async () => {
    const c = await check(home());
    expect(c.code).toBe(1);
    expect(c.stderr).toContain("auth.json");
    expect(c.stdout).toBe("");
  });
});

describe("masking", () => {
  test("auth.json keys, command outputs and login tokens are masked in tool output and kept from child processes", async () => {
    const t = crypto.randomUUID().replaceAll("-", "");
    // Its own fake: replies the other tests left queued would answer the tool turn.
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    const model = { id: "m", reasoning: false, input: ["text"], contextWindow: 200000, maxTokens: 8192 };
    writeFakeModels(dirs.home, fake.url, { fake: { baseUrl: fake.url, api: "anthropic-messages", models: [model] } });
    const auth = {
      fake: { type: "api_key", key: `!echo sk-cmd-${t}`, env: { FAKE_SIDE_TOKEN: `side-${t}` } },
      anthropic: { type: "oauth", access: `sk-ant-oat01-access-${t}`, refresh: `refresh-${t}`, expires: Date.now() + 3_600_000 },
      openai: { type: "api_key", key: `sk-literal-${t}` },
    };
    writeFileSync(join(dirs.home, "auth.json"), JSON.stringify(auth));
    writeFileSync(join(dirs.cwd, "leak.txt"), `a sk-cmd-${t} b sk-ant-oat01-access-${t} c refresh-${t} d sk-literal-${t} e side-${t}\n`);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/m"] });
    try {
      fake.enqueue({ blocks: [{ type: "toolCall", name: "bash", arguments: { command: "cat leak.txt; env" } }] }, { blocks: [{ type: "text", text: "ok" }] });
      const from = p.records.length;
      await p.request({ type: "prompt", message: "leak" });
      await p.waitFor("agent_settled", from);
      const end = p.records.slice(from).find((r) => r.type === "tool_execution_end")!;
      const text = (end.result.content as { text: string }[]).map((c) => c.text).join("");
      expect(fake.requests.at(-2)!.headers["x-api-key"]).toBe(`sk-cmd-${t}`);
      expect(text).toContain("a [redacted:");
      expect(text).not.toContain(t);
      expect(text).not.toContain("FAKE_SIDE_TOKEN=");
    } finally {
      await p.close();
    }
  });
});
