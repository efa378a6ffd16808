import { afterAll } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Tool, ToolContext, ToolResult } from "../../../src/tools/tool.ts";

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A fresh temp folder, removed after the file's tests. */
export function tmp(): string {
  const dir = mkdtempSync(join(tmpdir(), "pion-tools-"));
  dirs.push(dir);
  return dir;
}

export function context(cwd: string, extra: Partial<ToolContext> = {}): ToolContext {
  return { signal: new AbortController().signal, callId: "call-1", cwd, ...extra };
}

/** Parses raw arguments the way the loop does, then executes. */
export async function run<P>(tool: Tool<P>, args: unknown, ctx: ToolContext): Promise<ToolResult> {
  return tool.execute(await tool.parse(args), ctx);
}

export function textOf(result: ToolResult): string {
  return result.content.flatMap((c) => (c.type === "text" ? [c.text] : [])).join("\n");
}
