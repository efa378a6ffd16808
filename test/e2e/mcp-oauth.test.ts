import { afterAll, describe, expect, setDefaultTimeout, test } from "bun:test";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeOAuth } from "../support/fake-oauth.ts";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, runPion, spawnPiped, tempDirs, writeFakeModels } from "../support/pion.ts";

setDefaultTimeout(60_000);
const stops: (() => unknown)[] = [];
afterAll(() => stops.forEach((s) => s()));

/** Runs `pion mcp login NAME`; the approved authorization's redirect goes to the loopback callback, or is pasted on stdin. */
async function login(dirs: { home: string; cwd: string }, name: string, how: "callback" | "paste") {
  const proc = spawnPiped(["mcp", "login", name, "--timeout", "30"], dirs, { stdin: "pipe" });
  const dec = new TextDecoder();
  let err = "";
  const reader = proc.stderr.getReader();
  while (!/https?:\/\/\S+authorize\S*/.test(err)) {
    const { value, done } = await reader.read();
    if (done) break;
    err += dec.decode(value);
  }
  const authorizeUrl = /(https?:\/\/\S+authorize\S*)/.exec(err)?.[1];
  if (!authorizeUrl) throw new Error(`no authorization URL: ${err}`);
  // The "browser": the authorization server approves at once and redirects.
  const res = await fetch(authorizeUrl, { redirect: "manual" });
  const location = res.headers.get("location")!;
  if (how === "callback") expect(await (await fetch(location)).text()).toContain("Signed in");
  else {
    proc.stdin.write(`${location}\n`);
    proc.stdin.flush();
  }
  const rest = (async () => {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      err += dec.decode(value);
    }
  })();
  const code = await proc.exited;
  await rest;
  return { code, stderr: err, authorizeUrl };
}

describe("MCP OAuth", () => {
  test("needs sign-in, login (loopback and pasted URL) with discovery, DCR and PKCE, a 401 refreshes the token, logout deletes", async () => {
    const oauth = startFakeOAuth();
    stops.push(oauth.stop);
    const fake = startFakeProvider();
    stops.push(() => fake.stop());
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    writeFileSync(join(dirs.home, "mcp.json"), JSON.stringify({ mcpServers: { secure: { url: oauth.url, exposure: "direct", oauth: { scope: "mcp:tools" } } } }));

    const before = await runPion(["mcp", "list", "--json"], dirs);
    expect(before.code).toBe(1);
    expect(JSON.parse(before.stdout).servers[0]).toMatchObject({ name: "secure", state: "failed", needsSignIn: true });

    // A session started before the sign-in reports it and picks the tokens up on its next run.
    const early = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    const status = await early.waitFor((r) => r.type === "mcp_status" && r.name === "secure" && r.state === "failed", 0, 30000);
    expect(status).toMatchObject({ needsSignIn: true, error: expect.stringContaining("needs sign-in") });

    const first = await login(dirs, "secure", "callback");
    expect(first.stderr).toContain('Signed in to "secure"');
    expect(first.code).toBe(0);
    const u = new URL(first.authorizeUrl);
    expect(u.searchParams.get("code_challenge_method")).toBe("S256");
    expect(u.searchParams.get("scope")).toBe("mcp:tools");
    expect(oauth.clients.get("client-1")!.client_name).toBe("pion");
    const authFile = join(dirs.home, "mcp-auth.json");
    expect(statSync(authFile).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(authFile, "utf8")).servers[`secure ${oauth.url}`];
    expect(stored.tokens.access_token).toStartWith("at-");

    fake.enqueue({ blocks: [{ type: "text", text: "signed in now" }] });
    await early.request({ type: "prompt", message: "again" });
    await early.waitFor("agent_settled");
    expect(((fake.requests.at(-1)!.body as { tools: { name: string }[] }).tools ?? []).map((t) => t.name)).toContain("mcp__secure__whoami");
    await early.close();

    const listed = await runPion(["mcp", "list"], dirs);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain("whoami");

    // A session: the token stops working; the 401 makes the SDK refresh it and the call succeeds.
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
    await p.waitFor((r) => r.type === "mcp_status" && r.name === "secure" && r.state === "connected", 0, 30000);
    oauth.expireAccessTokens();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "w", name: "mcp__secure__whoami", arguments: {} }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    await p.request({ type: "prompt", message: "who" });
    await p.waitFor("agent_settled");
    expect(p.records.find((r) => r.type === "tool_execution_end" && r.toolCallId === "w")).toMatchObject({ isError: false, result: { content: [{ text: "signed in" }] } });
    expect(oauth.grants).toContain("refresh_token");
    const state = await p.request({ type: "get_state" });
    const sessionFile = (state.data as { sessionFile: string }).sessionFile;
    await p.close();
    const tokens = JSON.parse(readFileSync(authFile, "utf8")).servers[`secure ${oauth.url}`].tokens;
    expect(readFileSync(sessionFile, "utf8")).not.toContain(tokens.access_token);

    const out = await runPion(["mcp", "logout", "secure"], dirs);
    expect(out.code).toBe(0);
    expect(JSON.parse(readFileSync(authFile, "utf8")).servers).toEqual({});
    expect((await runPion(["mcp", "list"], dirs)).code).toBe(1);

    const pasted = await login(dirs, "secure", "paste");
    expect(pasted.code).toBe(0);
    expect((await runPion(["mcp", "list"], dirs)).code).toBe(0);
  });
});
