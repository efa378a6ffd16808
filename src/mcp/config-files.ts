import { filesIn, userConfigDirs } from "../config-dirs.ts";
import { projectPaths } from "../resources/project-paths.ts";

/**
 * Every mcp.json pion reads, lowest precedence first: the user's folders (the reference's agent
 * folder, then PION_HOME), then a trusted project's `.pi/` and `.pion/`. Kept apart from
 * config.ts so start-up can check for the files without loading the MCP code.
 */
export const mcpConfigFiles = (o: { home: string; cwd: string; env: Record<string, string | undefined>; projectTrusted: boolean }): string[] => [
  ...filesIn(userConfigDirs(o.home, o.env), "mcp.json"),
  ...(o.projectTrusted ? projectPaths(o.cwd).mcp : []),
];
