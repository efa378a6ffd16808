import type { MessageCreateParamsStreaming, OutputConfig } from "@anthropic-ai/sdk/resources/messages/messages";
import type { ChatCompletionCreateParamsStreaming } from "openai/resources/chat/completions";
import type { ResponseCreateParamsStreaming } from "openai/resources/responses/responses";
import type { ReasoningEffort } from "openai/resources/shared";
import { ANTHROPIC_EFFORTS, clampThinkingLevel, thinkingBudget, thinkingControl, TOGGLE_ON } from "./thinking.ts";
import type { Model, ThinkingBudgets, ThinkingLevel } from "./types.ts";

/**
 * The reasoning part of each API's request body, typed by the installed SDK's request types.
 * The level is clamped to what the model offers first (a compaction asks for "off" whatever the
 * model; one that cannot stop reasoning gets its least), then spelled the way thinkingControl says.
 */

type AnthropicEffort = NonNullable<OutputConfig["effort"]>;
// A compile-time check that every effort pion sends is one the SDK's request type knows.
const ANTHROPIC_EFFORT_NAMES: readonly AnthropicEffort[] = ANTHROPIC_EFFORTS;
const isAnthropicEffort = (level: string): level is AnthropicEffort => (ANTHROPIC_EFFORT_NAMES as readonly string[]).includes(level);

export type AnthropicReasoning = Pick<MessageCreateParamsStreaming, "max_tokens" | "thinking" | "output_config">;

/**
 * Messages API: effort → adaptive thinking (its text summarized, as older models show it) and
 * `output_config.effort`; budget, toggle and fixed → `thinking.type: "enabled"` with a budget below
 * max_tokens; "off" → `thinking.type: "disabled"`; nothing for a model without reasoning.
 */
export function anthropicReasoning(model: Model, requested: ThinkingLevel, budgets?: ThinkingBudgets): AnthropicReasoning {
  const control = thinkingControl(model);
  const level = clampThinkingLevel(model, requested);
  if (control.kind === "none") return { max_tokens: model.maxTokens };
  if (level === "off") return { max_tokens: model.maxTokens, thinking: { type: "disabled" } };
  // models.json `compat.forceAdaptiveThinking` asks for the adaptive form whatever the catalog says.
  const adaptive = model.compat?.forceAdaptiveThinking ?? control.kind === "effort";
  const effort = mappedValue(model, level);
  if (adaptive && isAnthropicEffort(effort)) {
    return { max_tokens: model.maxTokens, thinking: { type: "adaptive", display: "summarized" }, output_config: { effort } };
  }
  const range = control.kind === "budget" ? { min: control.min, max: control.max } : {};
  const { budget, maxTokens } = thinkingBudget(control.kind === "toggle" ? TOGGLE_ON : level, range, model.maxTokens, budgets);
  return { max_tokens: maxTokens, thinking: { type: "enabled", budget_tokens: budget } };
}

export type ResponsesReasoning = Pick<ResponseCreateParamsStreaming, "reasoning" | "include">;

/**
 * Responses API (stateless, so reasoning comes back encrypted for replay): the level's effort with
 * a summary; "off" → effort `none` where the model lists it, else no reasoning parameter.
 */
export function responsesReasoning(model: Model, requested: ThinkingLevel): ResponsesReasoning {
  const control = thinkingControl(model);
  const level = clampThinkingLevel(model, requested);
  if (control.kind === "none") return {};
  const include: ResponsesReasoning["include"] = ["reasoning.encrypted_content"];
  const off = model.thinkingLevelMap?.off;
  if (level === "off") {
    if (typeof off === "string") return { include, reasoning: { effort: off as ReasoningEffort } };
    return control.kind === "effort" && control.offIsNone ? { include, reasoning: { effort: "none" } } : { include };
  }
  return { include, reasoning: { effort: mappedValue(model, level) as ReasoningEffort, summary: "auto" } };
}

/** `thinking: {type}`: how Z.ai, DeepSeek and Moonshot switch a Chat Completions model's thinking on and off. */
type ThinkingSwitch = { thinking?: { type: "enabled" } | { type: "disabled" } };
export type CompletionsReasoning = Pick<ChatCompletionCreateParamsStreaming, "reasoning_effort"> & ThinkingSwitch;

/**
 * Chat Completions: OpenAI's `reasoning_effort` for effort and budget models (servers that take a
 * budget, such as Google's and OpenRouter's, map an effort name to one); "off" → effort `none`
 * where the model lists it or can stop thinking, or the toggle's off. A model that only toggles
 * gets `thinking: {type: "enabled" | "disabled"}`.
 */
export function completionsReasoning(model: Model, requested: ThinkingLevel): CompletionsReasoning {
  const control = thinkingControl(model);
  const level = clampThinkingLevel(model, requested);
  switch (control.kind) {
    case "none":
      return {};
    case "toggle":
      return { thinking: { type: level === "off" ? "disabled" : "enabled" } };
    case "effort":
      if (level === "off") return control.offIsNone ? { reasoning_effort: "none" } : { thinking: { type: "disabled" } };
      return { reasoning_effort: openaiEffort(level) };
    case "budget":
      return { reasoning_effort: level === "off" ? "none" : openaiEffort(level) };
    case "fixed":
      return level === "off" ? {} : { reasoning_effort: openaiEffort(level) };
  }
}

/** The provider's value for a level: models.json `thinkingLevelMap`, else the level's own name. */
export const mappedValue = (model: Model, level: Exclude<ThinkingLevel, "off">): string => model.thinkingLevelMap?.[level] ?? level;

/** pion's levels other than "off" are OpenAI effort names. */
const openaiEffort = (level: Exclude<ThinkingLevel, "off">): ReasoningEffort => level;
