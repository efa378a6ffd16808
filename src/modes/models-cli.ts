import { writeOut, writeErr } from "../util/stdio.ts";
import { loadUserSettings } from "../config.ts";
import { DEFAULT_CATALOG_URL, refreshCatalog } from "../providers/catalog/refresh.ts";
import { loadModels } from "../providers/models.ts";
import { THINKING_ORDER, thinkingLevelsFor } from "../providers/thinking.ts";
import type { Model } from "../providers/types.ts";
import { searchModels, tokens } from "./list-models.ts";

export interface ModelsCliOptions {
  home: string;
  env: Record<string, string | undefined>;
  provider?: string;
  search?: string;
  json: boolean;
  url?: string;
  timeoutSeconds?: number;
}

const out = (text: string) => writeOut(text.endsWith("\n") ? text : `${text}\n`);

/**
 * `pion models [--provider P] [--search TEXT] [--json]` lists the catalog as pion sees it
 * (built-in, refreshed and models.json merged); `pion models refresh [--url URL]` downloads
 * a new one. Returns the exit code; failures are one line on stderr.
 */
export async function runModelsCli(sub: string | undefined, o: ModelsCliOptions): Promise<number> {
  if (sub === "refresh") {
    // The user's settings only: a checked-out folder must not choose where pion downloads from.
    const url = o.url ?? (o.env.PION_MODELS_URL || undefined) ?? loadUserSettings(o.home).modelCatalogUrl ?? DEFAULT_CATALOG_URL;
    const r = await refreshCatalog({ home: o.home, url, timeoutMs: o.timeoutSeconds !== undefined ? o.timeoutSeconds * 1000 : undefined });
    if (o.json) out(JSON.stringify(r));
    else {
      out(
        `Refreshed the model catalog from ${r.url}: ${r.providers} providers, ${r.models} models ` +
          `(${r.addedProviders} providers and ${r.addedModels} models added, ${r.changedModels} models changed) -> ${r.path}`,
      );
    }
    return 0;
  }
  if (sub !== undefined && sub !== "list") {
    writeErr(`pion: unknown models command "${sub}": expected list or refresh\n`);
    return 2;
  }
  const models = listModels(loadModels(o.home, o.env), o);
  if (o.json) out(JSON.stringify({ models: models.map((m) => ({ ...m, thinking: thinkingLevelsFor(m) })) }));
  else out(formatModels(models));
  return 0;
}

/** The catalog's models, optionally one provider's, matching `search` as `--list-models` does. */
export function listModels(registry: ReturnType<typeof loadModels>, o: { provider?: string; search?: string }): Model[] {
  if (o.provider && !registry.providerDefaults(o.provider)) throw new Error(`Unknown provider: ${o.provider}`);
  return searchModels(o.provider ? registry.models(o.provider) : registry.all(), o.search);
}

const usd = (n: number) => `$${Number(n.toPrecision(4))}`;

/** The levels besides "off": "-" for none, "a..b" when they follow each other in THINKING_ORDER, else a list. */
function thinking(m: Model): string {
  const on = thinkingLevelsFor(m).filter((l) => l !== "off");
  if (on.length === 0) return "-";
  const contiguous = THINKING_ORDER.indexOf(on.at(-1)!) - THINKING_ORDER.indexOf(on[0]!) === on.length - 1;
  return on.length === 1 ? on[0]! : contiguous ? `${on[0]}..${on.at(-1)}` : on.join(",");
}

function prices(m: Model): string {
  const c = m.cost;
  if (!c.input && !c.output) return "-";
  let s = `${usd(c.input)}/${usd(c.output)}`;
  if (c.cacheRead || c.cacheWrite) s += ` cache ${usd(c.cacheRead)}/${usd(c.cacheWrite)}`;
  if (c.tiers?.length) s += ` (>${tokens(c.tiers[0]!.contextOver)}: ${usd(c.tiers[0]!.input)}/${usd(c.tiers[0]!.output)})`;
  return s;
}

/** An aligned table, one model per line; prices in USD per million tokens (input/output, cache read/write). */
export function formatModels(models: readonly Model[]): string {
  if (models.length === 0) return "no models";
  const rows = [
    ["PROVIDER", "MODEL", "NAME", "CONTEXT", "OUTPUT", "THINKING", "PRICE /1M (in/out)", "STATUS", "SOURCE"],
    ...models.map((m) => [m.provider, m.id, m.name, tokens(m.contextWindow), tokens(m.maxTokens), thinking(m), prices(m), m.status ?? "-", m.source ?? "-"]),
  ];
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  return rows.map((r) => r.map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i]!))).join("  ")).join("\n");
}
