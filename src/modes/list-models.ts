import type { Model } from "../providers/types.ts";

/**
 * `pion --list-models [search]`: the models that have a usable key, as a table sorted by
 * provider then id. `search` keeps the models whose "provider id" holds every word of it as a
 * subsequence (`son4` finds claude-sonnet-4). Pure, so `pion models` can share it.
 */
export function formatModelList(models: readonly Model[], search?: string): string {
  if (models.length === 0) return "No models available: set a provider's API key, or add models to models.json\n";
  const shown = searchModels(models, search)
    .sort((a, b) => a.provider.localeCompare(b.provider) || a.id.localeCompare(b.id));
  if (shown.length === 0) return `No models matching "${search}"\n`;
  const rows = [
    ["provider", "model", "context", "max-out", "thinking", "images"],
    ...shown.map((m) => [
      m.provider,
      m.id,
      tokens(m.contextWindow),
      tokens(m.maxTokens),
      m.reasoning ? "yes" : "no",
      m.input.includes("image") ? "yes" : "no",
    ]),
  ];
  const widths = rows[0]!.map((_, col) => Math.max(...rows.map((r) => r[col]!.length)));
  return rows.map((r) => r.map((cell, col) => cell.padEnd(widths[col]!)).join("  ").trimEnd()).join("\n") + "\n";
}

/** The models whose "provider id" holds every word of `search` as a subsequence (all when there is none). */
export function searchModels(models: readonly Model[], search?: string): Model[] {
  const words = (search ?? "").toLowerCase().split(/\s+/).filter(Boolean);
  return models.filter((m) => words.every((w) => isSubsequence(w, `${m.provider} ${m.id}`.toLowerCase())));
}

function isSubsequence(needle: string, hay: string): boolean {
  let at = 0;
  for (const ch of hay) if (ch === needle[at]) at++;
  return at === needle.length;
}

/** 200000 -> 200K, 1000000 -> 1M, 1500000 -> 1.5M. */
export function tokens(n: number): string {
  if (n >= 1_000_000) return `${+(n / 1_000_000).toFixed(1)}M`;
  if (n >= 1_000) return `${+(n / 1_000).toFixed(1)}K`;
  return String(n);
}
