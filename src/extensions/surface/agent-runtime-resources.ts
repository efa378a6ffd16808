/**
 * The reference's `DefaultResourceLoader` on pion's resource loaders (src/resources): the skills,
 * prompt templates, context files and SYSTEM.md / APPEND_SYSTEM.md pion would load for `cwd`
 * (the user folders and, when the settings manager trusts the project, the project's), in the
 * reference's shapes, read again by `reload()`. The `*Override` options reshape each result, as
 * in the reference. Extensions load on `reload()` through pion's loader (coding-runner.ts):
 * unless `noExtensions`, those pion finds for `cwd` and `agentDir` (the trusted project's
 * folders, `agentDir/extensions`), then `additionalExtensionPaths`, then `extensionFactories`
 * (each a factory or `{ name, factory }`, named `<inline:name>` or `<inline:n>`); a session
 * created on the loader binds them. As the reference's, a loader whose private `loaded` flag is
 * set evaluates the modules anew on its reload, so they share no module state with an earlier
 * load. Themes are terminal UI: none.
 */
import { userConfigDirs } from "../../config-dirs.ts";
import { loadContextFiles } from "../../resources/context-files.ts";
import type { ResourceScope } from "../../resources/files.ts";
import { loadPromptTemplates } from "../../resources/prompt-templates.ts";
import { loadSkills } from "../../resources/skills.ts";
import { sourceInfoAt } from "../../resources/source-info.ts";
import { systemPromptFiles } from "../../resources/system-prompt-files.ts";
import { textOrFile } from "../../resources/text-or-file.ts";
import { expandHome } from "../../util/home-path.ts";
import { resolve } from "node:path";
import type { InlineExtension } from "../types.ts";
import { createExtensionRuntime } from "./agent-session.ts";
import { loadExtensionSet, pathsToLoad } from "./coding-runner.ts";
import { toSkill, type Diagnostic, type Skill } from "./coding-resources.ts";

type Rec = Record<string, unknown>;
type AgentsFile = { path: string; content: string };
interface PromptTemplate {
  name: string;
  description: string;
  content: string;
  sourceInfo: Rec;
  filePath: string;
}
type Listing<K extends string, T> = { [key in K]: T[] } & { diagnostics: Diagnostic[] };

export interface DefaultResourceLoaderOptions {
  cwd: string;
  agentDir: string;
  settingsManager?: { isProjectTrusted?(): boolean };
  additionalExtensionPaths?: string[];
  additionalSkillPaths?: string[];
  additionalPromptTemplatePaths?: string[];
  extensionFactories?: ExtensionFactoryInput[];
  noExtensions?: boolean;
  noSkills?: boolean;
  noPromptTemplates?: boolean;
  noThemes?: boolean;
  noContextFiles?: boolean;
  systemPrompt?: string;
  appendSystemPrompt?: string[];
  extensionsOverride?: (base: Rec) => Rec;
  skillsOverride?: (base: Listing<"skills", Skill>) => Listing<"skills", Skill>;
  promptsOverride?: (base: Listing<"prompts", PromptTemplate>) => Listing<"prompts", PromptTemplate>;
  agentsFilesOverride?: (base: { agentsFiles: AgentsFile[] }) => { agentsFiles: AgentsFile[] };
  systemPromptOverride?: (base: string | undefined) => string | undefined;
  appendSystemPromptOverride?: (base: string[]) => string[];
}

interface Loaded {
  skills: Listing<"skills", Skill>;
  prompts: Listing<"prompts", PromptTemplate>;
  agentsFiles: { agentsFiles: AgentsFile[] };
  systemPrompt: { text?: string; path?: string };
  append: { texts: string[]; paths: string[] };
  extensions: Rec;
}

const warnings = (list: readonly string[]): Diagnostic[] => list.map((message) => ({ type: "warning", message }));

type Factory = (pi: never) => unknown;
type ExtensionFactoryInput = Factory | { name: string; factory: Factory };

const loaderOptions = new WeakMap<object, DefaultResourceLoaderOptions>();

/** What a DefaultResourceLoader was made with (its cwd and agent dir resolved); undefined for any other loader. */
export function resourceLoaderOptions(loader: unknown): DefaultResourceLoaderOptions | undefined {
  return loader && typeof loader === "object" ? loaderOptions.get(loader) : undefined;
}

/** The reference's `extensionFactories` as the loader's inline extensions (named `<inline:N>` or by their name). */
export const inlineExtensions = (inputs: readonly ExtensionFactoryInput[]): InlineExtension[] =>
  inputs.map((input, i) => (typeof input === "function" ? { path: `<inline:${i + 1}>`, factory: input } : { path: `<inline:${input.name}>`, factory: input.factory }));

export class DefaultResourceLoader {
  readonly #o: DefaultResourceLoaderOptions;
  #loaded: Loaded | undefined;
  /** Paths `extendResources` added since the last reload. */
  #extraSkills: string[] = [];
  #extraPrompts: string[] = [];

  /** Set once a reload loaded the extensions (the reference's private field, which hosts set to get fresh modules). */
  loaded = false;

  constructor(options: DefaultResourceLoaderOptions) {
    this.#o = { ...options, cwd: resolve(expandHome(options.cwd)), agentDir: resolve(expandHome(options.agentDir)) };
    loaderOptions.set(this, this.#o);
  }

  /** Until the first reload, nothing (as the reference's loader answers before it). */
  get #r(): Loaded {
    return (this.#loaded ??= {
      skills: { skills: [], diagnostics: [] },
      prompts: { prompts: [], diagnostics: [] },
      agentsFiles: { agentsFiles: [] },
      systemPrompt: {},
      append: { texts: [], paths: [] },
      extensions: { extensions: [], errors: [], runtime: createExtensionRuntime() },
    });
  }

  /** Reads every resource again (paths added by `extendResources` are dropped, as the reference drops them). */
  async reload(): Promise<void> {
    this.#extraSkills = [];
    this.#extraPrompts = [];
    const extensions = await this.#loadExtensions(this.loaded);
    this.loaded = true;
    this.#load(extensions);
  }

  async #loadExtensions(fresh: boolean): Promise<Rec> {
    const o = this.#o;
    const paths = pathsToLoad(o.additionalExtensionPaths ?? [], o.cwd, o.agentDir, o.noExtensions === true);
    const base = await loadExtensionSet(paths, inlineExtensions(o.extensionFactories ?? []), o.cwd, fresh);
    return o.extensionsOverride ? o.extensionsOverride(base) : base;
  }

  #load(extensions: Rec = this.#r.extensions): void {
    const o = this.#o;
    const scope: ResourceScope = { home: o.agentDir, cwd: o.cwd, userDirs: userConfigDirs(o.agentDir), project: o.settingsManager?.isProjectTrusted?.() ?? true };
    const path = (p: string) => resolve(o.cwd, expandHome(p.trim()));
    const skills = loadSkills(scope, { paths: [...(o.additionalSkillPaths ?? []), ...this.#extraSkills].map(path), noDiscovery: o.noSkills === true });
    const templates = loadPromptTemplates(scope, { paths: [...(o.additionalPromptTemplatePaths ?? []), ...this.#extraPrompts].map(path), noDiscovery: o.noPromptTemplates === true });
    const files = systemPromptFiles(scope);
    const customSystem = o.systemPrompt === undefined ? undefined : textOrFile(o.systemPrompt, o.cwd);
    const customAppend = o.appendSystemPrompt?.map((t) => textOrFile(t, o.cwd));
    const baseSkills = { skills: skills.skills.map((s) => toSkill(s)), diagnostics: warnings(skills.warnings) };
    const basePrompts = {
      prompts: templates.templates.map((t) => ({ name: t.name, description: t.description, content: t.content, sourceInfo: { ...sourceInfoAt(t.filePath, t.found) }, filePath: t.filePath })),
      diagnostics: warnings(templates.warnings),
    };
    const baseFiles = { agentsFiles: o.noContextFiles ? [] : loadContextFiles(scope) };
    const system = customSystem ?? files.system?.content;
    const append = customAppend ?? (files.append ? [files.append.content] : []);
    this.#loaded = {
      skills: o.skillsOverride ? o.skillsOverride(baseSkills) : baseSkills,
      prompts: o.promptsOverride ? o.promptsOverride(basePrompts) : basePrompts,
      agentsFiles: o.agentsFilesOverride ? o.agentsFilesOverride(baseFiles) : baseFiles,
      systemPrompt: { text: o.systemPromptOverride ? o.systemPromptOverride(system) : system, ...(customSystem === undefined && files.system ? { path: files.system.path } : {}) },
      append: { texts: o.appendSystemPromptOverride ? o.appendSystemPromptOverride(append) : append, paths: customAppend === undefined && files.append ? [files.append.path] : [] },
      extensions,
    };
  }

  getExtensions(): Rec {
    return this.#r.extensions;
  }
  getSkills(): Listing<"skills", Skill> {
    return this.#r.skills;
  }
  getPrompts(): Listing<"prompts", PromptTemplate> {
    return this.#r.prompts;
  }
  getThemes(): { themes: never[]; diagnostics: never[] } {
    return { themes: [], diagnostics: [] };
  }
  getAgentsFiles(): { agentsFiles: AgentsFile[] } {
    return this.#r.agentsFiles;
  }
  getSystemPrompt(): string | undefined {
    return this.#r.systemPrompt.text;
  }
  getSystemPromptSource(): { path: string } | undefined {
    const path = this.#r.systemPrompt.path;
    return path ? { path } : undefined;
  }
  getAppendSystemPrompt(): string[] {
    return this.#r.append.texts;
  }
  getAppendSystemPromptSources(): { path: string }[] {
    return this.#r.append.paths.map((path) => ({ path }));
  }
  /** More skill and prompt paths (each `{ path }`), loaded now, until the next reload. */
  extendResources(paths: { skillPaths?: { path: string }[]; promptPaths?: { path: string }[] }): void {
    this.#extraSkills.push(...(paths.skillPaths ?? []).map((p) => p.path));
    this.#extraPrompts.push(...(paths.promptPaths ?? []).map((p) => p.path));
    this.#load();
  }
}
