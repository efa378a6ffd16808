import { describe, expect, test } from "bun:test";
import { toServerConfig } from "../../../src/mcp/config.ts";

const http = (oauth: unknown, env: Record<string, string> = {}) => toServerConfig("s", { url: "https://mcp.example.com/mcp", oauth }, "f", env, "/");
const error = (r: ReturnType<typeof http>) => ("error" in r ? r.error : undefined);

describe("oauth in mcp.json", () => {
  test("the docs' examples load; a secret reads ${VAR} and keeps a !command for the connection", () => {
    const r = http({ clientId: "my-client", clientSecret: "${EXAMPLE_SECRET}", callbackPort: 8765 }, { EXAMPLE_SECRET: "s3" });
    expect("oauth" in r && r.oauth).toEqual({ clientId: "my-client", clientSecret: "s3", callbackPort: 8765, clientRegistration: "auto" });
    expect("credentialVars" in r && r.credentialVars).toEqual(["EXAMPLE_SECRET"]);
    expect(error(http({ clientName: "Claude Code" }))).toBeUndefined();
    expect(error(http({ clientRegistration: "dcr" }))).toBeUndefined();
    expect(error(http({ authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration" }))).toBeUndefined();
    expect(error(http({ callbackUrl: "http://localhost/callback", scope: "read write" }))).toBeUndefined();
    expect("oauth" in http({ clientSecret: "!pass show x" }) && (http({ clientSecret: "!pass show x" }) as { oauth: { clientSecret: string } }).oauth.clientSecret).toBe("!pass show x");
  });

  test("bad values are errors for that server", () => {
    expect(error(http({ callbackUrl: "https://localhost/callback" }))).toContain("callbackUrl");
    expect(error(http({ callbackUrl: "http://example.com/callback" }))).toContain("callbackUrl");
    expect(error(http({ authServerMetadataUrl: "http://example.com/x" }))).toContain("https");
    expect(error(http({ authServerMetadataUrl: "http://127.0.0.1:9/x" }))).toBeUndefined();
    expect(error(http({ clientRegistration: "cimd", clientName: "x" }))).toContain("cimd");
    expect(error(http({ clientRegistration: "cimd", callbackUrl: "http://localhost:1/cb" }))).toContain("/callback");
    expect(error(http({ clientRegistration: "sometimes" }))).toContain("clientRegistration");
    expect(error(http({ callbackPort: 0 }))).toContain("callbackPort");
    expect(error(http({ unknownKey: 1 }))).toContain("unknownKey");
  });
});
