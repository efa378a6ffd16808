import type { Model, ThinkingLevel } from "./types.ts";

/**
 * How a user names a model (`--model`, `--models`, `enabledModels`), resolved as the reference
 * agent resolves it, over a plain list of models: an exact id or `provider/id` (any case), then a
 * fuzzy id or name substring, then a trailing `:<thinking level>`. Pure: no registry, no I/O.
 */

const LEVELS: readonly string[] = ["off", "minimal", "low", "medium", "high", "xhigh", "max"];

export const isThinkingLevel = (s: string): s is ThinkingLevel => LEVELS.includes(s);

export interface ReferenceRequest {
  text: string;
  /** Search this provider's models only (any case). */
  provider?: string;
  /**
   * A `:<suffix>` is split off only when the whole text names no model (ids such as
   * `qwen/qwen3-coder:exacto` hold colons). `none`: never split; `strict`: split a thinking level,
   * keep anything else in the id; `lenient`: like strict, but drop another suffix with a warning.
   */
  thinkingSuffix: "none" | "strict" | "lenient";
  /** Fall back to id and name substrings. */
  fuzzy: boolean;
}

/** What a custom id for a known provider would be, when nothing matched. */
export interface ReferenceTarget {
  provider: string;
  /** The provider's models, the first one being the one the search anchored on. */
  providerModels: [Model, ...Model[]];
  /** The text after the provider prefix, as typed (with any `:suffix`). */
  modelText: string;
  /** `modelText` without a thinking-level suffix. */
  modelId: string;
  thinkingLevel?: ThinkingLevel;
}

export type ReferenceResult =
  | { status: "resolved"; model: Model; thinkingLevel?: ThinkingLevel; warning?: string }
  | { status: "ambiguous"; candidates: Model[]; usableCount: number; thinkingLevel?: ThinkingLevel; warning?: string }
  | { status: "not-found"; target?: ReferenceTarget };

type Found = Exclude<ReferenceResult, { status: "not-found" }>;

function thinkingSuffixOf(text: string): { base: string; level: ThinkingLevel } | undefined {
  const colon = text.lastIndexOf(":");
  const level = text.slice(colon + 1);
  return colon >= 0 && isThinkingLevel(level) ? { base: text.slice(0, colon), level } : undefined;
}

/** The longest provider id that `text` starts with, followed by `/` and a non-empty rest (ids may hold `/`). */
function providerPrefix(text: string, models: readonly Model[]): { provider: string; modelText: string } | undefined {
  const lower = text.toLowerCase();
  let best: { provider: string; modelText: string } | undefined;
  for (const { provider } of models) {
    const prefix = provider.trim().toLowerCase();
    if (!prefix || (best && best.provider.length >= provider.length)) continue;
    const slash = lower.indexOf("/", prefix.length);
    if (slash < 0 || lower.slice(0, slash).trim() !== prefix) continue;
    const modelText = text.slice(slash + 1).trim();
    if (modelText) best = { provider, modelText };
  }
  return best;
}

const providerCount = (models: readonly Model[]) => new Set(models.map((m) => m.provider)).size;

/** Substring of the id or the name, any case. */
function fuzzyHits(text: string, models: readonly Model[]): Model[] {
  const lower = text.toLowerCase();
  return models.filter((m) => m.id.toLowerCase().includes(lower) || m.name?.toLowerCase().includes(lower));
}

/** An alias (`claude-sonnet-4-5`, `x-latest`) before a dated snapshot (`-20250929`); then the id that sorts last. */
function bestFuzzy(models: readonly Model[]): Model | undefined {
  const aliases = models.filter((m) => m.id.endsWith("-latest") || !/-\d{8}$/.test(m.id));
  return [...(aliases.length > 0 ? aliases : models)].sort((a, b) => b.id.localeCompare(a.id))[0];
}

/**
 * An exact match. A `provider/` prefix is a hint, since the whole text may be another provider's
 * id (a gateway's `zai/glm-5`): the named provider wins when usable; else the one usable raw match;
 * else the named one, so a first `--api-key` can set it up.
 */
function exactMatch(text: string, pool: readonly Model[], fuzzy: boolean, usable: (p: string) => boolean): Found | undefined {
  const lower = text.toLowerCase();
  const raw = pool.filter((m) => m.id.toLowerCase() === lower);
  const split = providerPrefix(text, pool);
  let named: Model | undefined;
  if (split) {
    const own = pool.filter((m) => m.provider === split.provider);
    const rest = split.modelText.toLowerCase();
    named =
      own.find((m) => m.id.toLowerCase() === rest) ??
      raw.find((m) => m.provider === split.provider) ??
      (fuzzy ? bestFuzzy(fuzzyHits(split.modelText, own)) : undefined);
  }
  const others = raw.filter((m) => m !== named);
  const candidates = named ? [named, ...others] : others;
  if (candidates.length === 0) return undefined;
  if (providerCount(candidates) === 1) return { status: "resolved", model: candidates[0]! };
  if (named && usable(named.provider)) return { status: "resolved", model: named };
  const usableOthers = others.filter((m) => usable(m.provider));
  if (usableOthers.length === 1) return { status: "resolved", model: usableOthers[0]! };
  if (usableOthers.length === 0 && named) return { status: "resolved", model: named };
  return { status: "ambiguous", candidates, usableCount: usableOthers.length };
}

/** The best fuzzy hit, among usable providers' when several providers match; the same id on two providers is ambiguous. */
function fuzzyMatch(hits: readonly Model[], usable: (p: string) => boolean): Found | undefined {
  if (hits.length === 0) return undefined;
  const usableHits = providerCount(hits) > 1 ? hits.filter((m) => usable(m.provider)) : [];
  const pool = usableHits.length > 0 ? usableHits : hits;
  const best = bestFuzzy(pool);
  if (!best) return undefined;
  const tied = pool.filter((m) => m.id === best.id);
  if (providerCount(tied) === 1) return { status: "resolved", model: best };
  return { status: "ambiguous", candidates: tied, usableCount: usableHits.length > 0 ? tied.length : 0 };
}

function resolveText(text: string, req: ReferenceRequest, pool: readonly Model[], usable: (p: string) => boolean): ReferenceResult {
  const found = exactMatch(text, pool, req.fuzzy, usable) ?? (req.fuzzy ? fuzzyMatch(fuzzyHits(text, pool), usable) : undefined);
  if (found) return found;
  if (req.thinkingSuffix === "none") return { status: "not-found" };
  const thinking = thinkingSuffixOf(text);
  if (thinking) {
    const inner = resolveText(thinking.base, req, pool, usable);
    if (inner.status === "not-found") return inner;
    return { ...inner, thinkingLevel: inner.warning ? undefined : thinking.level };
  }
  const colon = text.lastIndexOf(":");
  // strict: an unknown suffix stays in the id, so it fails rather than picking another model.
  if (req.thinkingSuffix === "strict" || colon < 0) return { status: "not-found" };
  const inner = resolveText(text.slice(0, colon), req, pool, usable);
  if (inner.status === "not-found") return inner;
  const suffix = text.slice(colon + 1);
  return { ...inner, thinkingLevel: undefined, warning: `Invalid thinking level "${suffix}" in pattern "${text}". Using default instead.` };
}

/**
 * Resolve one model reference. `usable` (has credentials) only breaks ties between providers, so a
 * unique match resolves without credentials. Not found, with a provider named (`provider` or a
 * `provider/` prefix), carries the target a custom model id would have.
 */
export function resolveModelReference(req: ReferenceRequest, models: readonly Model[], usable: (provider: string) => boolean): ReferenceResult {
  const text = req.text.trim();
  if (!text) return { status: "not-found" };
  const only = req.provider?.toLowerCase();
  const pool = only ? models.filter((m) => m.provider.toLowerCase() === only) : models;
  const result = resolveText(text, req, pool, usable);
  if (result.status !== "not-found") return result;
  const split = providerPrefix(text, pool);
  const anchor = only ? pool[0] : pool.find((m) => m.provider === split?.provider);
  if (!anchor) return result;
  const modelText = split?.modelText ?? text;
  const suffix = req.thinkingSuffix === "none" ? undefined : thinkingSuffixOf(modelText);
  return {
    status: "not-found",
    target: {
      provider: anchor.provider,
      providerModels: [anchor, ...pool.filter((m) => m.provider === anchor.provider && m !== anchor)],
      modelText,
      modelId: suffix?.base ?? modelText,
      thinkingLevel: suffix?.level,
    },
  };
}

export interface ScopedModel {
  model: Model;
  /** Set only by a `:level` in the pattern. */
  thinkingLevel?: ThinkingLevel;
}

export interface ScopeDiagnostic {
  type: "warning";
  code: "no-match" | "invalid-thinking-level" | "ambiguous";
  message: string;
  pattern: string;
}

const globChars = /[*?[]/;

/** A glob (any case) over `provider/id` or the bare id: `*sonnet*` needs no provider. */
function globHits(glob: string, models: readonly Model[]): Model[] {
  const g = new Bun.Glob(glob.toLowerCase());
  return models.filter((m) => g.match(`${m.provider}/${m.id}`.toLowerCase()) || g.match(m.id.toLowerCase()));
}

/**
 * A model scope (`--models`, `enabledModels`) over `models`, all taken as usable: each pattern
 * (exact, fuzzy or glob, optional `:level`) adds its models once, in order. A pattern that
 * matches nothing, has a bad level or matches several providers' same id yields a diagnostic
 * (the ambiguous case adds every candidate).
 */
export function resolveModelScope(patterns: readonly string[], models: readonly Model[]): { scopedModels: ScopedModel[]; diagnostics: ScopeDiagnostic[] } {
  const scopedModels: ScopedModel[] = [];
  const diagnostics: ScopeDiagnostic[] = [];
  const add = (list: readonly Model[], thinkingLevel?: ThinkingLevel) => {
    for (const model of list) {
      if (!scopedModels.some((s) => s.model.provider === model.provider && s.model.id === model.id)) scopedModels.push({ model, thinkingLevel });
    }
  };
  const warn = (code: ScopeDiagnostic["code"], pattern: string, message: string) => diagnostics.push({ type: "warning", code, message, pattern });
  const ambiguous = (pattern: string, candidates: readonly Model[]) => {
    const providers = [...new Set(candidates.map((m) => m.provider))].sort((a, b) => a.localeCompare(b));
    warn("ambiguous", pattern, `Pattern "${pattern}" matches several providers: ${providers.join(", ")}. Use provider/id to choose one.`);
  };
  const noMatch = (pattern: string) => warn("no-match", pattern, `No models match pattern "${pattern}"`);
  const all = () => true;
  for (const pattern of patterns) {
    if (globChars.test(pattern)) {
      const thinking = thinkingSuffixOf(pattern);
      const glob = thinking?.base ?? pattern;
      // An id such as `model[1m]` is a name, not a glob.
      const exact = resolveModelReference({ text: glob, thinkingSuffix: "none", fuzzy: false }, models, all);
      if (exact.status === "ambiguous") ambiguous(pattern, exact.candidates);
      const hits = exact.status === "resolved" ? [exact.model] : exact.status === "ambiguous" ? exact.candidates : globHits(glob, models);
      if (hits.length === 0) noMatch(pattern);
      add(hits, thinking?.level);
      continue;
    }
    const found = resolveModelReference({ text: pattern, thinkingSuffix: "lenient", fuzzy: true }, models, all);
    if (found.status === "not-found") {
      noMatch(pattern);
      continue;
    }
    if (found.warning) warn("invalid-thinking-level", pattern, found.warning);
    if (found.status === "ambiguous") ambiguous(pattern, found.candidates);
    add(found.status === "resolved" ? [found.model] : found.candidates, found.thinkingLevel);
  }
  return { scopedModels, diagnostics };
}
