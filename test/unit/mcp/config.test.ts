import { describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exposureOf } from "../../../src/mcp/exposure.ts";
import { expandVars, loadMcpConfig, serverCredentials, toServerConfig, type McpServerConfig } from "../../../src/mcp/config.ts";

function dirs(user: unknown, project?: unknown) {
  const root = mkdtempSync(join(tmpdir(), "pion-mcp-config-"));
  const home = join(root, "home");
  const cwd = join(root, "cwd");
  mkdirSync(home, { recursive: true });
  mkdirSync(join(cwd, ".pion"), { recursive: true });
  writeFileSync(join(home, "mcp.json"), JSON.stringify(user));
  if (project !== undefined) writeFileSync(join(cwd, ".pion", "mcp.json"), JSON.stringify(project));
  return { home, cwd };
}

describe("mcp config", () => {
  test("stdio and http entries, with ${VAR} in args, env and headers", () => {
    const d = dirs({
      mcpServers: {
        local: { command: "srv", args: ["--token=${TOK}"], env: { A: "x${TOK}y" }, timeout: 5 },
        remote: { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${TOK}" } },
      },
    });
    const c = loadMcpConfig({ ...d, env: { TOK: "t0k" }, projectTrusted: false });
    expect(c.errors).toEqual([]);
    expect(c.servers[0]).toMatchObject({ name: "local", transport: "stdio", command: "srv", args: ["--token=t0k"], env: { A: "xt0ky" }, timeoutMs: 5000, enabled: true, cwd: d.cwd });
    expect(c.servers[1]).toMatchObject({ name: "remote", transport: "http", url: "https://example.com/mcp", headers: { Authorization: "Bearer t0k" }, timeoutMs: 60000 });
  });

  test("the variables ${VAR} reads into env and headers are credentials; args and the shell's own variables are not", () => {
    const env = { TOK: "t0k", HDR: "h", HOME: "/home/u", PATH: "/bin", PWD: "/w", ARG: "a" };
    const local = toServerConfig("local", { command: "srv", args: ["--x=${ARG}"], env: { A: "${TOK}", P: "${PATH}:${HOME}/bin", D: "${PWD}" } }, "f", env, "/");
    const remote = toServerConfig("remote", { url: "https://example.com/mcp", headers: { Authorization: "Bearer ${HDR}", X: "${TOK}" } }, "f", env, "/");
    expect([local, remote].map((c) => ("credentialVars" in c ? c.credentialVars : c.error))).toEqual([["TOK"], ["HDR", "TOK"]]);
    expect(serverCredentials([local, remote].filter((c): c is McpServerConfig => !("error" in c)))).toEqual([
      { label: "TOK", envNames: ["TOK"] },
      { label: "HDR", envNames: ["HDR"] },
    ]);
  });

  test("a missing variable, a bad name, SSE, OAuth and an entry without command or url are errors for that server only", () => {
    const d = dirs({
      mcpServers: {
        ok: { command: "srv" },
        nokey: { command: "srv", env: { K: "${NOPE}" } },
        "bad name": { command: "srv" },
        old: { type: "sse", url: "https://example.com/sse" },
        oauth: { url: "https://example.com/mcp", oauth: { clientRegistration: "cimd", clientId: "x" } },
        empty: { enabled: true, description: "nothing to run" },
        wrongtype: { command: 5 },
      },
    });
    const c = loadMcpConfig({ ...d, env: {}, projectTrusted: false });
    expect(c.servers.map((s) => s.name)).toEqual(["ok"]);
    const byName = Object.fromEntries(c.errors.map((e) => [e.name, e.error]));
    expect(byName.nokey).toContain("NOPE");
    expect(byName["bad name"]).toContain("Invalid server name");
    expect(byName.old).toContain("SSE");
    expect(byName.oauth).toContain("cimd");
    expect(byName.empty).toContain('needs a "command"');
    expect(byName.wrongtype).toContain("command");
  });

  test("the project file is read only when trusted; its entries replace or adjust the user's", () => {
    const d = dirs(
      { mcpServers: { shared: { command: "user-srv", env: { K: "v" } }, other: { command: "o" } } },
      { mcpServers: { shared: { enabled: false }, other: { command: "project-srv" }, extra: { url: "http://127.0.0.1:1/mcp" } } },
    );
    const untrusted = loadMcpConfig({ ...d, env: {}, projectTrusted: false });
    expect(untrusted.servers.map((s) => [s.name, s.enabled])).toEqual([["shared", true], ["other", true]]);
    const trusted = loadMcpConfig({ ...d, env: {}, projectTrusted: true });
    const shared = trusted.servers.find((s) => s.name === "shared")!;
    expect(shared).toMatchObject({ enabled: false, command: "user-srv", env: { K: "v" } });
    expect(trusted.servers.find((s) => s.name === "other")).toMatchObject({ command: "project-srv" });
    expect(trusted.servers.map((s) => s.name)).toContain("extra");
  });

  test("an invalid file is one error naming the file; a missing one is no servers", () => {
    const root = mkdtempSync(join(tmpdir(), "pion-mcp-config-"));
    writeFileSync(join(root, "mcp.json"), "{ not json");
    const c = loadMcpConfig({ home: root, cwd: root, env: {}, projectTrusted: false });
    expect(c.servers).toEqual([]);
    expect(c.errors[0]!.error).toContain(join(root, "mcp.json"));
    expect(loadMcpConfig({ home: join(root, "none"), cwd: root, env: {}, projectTrusted: true })).toEqual({ servers: [], errors: [] });
  });

  test("exposure: the server's, exact tool names before patterns, the first matching pattern, unknown values rejected", () => {
    const cfg = toServerConfig("s", { command: "x", exposure: "deferred", toolExposure: { "get_*": "codemode", get_me: "direct", "*": "hidden", "delete_*": "direct" } }, "f", {}, "/");
    if ("error" in cfg) throw new Error(cfg.error);
    expect(cfg.exposure).toBe("deferred");
    expect(exposureOf(cfg, "get_me")).toBe("direct");
    expect(exposureOf(cfg, "get_issue")).toBe("codemode");
    expect(exposureOf(cfg, "delete_repo")).toBe("hidden");
    const plain = toServerConfig("s", { command: "x" }, "f", {}, "/");
    expect("exposure" in plain && plain.exposure).toBe("codemode");
    const alias = toServerConfig("s", { command: "x", exposure: "codemode-deferred" }, "f", {}, "/");
    expect("exposure" in alias && alias.exposure).toBe("codemode");
    const bad = toServerConfig("s", { command: "x", exposure: "sometimes" }, "f", {}, "/");
    expect("error" in bad && bad.error).toContain('unknown exposure "sometimes"');
    const badTool = toServerConfig("s", { command: "x", toolExposure: { a: "never" } }, "f", {}, "/");
    expect("error" in badTool && badTool.error).toContain('"a"');
  });

  test("expandVars leaves text without variables alone", () => {
    expect(expandVars("plain $HOME {x}", {}, "w")).toBe("plain $HOME {x}");
    expect(() => expandVars("${A}", {}, "env.X of \"s\"")).toThrow('Environment variable A is not set (used in env.X of "s")');
  });
});
