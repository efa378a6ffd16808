import { describe, expect, test } from "bun:test";
import { addEntry } from "../../../src/mcp/cli-add.ts";

describe("pion mcp add options", () => {
  test("the docs' examples: a stdio server with -l before the name, an HTTP server with a bearer token variable", () => {
    expect(addEntry(["-l", "tools", "--env", "API_KEY=${TOOLS_KEY}", "--", "uvx", "tools-mcp"])).toEqual({
      name: "tools",
      local: true,
      entry: { command: "uvx", args: ["tools-mcp"], env: { API_KEY: "${TOOLS_KEY}" } },
    });
    expect(addEntry(["docs", "--url", "https://example.com/mcp", "--bearer-token-env-var", "DOCS_TOKEN"]).entry).toEqual({
      url: "https://example.com/mcp",
      headers: { Authorization: "Bearer ${DOCS_TOKEN}" },
    });
  });

  test("oauth options, exposure, description and cwd", () => {
    const http = addEntry(["x", "--url", "https://m/mcp", "--oauth-client-id", "id", "--oauth-client-secret", "${S}", "--oauth-callback-port", "8765", "--oauth-client-name", "Claude Code", "--exposure", "deferred", "--description", "Docs"]);
    expect(http.entry).toEqual({ url: "https://m/mcp", oauth: { clientId: "id", clientSecret: "${S}", callbackPort: 8765, clientName: "Claude Code" }, exposure: "deferred", description: "Docs" });
    expect(addEntry(["y", "--url", "https://m/mcp", "--oauth-client-registration", "dcr"]).entry).toEqual({ url: "https://m/mcp", oauth: { clientRegistration: "dcr" } });
    expect(addEntry(["z", "--cwd", "sub", "--", "srv"]).entry).toEqual({ command: "srv", cwd: "sub" });
  });

  test("bad combinations are refused", () => {
    expect(() => addEntry(["a", "--exposure", "sometimes", "--", "x"])).toThrow("--exposure");
    expect(() => addEntry(["a", "--header", "K=V", "--", "x"])).toThrow("--header applies only");
    expect(() => addEntry(["a", "--url", "https://m", "--env", "K=V"])).toThrow("--env applies only");
    expect(() => addEntry(["a", "--url", "https://m", "--oauth-client-registration", "cimd", "--oauth-client-id", "i"])).toThrow("cimd");
    expect(() => addEntry(["a", "--url", "https://m", "--oauth-callback-port", "0"])).toThrow("port");
    expect(() => addEntry(["a", "--bogus"])).toThrow("Unknown option: --bogus");
    expect(() => addEntry(["a"])).toThrow("either");
    expect(() => addEntry(["--url", "https://m"])).toThrow("usage");
  });
});
