import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { filesIn, projectConfigDirs } from "../config-dirs.ts";


/**
 * Where a folder's own resources live: everything that loads only when the folder is trusted.
 * One list, read by the loaders and by the trust decision (which reports what it skipped), so
 * a new kind of project resource cannot load without being gated. Each kind is a list, lowest
 * precedence first: the reference's `.pi/` before pion's `.pion/` (config-dirs.ts).
 */
export interface ProjectPaths {
  settings: string[];
  /** MCP servers. */
  mcp: string[];
  extensions: string[];
  prompts: string[];
  /** `SYSTEM.md`: replaces the default system prompt; the last one present is used. */
  systemPrompt: string[];
  /** `APPEND_SYSTEM.md`: added to the system prompt; the last one present is used. */
  appendSystemPrompt: string[];
  /** `.pi/skills`, `.pion/skills`, then `.agents/skills` from the outermost folder searched down to `cwd` (later wins). */
  skills: string[];
}

export function projectPaths(cwd: string): ProjectPaths {
  const roots = projectConfigDirs(cwd);
  return {
    settings: filesIn(roots, "settings.json"),
    mcp: filesIn(roots, "mcp.json"),
    extensions: filesIn(roots, "extensions"),
    prompts: filesIn(roots, "prompts"),
    systemPrompt: filesIn(roots, "SYSTEM.md"),
    appendSystemPrompt: filesIn(roots, "APPEND_SYSTEM.md"),
    skills: [...filesIn(roots, "skills"), ...agentsSkillDirs(cwd)],
  };
}

/** Every path of `projectPaths`, for checking which of them exist. */
export function allProjectPaths(p: ProjectPaths): string[] {
  return [...p.settings, ...p.mcp, ...p.extensions, ...p.skills, ...p.prompts, ...p.systemPrompt, ...p.appendSystemPrompt];
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
