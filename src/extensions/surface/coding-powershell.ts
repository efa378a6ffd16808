/**
 * pi-coding-agent's PowerShell tool, as it behaves off Windows. The reference offers PowerShell
 * on Windows only: `getPowerShellConfig()` throws there being no Windows, the local operations
 * and the tool definitions are still built (nothing looks for a shell until a command runs) and
 * their `exec` / `execute` reject with that same error. pion does not ship for Windows (its
 * agent modes refuse to start there, README "Release binaries"), so on every platform pion runs
 * on this is the whole behaviour. A definition given its own `operations` (e.g. a remote
 * PowerShell over ssh) runs commands through them, as the reference's does.
 */
import { toolFactoryExports, type BashFactoryOptions, type BashOperations, type FactoryTool } from "../tool-factories.ts";

const NOT_HERE = "The powershell tool is only available on Windows.";

/** The reference's PowerShell resolution; off Windows it throws, and pion runs only off Windows. */
export function getPowerShellConfig(): never {
  throw new Error(NOT_HERE);
}

/** Operations whose `exec` looks for PowerShell when a command runs (so it rejects here). */
export function createLocalPowerShellOperations(): BashOperations {
  return {
    exec: async () => getPowerShellConfig(),
  };
}

// pion's shell tool, renamed: same schema, output handling, truncation and result shape as its bash tool.
const DESCRIPTION =
  "Run a PowerShell command in the working directory and return its combined stdout and stderr. Output beyond the last 2000 lines or 50KB is cut from the start and saved whole to a temporary file whose path is given. Pass `timeout` (seconds) for commands that might hang.";

type PowerShellOptions = BashFactoryOptions & { exposeSessionEnvironment?: boolean };

function powerShellTool(factory: "createBashTool" | "createBashToolDefinition", cwd: string, options: PowerShellOptions = {}): FactoryTool {
  const build = toolFactoryExports()[factory] as (cwd: string, o: BashFactoryOptions) => FactoryTool;
  const tool = build(cwd, { ...options, operations: options.operations ?? createLocalPowerShellOperations() });
  const properties = tool.parameters.properties as Record<string, Record<string, unknown>>;
  const parameters = { ...tool.parameters, properties: { ...properties, command: { ...properties.command, description: "The PowerShell command to run" } } };
  return { ...tool, name: "powershell", label: "powershell", description: DESCRIPTION, parameters, promptSnippet: "Run PowerShell commands" };
}

export const createPowerShellToolDefinition = (cwd: string, options?: PowerShellOptions): FactoryTool => powerShellTool("createBashToolDefinition", cwd, options);
export const createPowerShellTool = (cwd: string, options?: PowerShellOptions): FactoryTool => powerShellTool("createBashTool", cwd, options);

export const powerShellExports: Record<string, unknown> = { getPowerShellConfig, createLocalPowerShellOperations, createPowerShellToolDefinition, createPowerShellTool };
