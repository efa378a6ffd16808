import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";

/** The folder under a project's root that holds the project's own pion resources. */
export const PROJECT_DIR = ".pion";

/**
 * Where a folder's own resources live: everything that loads only when the folder is trusted.
 * One list, read by the loaders and by the trust decision (which reports what it skipped), so
 * a new kind of project resource cannot load without being gated.
 */
export interface ProjectPaths {
  settings: string;
  /** MCP servers (read by the MCP client once it exists; gated like the rest). */
  mcp: string;
  extensions: string;
  prompts: string;
  /** `.pion/skills`, then `.agents/skills` from the outermost folder searched down to `cwd` (later wins). */
  skills: string[];
}

export function projectPaths(cwd: string): ProjectPaths {
  const root = join(resolve(cwd), PROJECT_DIR);
  return {
    settings: join(root, "settings.json"),
    mcp: join(root, "mcp.json"),
    extensions: join(root, "extensions"),
    prompts: join(root, "prompts"),
    skills: [join(root, "skills"), ...agentsSkillDirs(cwd)],
  };
}

/** Every path of `projectPaths`, for checking which of them exist. */
export function allProjectPaths(p: ProjectPaths): string[] {
  return [p.settings, p.mcp, p.extensions, ...p.skills, p.prompts];
}

/**
 * `.agents/skills` of `cwd` and its parents up to the enclosing git repository's root (the
 * whole way up outside a repository), outermost first. The user's own `~/.agents/skills` is
 * not a project's and is left out.
 */
function agentsSkillDirs(cwd: string): string[] {
  const own = join(resolve(process.env.HOME || homedir()), ".agents", "skills");
  const dirs: string[] = [];
  for (let dir = resolve(cwd); ; dir = dirname(dir)) {
    const candidate = join(dir, ".agents", "skills");
    if (candidate !== own) dirs.push(candidate);
    if (existsSync(join(dir, ".git")) || dirname(dir) === dir) break;
  }
  return dirs.reverse();
}
