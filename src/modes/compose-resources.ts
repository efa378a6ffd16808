import type { Settings } from "../config.ts";
import { userConfigDirs } from "../config-dirs.ts";
import { resolve } from "node:path";
import { discoverExtensions, type DiscoveredExtension } from "../extensions/discover.ts";
import { packageResources } from "../extensions/package-resources.ts";
import { CLI_FOUND, type FoundBy } from "../resources/source-info.ts";
import { isDir } from "../util/fs-kind.ts";
import { expandHome } from "../util/home-path.ts";
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
): DiscoveredExtension[] {
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
 * The skills and prompt templates of the package folders `-e` names (an `npm:` one is a folder by
 * now, temporary-packages.ts), as the reference loads them: a skill counts as named on the
 * command line, a prompt as the package's own.
 */
function packagesTried(o: Pick<CliOptions, "cwd" | "extensions">): { skills: { path: string; found: FoundBy }[]; prompts: { path: string; found: FoundBy }[] } {
  const out = { skills: [] as { path: string; found: FoundBy }[], prompts: [] as { path: string; found: FoundBy }[] };
  for (const raw of o.extensions ?? []) {
    const dir = resolve(o.cwd, expandHome(raw));
    if (!isDir(dir)) continue;
    const found = packageResources(dir);
    out.skills.push(...found.skills.map((path) => ({ path, found: CLI_FOUND })));
    out.prompts.push(...found.prompts.map((path) => ({ path, found: { source: raw, scope: "temporary" as const, origin: "package" as const, baseDir: dir } })));
  }
  return out;
}

/**
 * Skills, prompt templates, context files and the system prompt's own text; invalid resources
 * are reported on stderr and skipped. The project's load only when `project` (trusted);
 * context files always. `--system-prompt` replaces SYSTEM.md and `--append-system-prompt`
 * APPEND_SYSTEM.md, as in the reference.
 */
export type Resources = ReturnType<typeof loadResources>;

export function loadResources(o: CliOptions, project: boolean, settings: Settings) {
  const scope = resourceScope(o, project);
  const lists = settings.listedResources;
  const tried = packagesTried(o);
  const skills = loadSkills(scope, { paths: o.skills, noDiscovery: o.noSkills, listed: resourceList(lists?.skills), fromPackages: tried.skills });
  const templates = loadPromptTemplates(scope, { paths: o.promptTemplates, noDiscovery: o.noPromptTemplates, listed: resourceList(lists?.prompts), fromPackages: tried.prompts });
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
