import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { errorMessage } from "../../util/errors.ts";
import { log } from "../../util/log.ts";
import type { ModelSource } from "../types.ts";
import BUILTIN_PATH from "./builtin.jsonl" with { type: "file" };
import type { CatalogProvider, ModelDef } from "./data.ts";
import { CatalogFile } from "./file-format.ts";
import INDEX_JSON from "./builtin-index.json" with { type: "json" };
import { OPENAI_CODEX_ID, OPENAI_CODEX_PROVIDER } from "./openai-codex.ts";

const INDEX: { date: string; env: Record<string, string[]> } = INDEX_JSON;

/** Where `pion models refresh` keeps the downloaded catalog. */
export const refreshedCatalogPath = (home: string): string => join(home, "cache", "models.jsonl");

export type SourcedModel = ModelDef & { source: ModelSource };
export type SourcedProvider = Omit<CatalogProvider, "models"> & { models: SourcedModel[] };

export function readBuiltinCatalog(): CatalogFile {
  return new CatalogFile(readFileSync(BUILTIN_PATH), BUILTIN_PATH);
}

/**
 * The built-in catalog and, when `pion models refresh` wrote one, the refreshed one, each read
 * on first use (the built-in ids and key variables come from a small index bundled with the
 * code). Where both know a model, the entry updated last wins (the refreshed one on a tie), so
 * an upgraded binary with newer data is not masked by an older refresh.
 */
export class Catalog {
  private builtin?: CatalogFile;
  private refreshed?: CatalogFile | null;
  private readonly merged = new Map<string, SourcedProvider | undefined>();

  constructor(private readonly home: string) {}

  private builtinFile(): CatalogFile {
    return (this.builtin ??= readBuiltinCatalog());
  }

  private refreshedFile(): CatalogFile | undefined {
    if (this.refreshed !== undefined) return this.refreshed ?? undefined;
    this.refreshed = null;
    const path = refreshedCatalogPath(this.home);
    if (existsSync(path)) {
      try {
        this.refreshed = new CatalogFile(readFileSync(path), path);
      } catch (err) {
        // A damaged cache must not stop pion: the built-in data still serves.
        log("models", `ignoring the refreshed catalog ${path}: ${errorMessage(err)}`);
      }
    }
    return this.refreshed ?? undefined;
  }

  ids(): string[] {
    return [...new Set([...Object.keys(INDEX.env), ...(this.refreshedFile()?.ids() ?? []), OPENAI_CODEX_ID])];
  }

  has(id: string): boolean {
    return Object.hasOwn(INDEX.env, id) || Object.hasOwn(this.refreshedFile()?.header.providers ?? {}, id) || id === OPENAI_CODEX_ID;
  }

  /** The variables that may hold a catalog provider's key (without reading model data). */
  env(id: string): string[] | undefined {
    const r = this.refreshedFile()?.header.env;
    return r && Object.hasOwn(r, id) ? r[id] : Object.hasOwn(INDEX.env, id) ? INDEX.env[id] : id === OPENAI_CODEX_ID ? [] : undefined;
  }

  provider(id: string): SourcedProvider | undefined {
    if (this.merged.has(id)) return this.merged.get(id);
    const refreshed = this.refreshedFile();
    // The one provider models.dev lacks is pion's own data (openai-codex.ts), unless a refresh brought it.
    const builtin = Object.hasOwn(INDEX.env, id) ? this.builtinFile().provider(id) : id === OPENAI_CODEX_ID ? OPENAI_CODEX_PROVIDER : undefined;
    const merged = mergeProvider(builtin, refreshed?.provider(id), (refreshed?.header.date ?? "") >= INDEX.date);
    this.merged.set(id, merged);
    return merged;
  }

  all(): SourcedProvider[] {
    return this.ids().map((id) => this.provider(id)!);
  }
}

const tag = (models: ModelDef[], source: ModelSource): SourcedModel[] => models.map((m) => ({ ...m, source }));

function mergeProvider(b: CatalogProvider | undefined, r: CatalogProvider | undefined, refreshedIsNewer: boolean): SourcedProvider | undefined {
  if (!b && !r) return undefined;
  if (!r) return { ...b!, models: tag(b!.models, "built-in") };
  if (!b) return { ...r, models: tag(r.models, "refreshed") };
  const byId = new Map<string, SourcedModel>(tag(b.models, "built-in").map((m) => [m.id, m]));
  for (const m of r.models) {
    const prev = byId.get(m.id);
    if (!prev || (m.lastUpdated ?? "") >= (prev.lastUpdated ?? "")) byId.set(m.id, { ...m, source: "refreshed" });
  }
  const base = refreshedIsNewer ? r : b;
  return { ...base, models: [...byId.values()].sort((x, y) => (x.id < y.id ? -1 : x.id > y.id ? 1 : 0)) };
}
