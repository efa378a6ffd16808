import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { loadExtensions } from "../../../src/extensions/loader.ts";
import { ToolArgumentError, type ToolResult } from "../../../src/tools/tool.ts";
import { fakePort, fixture } from "./fake-port.ts";

async function load(...names: string[]) {
  const fake = fakePort();
  const runner = await loadExtensions(names.map(fixture), fake.port);
  return { ...fake, runner };
}

const toolCtx = (onUpdate?: (p: ToolResult) => void) => ({ signal: new AbortController().signal, callId: "call_1", cwd: "/work/project", onUpdate });

describe("registerTool", () => {
  test("Type-built parameters become plain JSON Schema; metadata is kept", async () => {
    const { runner } = await load("tools.ts");
    const greet = runner.tools().find((t) => t.name === "greet")!;
    expect(greet).toMatchObject({ label: "Greet", description: "Greet someone", promptSnippet: "Greet a person by name", extensionPath: fixture("tools.ts") });
    expect(greet.parameters).toEqual({
      type: "object",
      properties: {
        name: { type: "string", description: "Who to greet" },
        times: { type: "number" },
        tone: { type: "string", enum: ["warm", "cold"] },
      },
      required: ["name"],
    });
    expect(runner.tools().map((t) => t.name)).toEqual(["greet", "sum", "fail"]);
  });

  test("execute streams updates through ctx.onUpdate and returns the final result", async () => {
    const { runner } = await load("tools.ts");
    const greet = runner.tools().find((t) => t.name === "greet")!;
    const updates: ToolResult[] = [];
    const result = await greet.execute(await greet.parse({ name: "Ada", times: 2 }), toolCtx((p) => updates.push(p)));
    expect(updates).toEqual([
      { content: [{ type: "text", text: "thinking of a greeting" }], details: { step: 1 } },
      { content: [{ type: "text", text: "almost there" }], details: { step: 2 } },
    ]);
    expect(result).toEqual({
      content: [{ type: "text", text: "Hello, Ada!Hello, Ada!" }],
      details: { toolCallId: "call_1", cwd: "/work/project", mode: "rpc" },
    });
  });

  test("arguments are checked against the schema before execution", async () => {
    const { runner } = await load("tools.ts");
    const [greet, sum] = runner.tools();
    await expect(greet!.parse({})).rejects.toThrow(ToolArgumentError);
    await expect(greet!.parse({ name: "x", tone: "lukewarm" })).rejects.toThrow("tone");
    await expect(sum!.parse({ a: 1, b: 2, c: 3 })).rejects.toThrow("c: unknown field");
    await expect(sum!.parse({ a: "one", b: 2 })).rejects.toThrow("a: expected number, got string");
    // Loose arguments are coerced first, as the reference coerces them: "1" for a number is 1.
    expect(await sum!.parse({ a: "1", b: 2 })).toEqual({ a: 1, b: 2 });
    expect(await sum!.execute(await sum!.parse({ a: 2, b: 3 }), toolCtx())).toEqual({ content: [{ type: "text", text: "5" }] });
  });

  test("a parameters schema pion cannot check fails registerTool, so the extension does not load", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "pion-ext-")), "odd-schema.ts");
    writeFileSync(
      path,
      `export default function (pi) {
        pi.registerTool({ name: "odd", description: "d", parameters: { type: "object", properties: { n: { type: "number", divisibleBy: 3 } } }, execute: async () => "x" });
      }\n`,
    );
    const fake = fakePort();
    const runner = await loadExtensions([path], fake.port);
    expect(runner.tools()).toEqual([]);
    expect(fake.errors()).toMatchObject([{ event: "load", error: expect.stringContaining('pi.registerTool("odd"): its parameters schema cannot be checked: #/properties/n/divisibleBy') }]);
  });

  test("a throwing execute rejects, for the loop to turn into an error result", async () => {
    const { runner, errors } = await load("tools.ts");
    const fail = runner.tools().find((t) => t.name === "fail")!;
    await expect(fail.execute(await fail.parse({}), toolCtx())).rejects.toThrow("tool failed on purpose");
    expect(errors()).toEqual([]);
  });

  test("tools registered later (from a command) appear on the next tools() call", async () => {
    const { runner } = await load("tools.ts");
    expect(await runner.runCommand("/add-echo shout")).toBe(true);
    const shout = runner.tools().find((t) => t.name === "shout")!;
    expect(await shout.execute(await shout.parse({ message: "hey" }), toolCtx())).toEqual({ content: [{ type: "text", text: "hey" }] });
  });
});

describe("registerCommand", () => {
  test("commands() lists name, description, path and where the extension came from; runCommand passes the raw argument text", async () => {
    const { runner, entry } = await load("ui.ts", "chain.ts");
    const cli = { path: fixture("ui.ts"), source: "cli", scope: "temporary", origin: "top-level" } as const;
    expect(runner.commands().slice(0, 2)).toEqual([
      { name: "dialog", description: "Open one dialog: /dialog <select|confirm|input|editor> [timeoutMs]", path: fixture("ui.ts"), sourceInfo: cli },
      { name: "fire", description: "Every fire-and-forget and degraded UI method", path: fixture("ui.ts"), sourceInfo: cli },
    ]);
    expect(runner.commands().find((c) => c.name === "bus")).toEqual({ name: "bus", path: fixture("ui.ts"), sourceInfo: cli });
    expect(await runner.runCommand("/bus  two  spaces ")).toBe(true);
    expect(entry("bus")).toEqual([{ args: " two  spaces " }]);
  });

  test("runCommand is false for text that is not an extension command", async () => {
    const { runner } = await load("ui.ts");
    expect(await runner.runCommand("hello")).toBe(false);
    expect(await runner.runCommand("/nope args")).toBe(false);
    expect(await runner.runCommand("/skill:foo")).toBe(false);
  });

  test("the same name from two extensions gets :1 and :2 in load order", async () => {
    const { runner } = await load("async-factory.js", "async-factory.js");
    expect(runner.commands().map((c) => c.name)).toEqual(["async-ready:1", "async-ready:2"]);
    expect(await runner.runCommand("/async-ready:2")).toBe(true);
    expect(await runner.runCommand("/async-ready")).toBe(false);
  });

  test("a throwing handler is reported with event command and still counts as handled", async () => {
    const { runner, errors } = await load("ui.ts");
    expect(await runner.runCommand("/crash")).toBe(true);
    expect(errors()).toEqual([{ type: "extension_error", extensionPath: fixture("ui.ts"), event: "command", error: "command crashed" }]);
  });
});
