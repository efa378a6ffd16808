import { describe, expect, test } from "bun:test";
import { Runner } from "../../../src/extensions/runner.ts";
import { configOf } from "../../../src/extensions/surface/coding-builtin-extensions.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { toServerConfig, type McpConfig } from "../../../src/mcp/config.ts";
import type { ExtensionMcpHost } from "../../../src/extensions/types.ts";
import { fakePort } from "./fake-port.ts";

const pion = referenceModules()["pi-coding-agent"] as Record<string, (...args: unknown[]) => (pi: unknown) => void>;
const parse = (name: string, raw: unknown, source: string) => toServerConfig(name, raw, source, { TOKEN: "t0k" }, "/work");

/** A runner whose one extension is `factory`, with an MCP host that records what it is given. */
function withFactory(factory: (pi: unknown) => void, o: { disabled?: boolean } = {}) {
  const fake = fakePort();
  const added: McpConfig[] = [];
  const host: ExtensionMcpHost = { home: "/nonexistent-home", env: {}, disabled: o.disabled ?? false, configure: async (c) => void added.push(c), status: () => [], command: () => ({ configFile: "/nonexistent-home/mcp.json", status: () => [] }), toolSearch: () => undefined, codemode: () => Promise.reject(new Error("no codemode in this test")) };
  const runner = new Runner({ ...fake.port, mcp: () => host });
  const { api } = runner.add("/ext/builtin.ts");
  factory(api);
  return { ...fake, runner, added };
}

describe("configOf", () => {
  test("each entry's config is read as an mcp.json entry; bad ones become errors, the last of a name wins", () => {
    const r = configOf(
      {
        servers: [
          { name: "a", config: { command: "srv", args: ["${TOKEN}"] } },
          { name: "b", config: { url: "ftp://x" }, source: "/cfg.json" },
          { name: "a", config: { url: "https://a.example/mcp", exposure: "direct" } },
          { name: "bad name", config: { command: "x" } },
        ],
        errors: ["from the loader"],
        autoEnableCodemode: false,
      },
      parse,
      "extension",
    );
    expect(r.servers.map((s) => [s.name, s.transport, s.exposure, s.source])).toEqual([["a", "http", "direct", "extension"]]);
    expect(r.errors.map((e) => [e.name, e.source])).toEqual([
      ["*", "extension"],
      ["b", "/cfg.json"],
      ["bad name", "extension"],
    ]);
    expect(r.errors[0]!.error).toBe("from the loader");
    expect(r.errors[1]!.error).toContain("url must be http or https");
    expect(r.autoEnableCodemode).toBe(false);
  });

  test("${VAR} in an entry reads pion's environment", () => {
    const [s] = configOf({ servers: [{ name: "a", config: { command: "srv", args: ["--token=${TOKEN}"] } }] }, parse, "x").servers;
    expect(s).toMatchObject({ transport: "stdio", args: ["--token=t0k"], credentialVars: [] });
  });

  test("a result that is not a config is one error", () => {
    expect(configOf(undefined as never, parse, "x")).toEqual({ servers: [], errors: [{ name: "*", source: "x", transport: "unknown", error: "loadConfig must return { servers: [...], errors: [...] }" }] });
  });
});

describe("the factories register what the reference's do", () => {
  test("createMcpExtension: the /mcp command; on session_start its servers go to pion's MCP", async () => {
    const { runner, added, errors } = withFactory(pion.createMcpExtension!({ loadConfig: () => ({ servers: [{ name: "s", config: { command: "srv" } }], errors: [] }) }));
    expect(runner.commands().map((c) => c.name)).toEqual(["mcp"]);
    expect(runner.tools()).toEqual([]);
    await runner.notify("session_start", { reason: "startup" });
    expect(errors()).toEqual([]);
    expect(added.map((c) => c.servers.map((s) => [s.name, s.transport]))).toEqual([[["s", "stdio"]]]);
  });

  test("createMcpExtension: --no-mcp starts nothing; a custom transport is refused", async () => {
    const { runner, added, frames } = withFactory(pion.createMcpExtension!({ loadConfig: () => ({ servers: [{ name: "s", config: { command: "srv" } }], errors: [] }) }), { disabled: true });
    await runner.notify("session_start", { reason: "startup" });
    expect(added).toEqual([]);
    expect(frames.some((f) => f.method === "notify" && String(f.message).includes("--no-mcp"))).toBe(true);
    expect(() => pion.createMcpExtension!({ createTransport: () => undefined })).toThrow("createTransport is not available in pion");
  });

  test("createCodemodeExtension and createToolSearchExtension: one tool each, pion's own", () => {
    const codemode = withFactory(pion.createCodemodeExtension!({ mode: "on" })).runner.tools();
    expect(codemode.map((t) => [t.name, t.annotations?.readOnlyHint])).toEqual([["codemode", true]]);
    expect(codemode[0]!.parameters).toMatchObject({ required: ["code"] });
    const search = withFactory(pion.createToolSearchExtension!()).runner.tools();
    expect(search.map((t) => t.name)).toEqual(["tool_search"]);
    expect(search[0]!.parameters).toMatchObject({ required: ["query"] });
  });

  test("tool_search without MCP servers finds nothing", async () => {
    const [tool] = withFactory(pion.createToolSearchExtension!()).runner.tools();
    const args = await tool!.parse!({ query: "anything" });
    const r = await tool!.execute(args, { signal: new AbortController().signal, callId: "c", cwd: "/" });
    expect(r.content).toEqual([{ type: "text", text: "No matching tools found." }]);
  });
});

describe("the whole-program entry points", () => {
  test("main and runRpcMode are pion's, refused where pion's own program owns stdin and stdout (they run in `pion run`, program-run.test.ts); runPrintMode is pion's (surface-print-mode.test.ts)", async () => {
    const { behaviourOf } = await import("../../../src/extensions/surface/export-surface.ts");
    for (const name of ["main", "runRpcMode", "runPrintMode"]) expect(behaviourOf(pion[name])).toBe("pion");
    await expect(pion.main!(["--version"])).rejects.toThrow(/^main cannot run here: it takes over the process's stdin and stdout.*RpcClient.*pion run <program>/);
    await expect(pion.runRpcMode!({})).rejects.toThrow(/^runRpcMode cannot run here: .*stdin and stdout.*pion --mode rpc/);
  });
});
