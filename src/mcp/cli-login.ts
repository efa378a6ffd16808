/**
 * `pion mcp login NAME [-l] [--timeout S]` and `pion mcp logout NAME [-l]`. Login runs the
 * SDK's OAuth flow for one HTTP server: the authorization URL goes to stderr (pion is headless:
 * no browser is opened), and the code arrives at a loopback callback or as the redirected URL
 * pasted on stdin (a browser on another machine). Tokens go to `$PION_HOME/mcp-auth.json`.
 */
import { auth } from "@modelcontextprotocol/sdk/client/auth.js";
import { authFilePath, authKey, McpAuthStore } from "./auth-store.ts";
import type { McpCliContext } from "./cli.ts";
import { loadMcpConfig, projectConfigPath, type HttpServerConfig } from "./config.ts";
import { PionOAuthProvider, redirectUriFor } from "./oauth-provider.ts";

const DEFAULT_TIMEOUT_S = 300;

export interface LoginIo {
  /** Lines typed on stdin (a pasted redirect URL). */
  stdinLines?: () => AsyncIterable<string>;
}

export async function runLogin(sub: "login" | "logout", args: string[], ctx: McpCliContext & LoginIo): Promise<number> {
  let name: string | undefined;
  let local = false;
  let timeoutS = DEFAULT_TIMEOUT_S;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "-l" || a === "--local") local = true;
    else if (a === "--timeout" && sub === "login") {
      timeoutS = Number(args[++i]);
      if (!(timeoutS > 0)) return usage(ctx, "--timeout expects a number of seconds");
    } else if (!a.startsWith("-") && name === undefined) name = a;
    else return usage(ctx, `Unknown option: ${a}`);
  }
  if (!name) return usage(ctx, `usage: pion mcp ${sub} NAME [-l]${sub === "login" ? " [--timeout SECONDS]" : ""}`);
  const config = loadMcpConfig({ home: ctx.home, cwd: ctx.cwd, env: ctx.env, projectTrusted: ctx.projectTrusted });
  const server = config.servers.find((s) => s.name === name);
  if (!server) {
    const bad = config.errors.find((e) => e.name === name);
    ctx.err(`pion mcp: ${bad ? bad.error : `no server "${name}" is configured`}\n`);
    return 1;
  }
  if (local && server.source !== projectConfigPath(ctx.cwd) && !server.source.endsWith("/.pi/mcp.json")) {
    ctx.err(`pion mcp: server "${name}" is not defined in this project's mcp.json\n`);
    return 1;
  }
  if (server.transport !== "http") {
    ctx.err(`pion mcp: server "${name}" is a stdio server; OAuth applies to HTTP servers\n`);
    return 1;
  }
  const store = new McpAuthStore(authFilePath(ctx.home));
  if (sub === "logout") {
    const had = store.get(authKey(server.name, server.url)).tokens !== undefined;
    await store.update(authKey(server.name, server.url), () => undefined);
    ctx.err(had ? `Signed out of "${name}"\n` : `No stored sign-in for "${name}"\n`);
    return 0;
  }
  if (server.oauth?.clientRegistration === "cimd") {
    ctx.err(`pion mcp: server "${name}": pion has no Client ID Metadata Document; use "clientRegistration": "dcr" or a registered clientId\n`);
    return 1;
  }
  return login(server, store, timeoutS, ctx);
}

function usage(ctx: McpCliContext, msg: string): number {
  ctx.err(`pion mcp: ${msg}\n`);
  return 2;
}

async function login(server: HttpServerConfig, store: McpAuthStore, timeoutS: number, ctx: McpCliContext & LoginIo): Promise<number> {
  const state = crypto.randomUUID();
  const callbackPath = server.oauth?.callbackUrl ? new URL(server.oauth.callbackUrl).pathname : "/callback";
  const fixedPort = server.oauth?.callbackUrl && new URL(server.oauth.callbackUrl).port ? Number(new URL(server.oauth.callbackUrl).port) : server.oauth?.callbackPort;
  let deliver: (url: URL) => void = () => {};
  const redirected = new Promise<URL>((r) => (deliver = r));
  const callback = Bun.serve({
    hostname: "127.0.0.1",
    port: fixedPort ?? 0,
    fetch(req) {
      const url = new URL(req.url);
      if (url.pathname !== callbackPath) return new Response("not found", { status: 404 });
      deliver(url);
      const ok = url.searchParams.has("code");
      return new Response(ok ? "Signed in. You can close this page and return to pion." : "Sign-in failed; see pion's output.", { headers: { "content-type": "text/plain; charset=utf-8" } });
    },
  });
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(), timeoutS * 1000);
  try {
    const provider = new PionOAuthProvider(server, {
      store,
      guard: { addCredentials: () => {} },
      login: {
        redirectUri: redirectUriFor(server, callback.port!),
        state,
        onAuthorize: (url) => ctx.err(`Open this URL to sign in to "${server.name}":\n\n  ${url.href}\n\nWaiting for the browser; or paste the URL it was redirected to here.\n`),
      },
    });
    const fetchFn = (input: string | URL | Request, init?: RequestInit) => fetch(input, { ...init, signal: abort.signal });
    const scope = server.oauth?.scope;
    const first = await auth(provider, { serverUrl: server.url, fetchFn, ...(scope ? { scope } : {}) });
    if (first === "AUTHORIZED") {
      ctx.err(`Signed in to "${server.name}"\n`);
      return 0;
    }
    void readPasted(ctx, deliver, abort.signal);
    const url = await Promise.race([redirected, new Promise<never>((_, no) => abort.signal.addEventListener("abort", () => no(new Error(`sign-in timed out after ${timeoutS} s`))))]);
    const err = url.searchParams.get("error");
    if (err) throw new Error(`the authorization server refused: ${err}${url.searchParams.get("error_description") ? ` (${url.searchParams.get("error_description")})` : ""}`);
    if (url.searchParams.get("state") !== state) throw new Error("the redirect's state does not match this sign-in");
    const code = url.searchParams.get("code");
    if (!code) throw new Error("the redirect carries no authorization code");
    const done = await auth(provider, { serverUrl: server.url, authorizationCode: code, fetchFn, ...(scope ? { scope } : {}) });
    if (done !== "AUTHORIZED") throw new Error("the authorization server did not issue tokens");
    ctx.err(`Signed in to "${server.name}"\n`);
    return 0;
  } catch (e) {
    ctx.err(`pion mcp: sign-in to "${server.name}" failed: ${e instanceof Error ? e.message : String(e)}\n`);
    return 1;
  } finally {
    clearTimeout(timer);
    abort.abort();
    callback.stop(true);
  }
}

/** A redirected URL pasted on stdin, for a browser that cannot reach the loopback callback. */
async function readPasted(ctx: LoginIo, deliver: (url: URL) => void, signal: AbortSignal): Promise<void> {
  const lines = ctx.stdinLines?.() ?? stdinLines();
  for await (const line of lines) {
    if (signal.aborted) return;
    const text = line.trim();
    if (!text) continue;
    try {
      deliver(new URL(text));
      return;
    } catch {
      process.stderr.write("That is not a URL; paste the whole address the browser was sent to.\n");
    }
  }
}

async function* stdinLines(): AsyncIterable<string> {
  const dec = new TextDecoder();
  let buf = "";
  for await (const chunk of Bun.stdin.stream()) {
    buf += dec.decode(chunk, { stream: true });
    for (let nl = buf.indexOf("\n"); nl !== -1; nl = buf.indexOf("\n")) {
      yield buf.slice(0, nl);
      buf = buf.slice(nl + 1);
    }
  }
  if (buf) yield buf;
}
