/**
 * pion's side of the MCP SDK's OAuth client (`OAuthClientProvider`): the SDK discovers the
 * authorization server (protected-resource metadata, then its metadata, issuer checked),
 * registers a client when none is configured, runs PKCE and refreshes tokens on a 401; this
 * class keeps what it needs in the auth store and decides what a redirect means. In a session
 * there is nobody to send to a browser: a needed sign-in is recorded and the connection fails
 * with "needs sign-in". `pion mcp login` passes `onAuthorize` to show the URL instead.
 */
import type { OAuthClientProvider, OAuthDiscoveryState } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { runValueCommand } from "../credentials/config-value.ts";
import { authKey, type McpAuthStore } from "./auth-store.ts";
import type { HttpServerConfig } from "./config.ts";
import type { McpGuard } from "./connection.ts";

export interface ProviderOptions {
  store: McpAuthStore;
  guard: Pick<McpGuard, "addCredentials">;
  /** Interactive sign-in: the loopback redirect URI and what to do with the authorization URL. */
  login?: { redirectUri: string; onAuthorize: (url: URL) => void; state: string };
}

/** The loopback redirect URI of a server's configuration: `callbackUrl` (a port added when it has none) or `callbackPort`. */
export function redirectUriFor(cfg: HttpServerConfig, port: number): string {
  const o = cfg.oauth;
  if (o?.callbackUrl) {
    const u = new URL(o.callbackUrl);
    if (u.port !== "") return o.callbackUrl;
    u.port = String(port);
    return u.href;
  }
  return `http://127.0.0.1:${port}/callback`;
}

export class PionOAuthProvider implements OAuthClientProvider {
  /** Set when the server needs a sign-in nobody can do here (a session). */
  needsSignIn = false;
  private readonly key: string;
  private metadataDoc?: Promise<OAuthDiscoveryState | undefined>;

  constructor(
    private readonly cfg: HttpServerConfig,
    private readonly o: ProviderOptions,
  ) {
    this.key = authKey(cfg.name, cfg.url);
  }

  get redirectUrl(): string {
    return this.o.login?.redirectUri ?? this.o.store.get(this.key).redirectUri ?? redirectUriFor(this.cfg, this.cfg.oauth?.callbackPort ?? 0);
  }

  get clientMetadata(): OAuthClientMetadata {
    const o = this.cfg.oauth;
    return {
      client_name: o?.clientName ?? "pion",
      redirect_uris: [this.redirectUrl],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: o?.clientSecret !== undefined ? "client_secret_post" : "none",
      ...(o?.scope ? { scope: o.scope } : {}),
    };
  }

  state(): string {
    return this.o.login?.state ?? crypto.randomUUID();
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    const o = this.cfg.oauth;
    if (o?.clientId) {
      const secret = o.clientSecret?.startsWith("!") ? runValueCommand(o.clientSecret.slice(1), process.env) : o.clientSecret;
      if (secret) this.o.guard.addCredentials([{ label: `oauth.clientSecret of "${this.cfg.name}"`, envNames: [], value: secret }]);
      return { client_id: o.clientId, ...(secret ? { client_secret: secret } : {}) };
    }
    const stored = this.o.store.get(this.key);
    // A client registered for another redirect URI cannot finish this sign-in.
    const client = stored.client as OAuthClientInformationMixed | undefined;
    if (client && this.o.login && "redirect_uris" in client && Array.isArray(client.redirect_uris) && !client.redirect_uris.includes(this.redirectUrl)) return undefined;
    return client;
  }

  async saveClientInformation(info: OAuthClientInformationMixed): Promise<void> {
    await this.o.store.update(this.key, (r) => ({ ...r, client: info as unknown as Record<string, unknown>, redirectUri: this.redirectUrl }));
  }

  tokens(): OAuthTokens | undefined {
    const t = this.o.store.get(this.key).tokens;
    if (t) this.o.guard.addCredentials([t.access_token, t.refresh_token].filter((x): x is string => !!x).map((value) => ({ label: `${this.cfg.name} OAuth token`, envNames: [], value })));
    return t;
  }

  async saveTokens(tokens: OAuthTokens): Promise<void> {
    await this.o.store.update(this.key, (r) => ({ ...r, tokens, savedAt: Date.now(), redirectUri: this.redirectUrl, codeVerifier: undefined }));
    this.tokens();
  }

  redirectToAuthorization(url: URL): void {
    if (this.o.login) this.o.login.onAuthorize(url);
    else this.needsSignIn = true;
  }

  async saveCodeVerifier(codeVerifier: string): Promise<void> {
    await this.o.store.update(this.key, (r) => ({ ...r, codeVerifier }));
  }

  codeVerifier(): string {
    const v = this.o.store.get(this.key).codeVerifier;
    if (!v) throw new Error("no sign-in in progress (no PKCE code verifier stored)");
    return v;
  }

  async invalidateCredentials(scope: "all" | "client" | "tokens" | "verifier" | "discovery"): Promise<void> {
    await this.o.store.update(this.key, (r) => {
      if (scope === "all") return undefined;
      const next = { ...r };
      if (scope === "client") delete next.client;
      if (scope === "tokens") delete next.tokens;
      if (scope === "verifier") delete next.codeVerifier;
      if (scope === "discovery") delete next.discovery;
      return next;
    });
  }

  async saveDiscoveryState(state: OAuthDiscoveryState): Promise<void> {
    if (this.cfg.oauth?.authServerMetadataUrl) return;
    await this.o.store.update(this.key, (r) => ({ ...r, discovery: state as unknown as Record<string, unknown> }));
  }

  /** With `authServerMetadataUrl`, that document, trusted as configured; otherwise what discovery found before. */
  discoveryState(): Promise<OAuthDiscoveryState | undefined> | OAuthDiscoveryState | undefined {
    const url = this.cfg.oauth?.authServerMetadataUrl;
    if (!url) return this.o.store.get(this.key).discovery as OAuthDiscoveryState | undefined;
    return (this.metadataDoc ??= (async () => {
      const res = await fetch(url, { headers: { accept: "application/json" } });
      if (!res.ok) throw new Error(`authServerMetadataUrl ${url} answered HTTP ${res.status}`);
      const metadata = (await res.json()) as { issuer?: string };
      if (typeof metadata.issuer !== "string") throw new Error(`authServerMetadataUrl ${url} has no issuer`);
      return { authorizationServerUrl: metadata.issuer, authorizationServerMetadata: metadata } as OAuthDiscoveryState;
    })());
  }
}
