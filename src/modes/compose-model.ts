import type { Settings } from "../config.ts";
import { chooseModel, findModel } from "../providers/model-choice.ts";
import type { ModelRegistry } from "../providers/models.ts";
import type { Model, ThinkingLevel } from "../providers/types.ts";
import { log } from "../util/log.ts";
import type { CliOptions } from "./compose.ts";

const LEVELS = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

export interface StartupModel {
  model?: Model;
  /** Chosen by the command line, a `:level` suffix or `modelThinkingLevels`; undefined: the session's default. */
  thinking?: ThinkingLevel;
  /** What `cycle_model` cycles through: `--models`, else the settings' `enabledModels`. */
  scopedModels: Model[];
}

/**
 * The start-up model and thinking level, as the reference picks them: `--model` / `--provider`;
 * else, when a model scope is set (`--models` or `enabledModels`), the default model if it is in
 * the scope and the scope's first model otherwise; else the settings' default. The thinking
 * level: `--thinking`, a `:level` suffix, then `modelThinkingLevels["provider/id"]`.
 * A `--models` pattern that matches nothing is an error; an `enabledModels` one a warning.
 */
export function chooseStartupModel(registry: ModelRegistry, o: CliOptions, settings: Settings): StartupModel {
  const fromFlag = o.models !== undefined;
  const patterns = fromFlag ? (o.models ?? "").split(",") : (settings.enabledModels ?? []);
  const scoped: { model: Model; thinkingLevel?: ThinkingLevel }[] = [];
  for (const pat of patterns.map((p) => p.trim()).filter(Boolean)) {
    const found = findModel(registry, pat);
    if (!found?.model) {
      if (fromFlag) throw new Error(`Model not found in --models: ${pat}`);
      log("settings", `enabledModels: no model matches "${pat}"`);
      continue;
    }
    if (!scoped.some((s) => s.model === found.model)) scoped.push({ model: found.model, thinkingLevel: found.thinkingLevel });
  }
  const explicit = o.model !== undefined || o.provider !== undefined;
  const pattern = o.model ?? (o.provider ? undefined : settings.defaultModel);
  const provider = o.provider ?? (o.model ? undefined : settings.defaultProvider);
  let choice = chooseModel(registry, { pattern, provider });
  if (!explicit && scoped.length > 0) {
    const inScope = scoped.find((s) => s.model === choice.model) ?? scoped[0]!;
    choice = { model: inScope.model, thinkingLevel: inScope.thinkingLevel ?? choice.thinkingLevel };
  }
  const model = choice.model;
  let thinking = choice.thinkingLevel;
  if (model && explicit && registry.apiKey(model.provider) === undefined) {
    const vars = registry.keySources(model.provider).filter((s) => /^[A-Z][A-Z0-9_]*( \+ [A-Z][A-Z0-9_]*)*$/.test(s));
    const named = vars.length > 0 ? vars.join(" or ") : "its environment variable";
    throw new Error(`No API key for provider "${model.provider}": set ${named}, auth.json, models.json apiKey, or --api-key (pion auth check shows where it looks)`);
  }
  if (thinking === undefined && model) thinking = settings.modelThinkingLevels?.[`${model.provider}/${model.id}`];
  if (o.thinking !== undefined) {
    if (!LEVELS.includes(o.thinking)) throw new Error(`Invalid thinking level "${o.thinking}": expected one of ${LEVELS.join(", ")}`);
    thinking = o.thinking as ThinkingLevel;
  }
  return { model, thinking, scopedModels: scoped.map((s) => s.model) };
}
