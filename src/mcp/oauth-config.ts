/**
 * The `oauth` object of an HTTP server in mcp.json: a registered client, the loopback redirect,
 * scopes, the name sent when registering, how to identify the client and where the
 * authorization server's metadata is. Pure: checks the values as the reference's docs/mcp.md
 * describes them and answers a message for the first problem.
 */
import * as v from "valibot";
import { describeIssues } from "../util/issues.ts";

export interface OAuthConfig {
  clientId?: string;
  clientSecret?: string;
  callbackPort?: number;
  callbackUrl?: string;
  scope?: string;
  clientName?: string;
  clientRegistration: "auto" | "dcr" | "cimd";
  authServerMetadataUrl?: string;
}

const Schema = v.strictObject({
  clientId: v.optional(v.string()),
  clientSecret: v.optional(v.string()),
  callbackPort: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
  callbackUrl: v.optional(v.string()),
  scope: v.optional(v.string()),
  clientName: v.optional(v.string()),
  clientRegistration: v.optional(v.picklist(["auto", "dcr", "cimd"])),
  authServerMetadataUrl: v.optional(v.string()),
});

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/** The checked configuration, or a message naming what is wrong. `expand` fills `${VAR}` / keeps `!command` in the secret. */
export function parseOAuth(raw: unknown, expand: (value: string, key: string) => string): OAuthConfig | string {
  const parsed = v.safeParse(Schema, raw);
  if (!parsed.success) return `invalid oauth: ${describeIssues(parsed.issues)}`;
  const o = parsed.output;
  const out: OAuthConfig = { ...o, clientRegistration: o.clientRegistration ?? "auto" };
  if (o.clientSecret !== undefined) out.clientSecret = expand(o.clientSecret, "clientSecret");
  if (o.callbackUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(o.callbackUrl);
    } catch {
      return `oauth.callbackUrl is not a URL: ${o.callbackUrl}`;
    }
    if (url.protocol !== "http:" || !LOOPBACK.has(url.hostname)) return "oauth.callbackUrl must use http on localhost, 127.0.0.1 or [::1]";
  }
  if (o.authServerMetadataUrl !== undefined) {
    let url: URL;
    try {
      url = new URL(o.authServerMetadataUrl);
    } catch {
      return `oauth.authServerMetadataUrl is not a URL: ${o.authServerMetadataUrl}`;
    }
    if (url.protocol !== "https:" && !(url.protocol === "http:" && LOOPBACK.has(url.hostname))) {
      return "oauth.authServerMetadataUrl must use https (http only on localhost, 127.0.0.1 or [::1])";
    }
  }
  if (out.clientRegistration === "cimd") {
    if (o.clientId !== undefined || o.clientName !== undefined) return 'oauth.clientRegistration "cimd" cannot be combined with clientId or clientName';
    if (o.callbackUrl !== undefined) {
      const url = new URL(o.callbackUrl);
      if (url.hostname === "[::1]" || url.pathname !== "/callback") return 'oauth.clientRegistration "cimd" needs a callbackUrl on localhost or 127.0.0.1 with the path /callback';
    }
  }
  return out;
}
