import type { CompletionsCompat, ThinkingFormat } from "./compat.ts";
import { mappedValue } from "./reasoning-params.ts";
import { sharedBudget } from "./thinking.ts";
import type { Model, ThinkingBudgets, ThinkingLevel } from "./types.ts";

/**
 * The reasoning fields of a Chat Completions request in the format models.json `compat.thinkingFormat`
 * names (the reference's formats), for an already clamped level. `mapped` is the provider's value
 * for the level (`thinkingLevelMap`, else the level's name); null in the map means "send nothing".
 */
export function formatReasoning(
  model: Model,
  level: ThinkingLevel,
  compat: CompletionsCompat & { thinkingFormat: ThinkingFormat },
  budget: number | undefined,
): Record<string, unknown> {
  if (!model.reasoning) return {};
  const on = level !== "off";
  const map = model.thinkingLevelMap;
  const value = on ? mappedValue(model, level) : undefined;
  const offValue = map?.off;
  const effort = compat.supportsReasoningEffort && value !== undefined ? { reasoning_effort: value } : {};
  switch (compat.thinkingFormat) {
    case "zai":
      return { thinking: on ? { type: "enabled", clear_thinking: false } : { type: "disabled" }, ...effort };
    case "qwen":
      return { enable_thinking: on, ...effort };
    case "qwen-chat-template":
      return { chat_template_kwargs: { enable_thinking: on, preserve_thinking: true } };
    case "chat-template":
      return templateValues("chat_template_kwargs", compat.chatTemplateKwargs, model, level, budget);
    case "baseten": {
      const out = templateValues("chat_template_args", compat.chatTemplateArgs, model, level, budget);
      const v = on ? value : offValue;
      return compat.supportsReasoningEffort && typeof v === "string" ? { ...out, reasoning_effort: v } : out;
    }
    case "deepseek":
      return { ...(on ? { thinking: { type: "enabled" } } : offValue !== null ? { thinking: { type: "disabled" } } : {}), ...effort };
    case "openrouter":
      if (on) return { reasoning: { effort: value } };
      return offValue !== null ? { reasoning: { effort: offValue ?? "none" } } : {};
    case "ant-ling":
      return on && typeof map?.[level] === "string" ? { reasoning: { effort: map[level] } } : {};
    case "together":
      return { reasoning: { enabled: on }, ...effort };
    case "string-thinking":
      if (on) return { thinking: value };
      return offValue !== null ? { thinking: offValue ?? "none" } : {};
    case "openai":
      if (!compat.supportsReasoningEffort) return {};
      if (on) return { reasoning_effort: value };
      return typeof offValue === "string" ? { reasoning_effort: offValue } : {};
  }
}

/**
 * `chat_template_kwargs` / `chat_template_args` from the configured object: a value
 * `{"$var": "thinking.enabled" | "thinking.effort" | "thinking.budget"}` becomes pion's, and one
 * with `omitWhenOff` is left out when thinking is off; other values go as written.
 */
function templateValues(field: string, values: Record<string, unknown> | undefined, model: Model, level: ThinkingLevel, budget: number | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(values ?? {})) {
    const resolved = templateValue(raw, model, level, budget);
    if (resolved !== undefined) out[key] = resolved;
  }
  return Object.keys(out).length > 0 ? { [field]: out } : {};
}

function templateValue(raw: unknown, model: Model, level: ThinkingLevel, budget: number | undefined): unknown {
  if (typeof raw !== "object" || raw === null) return raw;
  const spec = raw as { $var?: unknown; omitWhenOff?: unknown };
  if (level === "off" && spec.omitWhenOff) return undefined;
  if (spec.$var === "thinking.enabled") return level !== "off";
  if (spec.$var === "thinking.budget") return budget;
  if (spec.$var === "thinking.effort") {
    const mapped = level === "off" ? model.thinkingLevelMap?.off : model.thinkingLevelMap?.[level];
    if (mapped === undefined) return level === "off" ? undefined : level;
    return typeof mapped === "string" ? mapped : undefined;
  }
  return raw;
}

/** The token budget for `thinkingTokenBudgetField` and `$var: thinking.budget`: none when thinking is off. */
export function completionsBudget(model: Model, level: ThinkingLevel, ceiling: number, budgets: ThinkingBudgets | undefined): number | undefined {
  if (!model.reasoning || level === "off") return undefined;
  return sharedBudget(level, ceiling, budgets);
}
