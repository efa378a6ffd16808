/**
 * How a server's tools reach the model (`exposure`, `toolExposure` of mcp.json): called from
 * `codemode` scripts (`codemode`, the default), declared once `tool_search` loads them
 * (`deferred`; either indirect way reaches both), declared (`direct`), or unreachable (`hidden`). Pure.
 */
import { wildcardMatch } from "../util/wildcard.ts";

export const EXPOSURES = ["codemode", "deferred", "direct", "hidden"] as const;
export type Exposure = (typeof EXPOSURES)[number];

/** What a server without `exposure` gets. */
export const DEFAULT_EXPOSURE: Exposure = "codemode";

export interface ExposureRules {
  exposure: Exposure;
  /** `toolExposure` in file order: exact names are looked up first, then the first matching pattern. */
  toolExposure: [pattern: string, exposure: Exposure][];
}

/** `codemode-deferred` is the reference's alias of `codemode`; anything unknown is undefined. */
export function parseExposure(value: string | undefined): Exposure | undefined {
  if (value === undefined) return DEFAULT_EXPOSURE;
  if (value === "codemode-deferred") return "codemode";
  return (EXPOSURES as readonly string[]).includes(value) ? (value as Exposure) : undefined;
}

/** The exposure of one server tool under its server's rules. */
export function exposureOf(rules: ExposureRules, tool: string): Exposure {
  const exact = rules.toolExposure.find(([p]) => p === tool);
  if (exact) return exact[1];
  const pattern = rules.toolExposure.find(([p]) => p.includes("*") && wildcardMatch(p, tool));
  return pattern ? pattern[1] : rules.exposure;
}

/** Tools reached indirectly: by codemode scripts, or loaded by tool_search. */
export const isSearchable = (e: Exposure): boolean => e === "deferred" || e === "codemode";
