import type { Model, ReasoningOption, ThinkingBudgets, ThinkingLevel } from "./types.ts";

/** pion's levels, least reasoning first. */
export const THINKING_ORDER: readonly ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

/** The efforts the Messages API takes (`output_config.effort`); reasoning-params.ts checks them against the SDK. */
export const ANTHROPIC_EFFORTS = ["low", "medium", "high", "xhigh", "max"] as const;

/** What a toggle's "on" is called: the model thinks as much as it decides, which is more than "medium" promises. */
export const TOGGLE_ON = "high" satisfies ThinkingLevel;

const FIXED: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high"];
/** Chat Completions and Responses reach a budget through an effort name; these are the ones servers map. */
const BUDGET_EFFORTS: ThinkingLevel[] = ["low", "medium", "high"];

/**
 * How a request controls one model's reasoning, decided from its catalog entry and API. One kind
 * per model, the first of: `effort` (the model lists effort values), `budget` (a `budget_tokens`
 * range), `toggle` (on or off), `fixed` (reasoning with no options listed: the API's long-standing
 * level mapping), `none` (no reasoning). `levels` are what the model offers, in THINKING_ORDER.
 */
export type ThinkingControl =
  | { kind: "none"; levels: ThinkingLevel[] }
  | { kind: "fixed"; levels: ThinkingLevel[] }
  | { kind: "effort"; levels: ThinkingLevel[]; /** "off" is effort `none` (listed) rather than the API's disabled form. */ offIsNone: boolean }
  | { kind: "budget"; levels: ThinkingLevel[]; min?: number; max?: number }
  | { kind: "toggle"; levels: ThinkingLevel[] };

type Options = {
  effort?: Extract<ReasoningOption, { type: "effort" }>;
  budget?: Extract<ReasoningOption, { type: "budget_tokens" }>;
  toggle: boolean;
};

function optionsOf(model: Model): Options {
  const list = model.reasoningOptions ?? [];
  return {
    effort: list.find((o) => o.type === "effort"),
    budget: list.find((o) => o.type === "budget_tokens"),
    toggle: list.some((o) => o.type === "toggle"),
  };
}

/** Levels named by effort values other than `none`, restricted to the ones the API takes; other values are not pion levels. */
function effortLevels(values: readonly string[], accepted: readonly string[] | undefined): ThinkingLevel[] {
  return THINKING_ORDER.filter((l) => l !== "off" && values.includes(l) && (!accepted || accepted.includes(l)));
}

const withOff = (off: boolean, levels: ThinkingLevel[]): ThinkingLevel[] => (off ? ["off", ...levels] : levels);

function declaredExtras(model: Model): ThinkingLevel[] {
  return (["xhigh", "max"] as const).filter((l) => model.thinkingLevels?.includes(l));
}

/**
 * The Messages API can always switch thinking off (`thinking: {type: "disabled"}`). Adaptive
 * thinking with an effort is for the models that list effort and either take no budget or list the
 * `max` effort (the adaptive generation: Claude Opus 4.6 and later); an effort model that also
 * takes a budget but not `max` (Claude Opus 4.5) predates adaptive thinking and keeps budgets.
 */
function anthropicControl(model: Model, o: Options): ThinkingControl {
  const efforts = o.effort && (o.effort.values.includes("max") || !o.budget) ? effortLevels(o.effort.values, ANTHROPIC_EFFORTS) : [];
  if (efforts.length > 0) return { kind: "effort", levels: ["off", ...efforts], offIsNone: false };
  if (o.budget) return { kind: "budget", levels: [...FIXED, ...declaredExtras(model)], min: o.budget.min, max: o.budget.max };
  if (o.toggle) return { kind: "toggle", levels: ["off", TOGGLE_ON] };
  return { kind: "fixed", levels: [...FIXED, ...declaredExtras(model)] };
}

/**
 * OpenAI-shaped APIs: an effort goes as the listed value, "off" as effort `none` when listed or,
 * on Chat Completions, as the toggle's off. A budget has no field of its own there: servers that
 * take one map an effort name to it. The Responses API takes only an effort.
 */
function openaiControl(model: Model, o: Options): ThinkingControl {
  const responses = model.api === "openai-responses" || model.api === "azure-openai-responses" || model.api === "openai-codex-responses";
  const efforts = o.effort ? effortLevels(o.effort.values, undefined) : [];
  const offIsNone = o.effort?.values.includes("none") ?? false;
  if (efforts.length > 0 || offIsNone) return { kind: "effort", levels: withOff(offIsNone || (o.toggle && !responses), efforts), offIsNone };
  if (!responses && o.budget) return { kind: "budget", levels: withOff(o.toggle || o.budget.min === 0, BUDGET_EFFORTS), min: o.budget.min, max: o.budget.max };
  if (!responses && o.toggle) return { kind: "toggle", levels: ["off", TOGGLE_ON] };
  return { kind: "fixed", levels: [...FIXED, ...declaredExtras(model)] };
}

/** The Messages API (direct or on Vertex), and Claude behind Bedrock's Converse API (its thinking fields are Anthropic's). */
export const anthropicShaped = (model: Model): boolean =>
  model.api === "anthropic-messages" ||
  model.api === "anthropic-vertex" || (model.api === "bedrock-converse-stream" && (/claude/i.test(model.family ?? "") || /anthropic\.|claude/i.test(model.id)));

export function thinkingControl(model: Model | undefined): ThinkingControl {
  if (!model?.reasoning) return { kind: "none", levels: ["off"] };
  const o = optionsOf(model);
  return anthropicShaped(model) ? anthropicControl(model, o) : openaiControl(model, o);
}

/**
 * Levels a model offers: ["off"] without reasoning; otherwise what its reasoning options allow (see
 * thinkingControl); a virtual model (never sent to an API itself) exactly the levels it declares.
 */
export function thinkingLevelsFor(model: Model | undefined): ThinkingLevel[] {
  if (model?.api === "pi-virtual") return model.thinkingLevels?.length ? [...model.thinkingLevels] : ["off"];
  if (model?.reasoning && model.thinkingLevelMap) return mappedLevels(model.thinkingLevelMap);
  return thinkingControl(model).levels;
}

/**
 * A models.json `thinkingLevelMap` decides the levels, as in the reference: every level through
 * "high" unless mapped to null, "xhigh" and "max" only when mapped to a value.
 */
function mappedLevels(map: NonNullable<Model["thinkingLevelMap"]>): ThinkingLevel[] {
  return THINKING_ORDER.filter((l) => (l === "xhigh" || l === "max" ? typeof map[l] === "string" : map[l] !== null));
}

/**
 * The offered level nearest to `level` in THINKING_ORDER; between two equally near, the higher
 * (asking for "minimal" on a model without it gets "low", not no reasoning at all).
 */
export function clampThinkingLevel(model: Model | undefined, level: ThinkingLevel): ThinkingLevel {
  return nearestLevel(thinkingLevelsFor(model), level);
}

export function nearestLevel(levels: readonly ThinkingLevel[], level: ThinkingLevel): ThinkingLevel {
  if (levels.includes(level)) return level;
  const at = THINKING_ORDER.indexOf(level);
  let best: ThinkingLevel = levels[0] ?? "off";
  let bestDistance = Infinity;
  for (const l of levels) {
    const d = Math.abs(THINKING_ORDER.indexOf(l) - at);
    if (d < bestDistance || (d === bestDistance && THINKING_ORDER.indexOf(l) > THINKING_ORDER.indexOf(best))) {
      best = l;
      bestDistance = d;
    }
  }
  return best;
}

const BUDGETS: Record<Exclude<ThinkingLevel, "off">, number> = {
  minimal: 1024,
  low: 4096,
  medium: 10240,
  high: 20480,
  xhigh: 32768,
  max: 63999,
};
/** settings.json `thinkingBudgets` replace the defaults of the levels they name. */
export function levelBudget(level: Exclude<ThinkingLevel, "off">, custom?: ThinkingBudgets): number {
  return (level !== "xhigh" && level !== "max" ? custom?.[level] : undefined) ?? BUDGETS[level];
}

/** A budget for a server where reasoning and the answer share max_tokens: at most max_tokens less the answer's room. */
export function sharedBudget(level: Exclude<ThinkingLevel, "off">, maxTokens: number, custom?: ThinkingBudgets): number | undefined {
  const budget = Math.min(levelBudget(level, custom), Math.max(0, maxTokens - ANSWER_ROOM));
  return budget > 0 ? budget : undefined;
}

/** The Messages API's smallest budget; and what is kept below max_tokens for the answer. */
const MIN_BUDGET = 1024;
const ANSWER_ROOM = 1024;

/**
 * A thinking budget for `level` within the model's range and below max_tokens (leaving room for the
 * answer). When the model's output limit is too small for the smallest budget, max_tokens grows
 * to fit it, since thinking tokens count towards max_tokens.
 */
export function thinkingBudget(
  level: Exclude<ThinkingLevel, "off">,
  range: { min?: number; max?: number },
  maxTokens: number,
  custom?: ThinkingBudgets,
): { budget: number; maxTokens: number } {
  const lo = Math.max(MIN_BUDGET, range.min ?? 0);
  const hi = Math.min(range.max ?? Infinity, maxTokens - ANSWER_ROOM);
  const budget = Math.max(lo, Math.min(levelBudget(level, custom), hi));
  return { budget, maxTokens: Math.max(maxTokens, budget + ANSWER_ROOM) };
}
