import { join } from "node:path";
import { readTextIfFile, userDirsOf, type ResourceScope } from "./files.ts";
import { projectPaths } from "./project-paths.ts";

export interface PromptFile {
  path: string;
  content: string;
}

/**
 * `SYSTEM.md` (replaces the base prompt) and `APPEND_SYSTEM.md` (added at the end) from the user
 * folders and, when trusted, the project's `.pi/` and `.pion/`. Of each name only one file is
 * used, the one of highest precedence present: a trusted project's over the user's, pion's
 * folder over the reference's. Files of the same name are not combined.
 */
export function systemPromptFiles(scope: ResourceScope): { system?: PromptFile; append?: PromptFile } {
  const project = scope.project ? projectPaths(scope.cwd) : undefined;
  const pick = (name: string, projectFiles: readonly string[] = []) => {
    const candidates = [...userDirsOf(scope).map((dir) => join(dir, name)), ...projectFiles].reverse();
    for (const path of candidates) {
      const content = readTextIfFile(path);
      if (content !== undefined) return { path, content };
    }
    return undefined;
  };
  return { system: pick("SYSTEM.md", project?.systemPrompt), append: pick("APPEND_SYSTEM.md", project?.appendSystemPrompt) };
}
