import type { Settings } from "../config.ts";
import { userConfigDirs } from "../config-dirs.ts";
import { discoverExtensions } from "../extensions/discover.ts";
import { loadContextFiles } from "../resources/context-files.ts";
import type { ResourceScope } from "../resources/files.ts";
import { loadPromptTemplates } from "../resources/prompt-templates.ts";
import { resourceList } from "../resources/resource-list.ts";
import { loadSkills } from "../resources/skills.ts";
import { systemPromptFiles } from "../resources/system-prompt-files.ts";
import { textOrFile } from "../resources/text-or-file.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";

/** Where a session's resources are read from: the user folders (config-dirs.ts), the cwd, and whether the project is trusted. */
export const resourceScope = (o: CliOptions, project: boolean): ResourceScope => ({ home: o.home, cwd: o.cwd, project, userDirs: userConfigDirs(o.home, o.env) });

/**
 * The extensions a session loads: the user folders' and (trusted) the project's, the settings'
 * `extensions` list, then `-e` paths; `--no-extensions` keeps only the `-e` paths.
 */
export function extensionsToLoad(
  o: Pick<CliOptions, "home" | "cwd" | "env" | "extensions" | "noExtensions">,
  project: boolean,
  settings: Settings,
): string[] {
  return discoverExtensions({
    home: o.home,
    userDirs: userConfigDirs(o.home, o.env),
    listed: resourceList(settings.listedResources?.extensions),
    cwd: o.cwd,
    extra: o.extensions ?? [],
    noDiscovery: o.noExtensions === true,
    project,
  });
}

/**
 * Skills, prompt templates, context files and the system prompt's own text; invalid resources
 * are reported on stderr and skipped. The project's load only when `project` (trusted);
 * context files always. `--system-prompt` replaces SYSTEM.md and `--append-system-prompt`
 * APPEND_SYSTEM.md, as in the reference.
 */
export function loadResources(o: CliOptions, project: boolean, settings: Settings) {
  const scope = resourceScope(o, project);
  const lists = settings.listedResources;
  const skills = loadSkills(scope, { paths: o.skills, noDiscovery: o.noSkills, listed: resourceList(lists?.skills) });
  const templates = loadPromptTemplates(scope, { paths: o.promptTemplates, noDiscovery: o.noPromptTemplates, listed: resourceList(lists?.prompts) });
  for (const w of [...skills.warnings, ...templates.warnings]) log("resources", w);
  const files = systemPromptFiles(scope);
  const systemPrompt = o.systemPrompt === undefined ? files.system?.content : textOrFile(o.systemPrompt, o.cwd);
  const append = o.appendSystemPrompt?.length ? o.appendSystemPrompt.map((t) => textOrFile(t, o.cwd)).join("\n\n") : files.append?.content;
  return {
    skills: skills.skills,
    templates: templates.templates,
    contextFiles: o.noContextFiles ? [] : loadContextFiles(scope),
    systemPrompt,
    append,
    /** The SYSTEM.md / APPEND_SYSTEM.md files used (for --verbose). */
    promptFiles: [o.systemPrompt === undefined ? files.system?.path : undefined, o.appendSystemPrompt?.length ? undefined : files.append?.path].filter((p) => p !== undefined),
  };
}
