import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadMcpConfig } from "../../../src/mcp/config.ts";
import { exposureOf } from "../../../src/mcp/exposure.ts";

/** The mcp.json examples of the reference's docs/mcp.md, as a user would have them. */
const EXAMPLES: Record<string, unknown>[] = [
  { "internal-tools": { enabled: false } },
  {
    filesystem: { command: "npx", args: ["-y", "@modelcontextprotocol/server-filesystem", "."] },
    docs: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${DOCS_TOKEN}" }, description: "Search and read the product documentation" },
  },
  { sentry: { url: "https://mcp.sentry.dev/mcp" } },
  { example: { url: "https://mcp.example.com/mcp", oauth: { clientId: "my-client", clientSecret: "${EXAMPLE_SECRET}", callbackPort: 8765 } } },
  { figma: { url: "https://mcp.figma.com/mcp", oauth: { clientName: "Claude Code" } } },
  { example: { url: "https://mcp.example.com/mcp", oauth: { clientRegistration: "dcr" } } },
  { example: { url: "https://mcp.example.com/mcp", oauth: { authServerMetadataUrl: "https://example.okta.com/.well-known/openid-configuration" } } },
  { github: { url: "https://api.githubcopilot.com/mcp/", exposure: "deferred", toolExposure: { search_code: "direct", "get_*": "codemode", "delete_*": "hidden" } } },
];

describe("the reference's mcp.json examples", () => {
  test("load unchanged, with no errors", () => {
    for (const servers of EXAMPLES) {
      const home = mkdtempSync(join(tmpdir(), "pion-mcp-docs-"));
      writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: servers }));
      const c = loadMcpConfig({ home, cwd: home, env: { HOME: home, DOCS_TOKEN: "d", EXAMPLE_SECRET: "s" }, projectTrusted: false });
      // The first example only adjusts a user-level server: alone it has nothing to run.
      if ("internal-tools" in servers) continue;
      expect(c.errors).toEqual([]);
      expect(c.servers.map((s) => s.name).sort()).toEqual(Object.keys(servers).sort());
    }
  });

  test("the GitHub example's exposure rules", () => {
    const home = mkdtempSync(join(tmpdir(), "pion-mcp-docs-"));
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: EXAMPLES.at(-1) }));
    const gh = loadMcpConfig({ home, cwd: home, env: { HOME: home }, projectTrusted: false }).servers[0]!;
    expect(["search_code", "get_issue", "delete_repo", "list_prs"].map((t) => exposureOf(gh, t))).toEqual(["direct", "codemode", "hidden", "deferred"]);
  });

  test("a project entry with only enabled turns off the user's server", () => {
    const root = mkdtempSync(join(tmpdir(), "pion-mcp-docs-"));
    const home = join(root, "home");
    const cwd = join(root, "p");
    for (const d of [home, join(cwd, ".pion")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: { "internal-tools": { command: "srv", env: { K: "v" } } } }));
    writeFileSync(join(cwd, ".pion", "mcp.json"), JSON.stringify({ mcpServers: EXAMPLES[0] }));
    const c = loadMcpConfig({ home, cwd, env: {}, projectTrusted: true });
    expect(c.servers[0]).toMatchObject({ name: "internal-tools", enabled: false, command: "srv", env: { K: "v" } });
  });

  test("names differing only in - and _ are one server: the second is skipped with a message", () => {
    const home = mkdtempSync(join(tmpdir(), "pion-mcp-docs-"));
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ mcpServers: { "dev-radius": { command: "a" }, dev_radius: { command: "b" } } }));
    const c = loadMcpConfig({ home, cwd: home, env: {}, projectTrusted: false });
    expect(c.servers.map((s) => s.name)).toEqual(["dev-radius"]);
    expect(c.errors[0]!.error).toContain('same tool names as server "dev-radius"');
  });

  test("autoEnableCodemode beside mcpServers: a trusted project's value wins", () => {
    const root = mkdtempSync(join(tmpdir(), "pion-mcp-docs-"));
    const home = join(root, "home");
    const cwd = join(root, "p");
    for (const d of [home, join(cwd, ".pion")]) mkdirSync(d, { recursive: true });
    writeFileSync(join(home, "mcp.json"), JSON.stringify({ autoEnableCodemode: false, mcpServers: { a: { command: "srv" } } }));
    expect(loadMcpConfig({ home, cwd, env: {}, projectTrusted: false }).autoEnableCodemode).toBe(false);
    writeFileSync(join(cwd, ".pion", "mcp.json"), JSON.stringify({ autoEnableCodemode: true }));
    expect(loadMcpConfig({ home, cwd, env: {}, projectTrusted: true }).autoEnableCodemode).toBe(true);
  });
});
