/**
 * pion's modules for the reference's `pi-ai` and its `compat` and `models` subpaths (served by
 * virtual-modules.ts, loaded with the first import of one): their own names, completed with
 * export-surface.ts's stand-ins. The subpaths share pi-ai's own functions, then add their own names.
 */
import { modelCallExports } from "../model-calls.ts";
import { completeSurface, REFERENCE_VERSION } from "./export-surface.ts";
import { thinkingExports } from "./plain-helpers.ts";
import { StringEnum, Type } from "../type-builder.ts";
import { aiUtilExports } from "./ai-utils.ts";
import { aiCompatExports, aiProviderExports } from "./ai-providers.ts";

type Exports = Record<string, unknown>;

/** UUID v7: 48-bit millisecond timestamp, then random bits with version and variant set. */
function uuidv7(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  const ms = Date.now();
  for (let i = 0; i < 6; i++) bytes[i] = Math.floor(ms / 2 ** (8 * (5 - i))) & 0xff;
  bytes[6] = (bytes[6]! & 0x0f) | 0x70;
  bytes[8] = (bytes[8]! & 0x3f) | 0x80;
  const hex = [...bytes].map((b) => b.toString(16).padStart(2, "0")).join("");
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const ai: Exports = { Type, StringEnum, uuidv7, PI_AI_VERSION: REFERENCE_VERSION, ...thinkingExports, ...modelCallExports, ...aiUtilExports, ...aiProviderExports };

const aiCompat: Exports = { ...ai, ...aiCompatExports };
const aiModels: Exports = { ...ai };

export const PACKAGES: Record<string, Exports> = {
  "pi-ai": completeSurface("pi-ai", ai),
  "pi-ai/compat": completeSurface("pi-ai/compat", aiCompat),
  "pi-ai/models": completeSurface("pi-ai/models", aiModels),
};
