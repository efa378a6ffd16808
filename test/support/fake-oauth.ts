/**
 * A fake OAuth authorization server (RFC 8414 metadata, dynamic client registration, an
 * authorize endpoint that approves at once, PKCE S256 checked at the token endpoint, refresh
 * tokens) and an MCP server it protects, built with the MCP SDK's server side (stateless
 * streamable HTTP): 401 with resource metadata (RFC 9728) without a valid access token.
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";

const b64url = (b: ArrayBuffer) => Buffer.from(b).toString("base64url");

export function startFakeOAuth() {
  const clients = new Map<string, { redirect_uris: string[]; client_name?: string }>();
  const codes = new Map<string, { challenge: string; clientId: string; redirectUri: string }>();
  const access = new Set<string>();
  const refresh = new Set<string>();
  const grants: string[] = [];
  let n = 0;
  const issue = () => {
    n++;
    const t = { access_token: `at-${n}-${crypto.randomUUID()}`, refresh_token: `rt-${n}-${crypto.randomUUID()}`, token_type: "Bearer", expires_in: 3600 };
    access.add(t.access_token);
    refresh.add(t.refresh_token);
    return Response.json(t);
  };
  const as = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      const base: string = `http://127.0.0.1:${as.port}`;
      if (url.pathname === "/.well-known/oauth-authorization-server") {
        return Response.json({
          issuer: base,
          authorization_endpoint: `${base}/authorize`,
          token_endpoint: `${base}/token`,
          registration_endpoint: `${base}/register`,
          response_types_supported: ["code"],
          grant_types_supported: ["authorization_code", "refresh_token"],
          code_challenge_methods_supported: ["S256"],
          token_endpoint_auth_methods_supported: ["none"],
        });
      }
      if (url.pathname === "/register" && req.method === "POST") {
        const meta = (await req.json()) as { redirect_uris: string[]; client_name?: string };
        const id = `client-${clients.size + 1}`;
        clients.set(id, meta);
        return Response.json({ ...meta, client_id: id }, { status: 201 });
      }
      if (url.pathname === "/authorize") {
        const p = url.searchParams;
        const client = clients.get(p.get("client_id") ?? "");
        const redirectUri = p.get("redirect_uri") ?? "";
        if (!client || !client.redirect_uris.includes(redirectUri)) return new Response("invalid client", { status: 400 });
        if (p.get("code_challenge_method") !== "S256" || !p.get("code_challenge")) return new Response("PKCE required", { status: 400 });
        const code = crypto.randomUUID();
        codes.set(code, { challenge: p.get("code_challenge")!, clientId: p.get("client_id")!, redirectUri });
        const to = new URL(redirectUri);
        to.searchParams.set("code", code);
        to.searchParams.set("state", p.get("state") ?? "");
        return new Response(null, { status: 302, headers: { location: to.href } });
      }
      if (url.pathname === "/token" && req.method === "POST") {
        const form = new URLSearchParams(await req.text());
        const grant = form.get("grant_type") ?? "";
        grants.push(grant);
        if (grant === "authorization_code") {
          const c = codes.get(form.get("code") ?? "");
          codes.delete(form.get("code") ?? "");
          const verifier = form.get("code_verifier") ?? "";
          const digest = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
          if (!c || c.challenge !== digest || c.redirectUri !== form.get("redirect_uri")) return Response.json({ error: "invalid_grant" }, { status: 400 });
          return issue();
        }
        if (grant === "refresh_token") {
          const rt = form.get("refresh_token") ?? "";
          if (!refresh.delete(rt)) return Response.json({ error: "invalid_grant" }, { status: 400 });
          return issue();
        }
        return Response.json({ error: "unsupported_grant_type" }, { status: 400 });
      }
      return new Response("not found", { status: 404 });
    },
  });

  const mcp = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    async fetch(req): Promise<Response> {
      const url = new URL(req.url);
      const base: string = `http://127.0.0.1:${mcp.port}`;
      if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) {
        return Response.json({ resource: `${base}/mcp`, authorization_servers: [`http://127.0.0.1:${as.port}`] });
      }
      if (url.pathname !== "/mcp") return new Response("not found", { status: 404 });
      const token = req.headers.get("authorization")?.replace(/^Bearer /, "");
      if (!token || !access.has(token)) {
        return new Response("unauthorized", { status: 401, headers: { "www-authenticate": `Bearer resource_metadata="${base}/.well-known/oauth-protected-resource/mcp"` } });
      }
      const server = new McpServer({ name: "secure", version: "1.0.0" });
      server.registerTool("whoami", { description: "Says who is signed in" }, async () => ({ content: [{ type: "text", text: "signed in" }] }));
      const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
      await server.connect(transport);
      return transport.handleRequest(req);
    },
  });

  return {
    url: `http://127.0.0.1:${mcp.port}/mcp`,
    clients,
    grants,
    /** Access tokens stop working (as when they expire); refresh tokens still do. */
    expireAccessTokens: () => access.clear(),
    stop: () => {
      as.stop(true);
      mcp.stop(true);
    },
  };
}
