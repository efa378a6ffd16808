import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";

const REF = process.env.PION_REFERENCE_PKG;
const P = referenceModules()["pi-coding-agent"] as Record<string, any>;
const refTest = REF ? test : test.skip;
const ref = async (): Promise<Record<string, any>> => import(join(REF!, "dist/index.js"));

/** How a call ends: its value's shape, or the error it throws or rejects with. */
async function outcome(f: () => unknown): Promise<unknown> {
  try {
    const v = await f();
    return { ok: typeof v };
  } catch (err) {
    return { threw: (err as Error).constructor.name, message: (err as Error).message };
  }
}

/** Every call an extension could make of the four names here, and how each ends. */
async function calls(m: Record<string, any>) {
  const updates: unknown[] = [];
  const definition = m.createPowerShellToolDefinition("/tmp");
  const tool = m.createPowerShellTool("/tmp");
  const ops = m.createLocalPowerShellOperations();
  return {
    config: await outcome(() => m.getPowerShellConfig()),
    ops: await outcome(() => m.createLocalPowerShellOperations()),
    exec: await outcome(() => ops.exec("Get-ChildItem", "/tmp", { onData() {} })),
    execAborted: await outcome(() => ops.exec("Get-ChildItem", "/tmp", { onData() {}, signal: AbortSignal.abort() })),
    definition: [definition.name, definition.label, definition.parameters.required, Object.keys(definition.parameters.properties).sort(), typeof definition.promptSnippet],
    tool: [tool.name, tool.label, typeof tool.execute],
    execute: await outcome(() => definition.execute("c1", { command: "dir" }, undefined, (u: unknown) => updates.push(u))),
    toolExecute: await outcome(() => tool.execute("c2", { command: "dir" })),
    // The host sees the tool start (an empty partial result) before the command fails.
    updates: updates.map((u) => (u as { content: unknown }).content),
  };
}

/** A definition given its own operations runs commands through them. */
async function elsewhere(m: Record<string, any>, exitCode: number) {
  const seen: string[] = [];
  const operations = {
    exec: async (command: string, _cwd: string, o: { onData(d: Buffer): void }) => {
      seen.push(command);
      o.onData(Buffer.from(`ran ${command}`));
      return { exitCode };
    },
  };
  const r = await m.createPowerShellToolDefinition("/tmp", { operations }).execute("c3", { command: "Get-Date" }, undefined, undefined, undefined);
  return { seen, text: r.content[0].text, isError: r.isError === true, structured: { output: r.structuredContent.output, exit_code: r.structuredContent.exit_code } };
}

describe("PowerShell off Windows", () => {
  test("getPowerShellConfig throws; the definitions are built and their commands fail with the same error", async () => {
    const c = await calls(P);
    const notHere = { threw: "Error", message: "The powershell tool is only available on Windows." };
    expect(c).toMatchObject({ config: notHere, ops: { ok: "object" }, exec: notHere, execute: notHere, toolExecute: notHere, updates: [[]] });
    expect(c.definition).toEqual(["powershell", "powershell", ["command"], ["command", "timeout"], "string"]);
  });

  refTest("every call ends as the reference's does on Linux", async () => {
    expect(await calls(P)).toEqual(await calls(await ref()));
  });

  refTest("given operations, a definition runs through them as the reference's does", async () => {
    const R = await ref();
    for (const code of [0, 3]) expect(await elsewhere(P, code)).toEqual(await elsewhere(R, code));
  });
});
