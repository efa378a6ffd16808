import type { Settings } from "../config.ts";
import { chooseModel, type ModelChoice } from "../providers/model-choice.ts";
import { resolveModelScope } from "../providers/model-reference.ts";
import type { ModelRegistry } from "../providers/models.ts";
import { clampThinkingLevel } from "../providers/thinking.ts";
import type { Model, ThinkingLevel } from "../providers/types.ts";
import type { AgentSession } from "../session/session.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

export interface StartupModel {
  model?: Model;
  /** Chosen by the command line, a `:level` suffix or `modelThinkingLevels`; undefined: the session's default. */
  thinking?: ThinkingLevel;
  /** The level the command line chose (`--thinking`, else a `:level` suffix of `--model`). */
  commandLineThinking?: ThinkingLevel;
  /** What `cycle_model` cycles through: `--models`, else the settings' `enabledModels`. */
  scopedModels: Model[];
}

/**
 * The start-up model and thinking level, as the reference picks them: `--model` (with
 * `--provider`; see resolveCliModel); else, when a model scope is set (`--models`, else
 * `enabledModels`, over the models with a key), the settings' default if it is in the scope and
 * the scope's first model otherwise; else the settings' default (`defaultProvider` and
 * `defaultModel`, exactly, when that provider has a key); else pion's choice (chooseModel).
 * `--provider` alone (the reference refuses it) starts on that provider's newest model.
 * The thinking level: `--thinking`, a `:level` suffix, then `modelThinkingLevels["provider/id"]`.
 * A scope pattern that matches nothing is a warning on stderr, as in the reference.
 */
export function chooseStartupModel(registry: ModelRegistry, o: CliOptions, settings: Settings): StartupModel {
  const patterns = o.models !== undefined ? o.models.split(",").map((p) => p.trim()).filter(Boolean) : (settings.enabledModels ?? []);
  const scope = patterns.length > 0 ? resolveModelScope(patterns, registry.available()) : { scopedModels: [], diagnostics: [] };
  for (const d of scope.diagnostics) log("models", d.message);
  const scoped = scope.scopedModels;
  const explicit = o.model !== undefined || o.provider !== undefined;
  if (o.thinking !== undefined && !LEVELS.includes(o.thinking)) throw new Error(`Invalid thinking level "${o.thinking}": expected one of ${LEVELS.join(", ")}`);
  const thinkingFlag = o.thinking as ThinkingLevel | undefined;
  const saved = settings.defaultProvider && settings.defaultModel ? registry.find(settings.defaultProvider, settings.defaultModel) : undefined;
  let choice: ModelChoice;
  if (explicit) {
    choice = chooseModel(registry, { pattern: o.model, provider: o.provider, thinking: thinkingFlag, inlineApiKey: o.apiKey !== undefined });
  } else if (scoped.length > 0) {
    const inScope = (saved && scoped.find((s) => s.model.provider === saved.provider && s.model.id === saved.id)) || scoped[0]!;
    choice = { model: inScope.model, thinkingLevel: inScope.thinkingLevel };
  } else if (saved && registry.apiKey(saved.provider) !== undefined) {
    choice = { model: saved };
  } else {
    choice = chooseModel(registry, {});
  }
  const model = choice.model;
  let thinking = choice.thinkingLevel;
  const commandLineThinking = thinkingFlag ?? (explicit ? thinking : undefined);
  if (model && explicit && registry.apiKey(model.provider) === undefined) {
    const vars = registry.keySources(model.provider).filter((s) => /^[A-Z][A-Z0-9_]*( \+ [A-Z][A-Z0-9_]*)*$/.test(s));
    const named = vars.length > 0 ? vars.join(" or ") : "its environment variable";
    throw new Error(`No API key for provider "${model.provider}": set ${named}, auth.json, models.json apiKey, or --api-key (pion auth check shows where it looks)`);
  }
  if (thinking === undefined && model) thinking = settings.modelThinkingLevels?.[`${model.provider}/${model.id}`];
  if (thinkingFlag !== undefined) thinking = thinkingFlag;
  return { model, thinking, ...(commandLineThinking ? { commandLineThinking } : {}), scopedModels: scoped.map((s) => s.model) };
}

/** The thinking level a new session starts with: the choice's, else the settings' default, else medium. */
export const startingThinking = (choice: StartupModel, settings: Settings): ThinkingLevel => choice.thinking ?? settings.defaultThinkingLevel ?? "medium";

/**
 * A session opened with its own model and thinking level keeps them, but for what the command line
 * named (`--model`, `--provider`; `--thinking` or a `:level` suffix), as the reference opens one.
 */
export function keepCommandLineChoice(session: AgentSession, choice: StartupModel, o: CliOptions): void {
  const restored = session.model;
  const model = choice.model;
  if (model && (o.model || o.provider) && (restored?.provider !== model.provider || restored.id !== model.id)) session.setModel(model);
  if (choice.commandLineThinking) session.thinkingLevel = clampThinkingLevel(session.model, choice.commandLineThinking);
}
