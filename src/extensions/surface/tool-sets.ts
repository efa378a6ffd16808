/**
 * The reference's tool-set helpers over the built-in tool factories (tool-factories.ts):
 * `createCodingTools` (read, bash, edit, write), `createReadOnlyTools` (read, grep, find, ls),
 * `createAllTools` (by name), each with options per tool; and the `is<Tool>ToolResult` checks
 * of a `tool_result` event's tool name.
 */
type Factory = (cwd: string, options?: unknown) => unknown;

const CODING = ["read", "bash", "edit", "write"] as const;
const READ_ONLY = ["read", "grep", "find", "ls"] as const;
const ALL = ["read", "bash", "edit", "write", "grep", "find", "ls"] as const;

const capital = (s: string) => s[0]!.toUpperCase() + s.slice(1);

export function toolSetExports(factories: Record<string, unknown>): Record<string, unknown> {
  const make = (name: string, definition: boolean, cwd: string, options?: Record<string, unknown>) =>
    (factories[`create${capital(name)}Tool${definition ? "Definition" : ""}`] as Factory)(cwd, options?.[name]);
  const set = (names: readonly string[], definition: boolean) => (cwd: string, options?: Record<string, unknown>) => names.map((n) => make(n, definition, cwd, options));
  const all = (definition: boolean) => (cwd: string, options?: Record<string, unknown>) => Object.fromEntries(ALL.map((n) => [n, make(n, definition, cwd, options)]));
  const out: Record<string, unknown> = {
    createCodingTools: set(CODING, false),
    createCodingToolDefinitions: set(CODING, true),
    createReadOnlyTools: set(READ_ONLY, false),
    createReadOnlyToolDefinitions: set(READ_ONLY, true),
    createAllTools: all(false),
    createAllToolDefinitions: all(true),
    createTool: (name: string, cwd: string, options?: Record<string, unknown>) => make(name, false, cwd, options),
    createToolDefinition: (name: string, cwd: string, options?: Record<string, unknown>) => make(name, true, cwd, options),
  };
  for (const name of [...ALL, "powershell"]) {
    const Name = name === "powershell" ? "PowerShell" : capital(name);
    out[`is${Name}ToolResult`] = (event: { toolName?: unknown }) => event.toolName === name;
  }
  return out;
}
