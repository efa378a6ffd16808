import type { Model, ThinkingLevel } from "./types.ts";

const BASE: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high"];

/** Levels a model accepts: ["off"] without reasoning; xhigh/max only where declared; a virtual model's own list. */
export function thinkingLevelsFor(model: Model | undefined): ThinkingLevel[] {
  if (model?.api === "pi-virtual") return model.thinkingLevels?.length ? [...model.thinkingLevels] : ["off"];
  if (!model?.reasoning) return ["off"];
  const extra = (["xhigh", "max"] as const).filter((l) => model.thinkingLevels?.includes(l));
  return [...BASE, ...extra];
}

/** The closest level the model accepts, never above the request (or its lowest, when it has none that low). */
export function clampThinkingLevel(model: Model | undefined, level: ThinkingLevel): ThinkingLevel {
  const levels = thinkingLevelsFor(model);
  if (levels.includes(level)) return level;
  const order: ThinkingLevel[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];
  for (let i = order.indexOf(level); i >= 0; i--) if (levels.includes(order[i]!)) return order[i]!;
  return levels[0] ?? "off";
}
