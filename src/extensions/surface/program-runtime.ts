/**
 * What pion's own modes need to serve an in-process `AgentSessionRuntime` the way the reference's
 * `runRpcMode(runtime)` serves it: the runtime's folder, its session file, model and thinking
 * level, the tools `createAgentSession` was told to offer (its custom tools become an extension
 * that registers them), and what its DefaultResourceLoader loads (extension paths and factories,
 * skills, prompt templates, context files, the system prompt). pion's session then does the work
 * (its store, compaction, retries, bash, branching), which the in-process session leaves to it.
 */
import type { ToolDefinition } from "../api.ts";
import type { InlineExtension } from "../types.ts";
import type { AgentSessionRuntime } from "./agent-runtime.ts";
import { inlineExtensions, resourceLoaderOptions } from "./agent-runtime-resources.ts";
import { sessionOptionsOf } from "./agent-session.ts";
import { sessionFileNow } from "./session-manager.ts";

export interface RuntimeSession {
  cwd: string;
  /** The session's file, written now if it was not yet; undefined for a session in memory. */
  sessionFile?: string;
  model?: { provider: string; id: string };
  thinkingLevel: string;
  /** The `tools` allowlist it was made with (undefined: the default loadout). */
  tools?: string[];
  noTools?: "all" | "builtin";
  excludeTools?: string[];
  extensionPaths: string[];
  /** Its loader's `extensionFactories`, then its custom tools as one extension. */
  inlineExtensions: InlineExtension[];
  noExtensions: boolean;
  skills: string[];
  noSkills: boolean;
  promptTemplates: string[];
  noPromptTemplates: boolean;
  noContextFiles: boolean;
  systemPrompt?: string;
  appendSystemPrompt: string[];
  /** What of the runtime cannot be carried over (a resource loader pion did not make). */
  warnings: string[];
}

interface LoaderLike {
  getSystemPrompt?(): string | undefined;
  getAppendSystemPrompt?(): string[];
}

const customToolsExtension = (tools: readonly ToolDefinition[]): InlineExtension => ({
  path: "<inline:customTools>",
  factory: (pi: never) => {
    for (const tool of tools) (pi as { registerTool(t: ToolDefinition): void }).registerTool(tool);
  },
});

export function describeRuntime(runtime: AgentSessionRuntime): RuntimeSession {
  const session = runtime.session;
  const made = sessionOptionsOf(session) ?? {};
  const loader = (made.resourceLoader ?? session.resourceLoader ?? runtime.services.resourceLoader) as LoaderLike | undefined;
  const o = resourceLoaderOptions(loader);
  const warnings: string[] = [];
  if (loader && !o) warnings.push("the runtime's resource loader is not a DefaultResourceLoader: only its system prompt is carried over, pion loads the folder's own extensions and resources");
  const model = session.model;
  const systemPrompt = loader?.getSystemPrompt?.();
  return {
    cwd: runtime.cwd,
    sessionFile: sessionFileNow(session.sessionManager),
    ...(model ? { model: { provider: model.provider, id: model.id } } : {}),
    thinkingLevel: session.thinkingLevel,
    ...(made.tools ? { tools: made.tools } : {}),
    ...(made.noTools ? { noTools: made.noTools } : {}),
    ...(made.excludeTools ? { excludeTools: made.excludeTools } : {}),
    extensionPaths: o?.additionalExtensionPaths ?? [],
    inlineExtensions: [...inlineExtensions(o?.extensionFactories ?? []), ...(made.customTools?.length ? [customToolsExtension(made.customTools)] : [])],
    noExtensions: o?.noExtensions === true,
    skills: o?.additionalSkillPaths ?? [],
    noSkills: o?.noSkills === true,
    promptTemplates: o?.additionalPromptTemplatePaths ?? [],
    noPromptTemplates: o?.noPromptTemplates === true,
    noContextFiles: o?.noContextFiles === true,
    ...(systemPrompt !== undefined ? { systemPrompt } : {}),
    appendSystemPrompt: loader?.getAppendSystemPrompt?.() ?? [],
    warnings,
  };
}
