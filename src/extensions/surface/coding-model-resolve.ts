/**
 * The reference's `resolveCliModel` and `resolveModelScopeWithDiagnostics`, on pion's resolution
 * (providers/model-choice.ts, providers/model-reference.ts). Where the reference takes its
 * `ModelRuntime`, these take pion's `ModelRegistry` (coding-models.ts), or any object with the
 * runtime's `getModels()` / `hasConfiguredAuth(providerId)` / `getAvailable()`.
 */
import type { ModelPool } from "../../providers/model-choice.ts";
import type { Model, ThinkingLevel } from "../../providers/types.ts";

interface PionRegistryLike {
  getAll(): Model[];
  getAvailable(): Model[];
  hasConfiguredAuth(model: { provider: string }): boolean;
}
interface RuntimeLike {
  getModels(): readonly Model[];
  getAvailable(providerId?: string, options?: unknown): Promise<readonly Model[]> | readonly Model[];
  hasConfiguredAuth(providerId: string): boolean;
}
type Source = PionRegistryLike | RuntimeLike;

const isRuntime = (s: Source): s is RuntimeLike => typeof (s as RuntimeLike).getModels === "function";

function sourceOf(value: unknown): Source {
  const s = value as Partial<PionRegistryLike & RuntimeLike> | undefined;
  if (!s || typeof s.hasConfiguredAuth !== "function" || (typeof s.getModels !== "function" && typeof s.getAll !== "function")) {
    throw new TypeError("modelRuntime must be a ModelRegistry (new ModelRegistry()) or an object with getModels() and hasConfiguredAuth()");
  }
  return value as Source;
}

function poolOf(source: Source): ModelPool {
  if (isRuntime(source)) return { models: [...source.getModels()], usable: (p) => source.hasConfiguredAuth(p) };
  return { models: source.getAll(), usable: (p) => source.hasConfiguredAuth({ provider: p }) };
}

interface CliModelOptions {
  cliProvider?: string;
  cliModel?: string;
  cliThinking?: ThinkingLevel;
  inlineApiKey?: boolean;
  modelRuntime: unknown;
}

function resolveCliModel(options: CliModelOptions): { model: Model | undefined; thinkingLevel?: ThinkingLevel; warning: string | undefined; error: string | undefined } {
  const { resolveCliModel: resolve } = require("../../providers/model-choice.ts") as typeof import("../../providers/model-choice.ts");
  if (!options.cliModel) return { model: undefined, warning: undefined, error: undefined };
  const r = resolve(poolOf(sourceOf(options.modelRuntime)), { provider: options.cliProvider, model: options.cliModel, thinking: options.cliThinking, inlineApiKey: options.inlineApiKey });
  const out: { model: Model | undefined; thinkingLevel?: ThinkingLevel; warning: string | undefined; error: string | undefined } = { model: r.model, warning: r.warning, error: r.error };
  if (r.model) out.thinkingLevel = r.thinkingLevel;
  return out;
}

/** Scope patterns over the models that have credentials (`getAvailable`). */
async function resolveModelScopeWithDiagnostics(patterns: string[], modelRuntime: unknown, options?: { signal?: AbortSignal }) {
  const { resolveModelScope } = require("../../providers/model-reference.ts") as typeof import("../../providers/model-reference.ts");
  const source = sourceOf(modelRuntime);
  const available = isRuntime(source) ? await source.getAvailable(undefined, options) : source.getAvailable();
  return resolveModelScope(patterns, [...available]);
}

/** Merged into the coding agent's helper exports. */
export const modelResolveExports = { resolveCliModel, resolveModelScopeWithDiagnostics };
