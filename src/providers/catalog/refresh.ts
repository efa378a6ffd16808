import { mkdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname } from "node:path";
import * as v from "valibot";
import { errorMessage } from "../../util/errors.ts";
import { describeIssues } from "../../util/issues.ts";
import { convertCatalog } from "./convert.ts";
import type { CatalogData, ModelDef } from "./data.ts";
import { encodeCatalog } from "./file-format.ts";
import { Catalog, refreshedCatalogPath } from "./load.ts";
import { ModelsDevSchema } from "./models-dev.ts";

export const DEFAULT_CATALOG_URL = "https://models.dev/api.json";
/** models.dev's whole catalog is ~4 MB; anything this large is not it. */
export const MAX_CATALOG_BYTES = 32 * 1024 * 1024;

export interface RefreshOptions {
  home: string;
  url: string;
  timeoutMs?: number;
}

export interface RefreshReport {
  url: string;
  path: string;
  providers: number;
  models: number;
  addedProviders: number;
  addedModels: number;
  changedModels: number;
}

/**
 * `pion models refresh`: download a catalog in models.dev's format, validate and convert it,
 * and replace `$PION_HOME/cache/models.jsonl` atomically. Throws a one-line error (download,
 * timeout, size, JSON, shape, disk) before anything is written, so a failure leaves the
 * previous cache as it was.
 */
export async function refreshCatalog(o: RefreshOptions): Promise<RefreshReport> {
  const timeoutMs = o.timeoutMs ?? 10_000;
  if (!/^https?:\/\//i.test(o.url)) throw new Error(`Invalid catalog URL "${o.url}": expected http:// or https://`);
  const text = await download(o.url, timeoutMs);
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`The catalog at ${o.url} is not JSON: ${errorMessage(err)}`);
  }
  const parsed = v.safeParse(ModelsDevSchema, json);
  if (!parsed.success) throw new Error(`The catalog at ${o.url} is not in models.dev's format: ${describeIssues(parsed.issues)}`);
  const data = convertCatalog(parsed.output, `${o.url} (fetched ${new Date().toISOString()})`);
  if (data.providers.length === 0) throw new Error(`The catalog at ${o.url} lists no provider pion can talk to`);

  const report = compare(new Catalog(o.home), data);
  const path = refreshedCatalogPath(o.home);
  writeAtomically(path, encodeCatalog(data));
  return { url: o.url, path, ...report };
}

async function download(url: string, timeoutMs: number): Promise<string> {
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = () => new Error(`Downloading ${url} timed out after ${timeoutMs / 1000} s`);
  let res: Response;
  try {
    res = await fetch(url, { signal, headers: { accept: "application/json" } });
  } catch (err) {
    if (signal.aborted) throw timedOut();
    throw new Error(`Cannot download ${url}: ${errorMessage(err)}`);
  }
  if (!res.ok) {
    await res.body?.cancel().catch(() => {});
    throw new Error(`Cannot download ${url}: HTTP ${res.status}${res.statusText ? ` ${res.statusText}` : ""}`);
  }
  const tooLarge = () => new Error(`The catalog at ${url} is larger than ${MAX_CATALOG_BYTES / 1024 / 1024} MB`);
  if (Number(res.headers.get("content-length") ?? 0) > MAX_CATALOG_BYTES) {
    await res.body?.cancel().catch(() => {});
    throw tooLarge();
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for await (const chunk of res.body ?? []) {
      size += chunk.byteLength;
      if (size > MAX_CATALOG_BYTES) {
        await res.body?.cancel().catch(() => {});
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (signal.aborted) throw timedOut();
    throw err;
  }
  return Buffer.concat(chunks).toString("utf8");
}

/** How the new data differs from what pion uses today (built-in plus any previous refresh). */
function compare(before: Catalog, after: CatalogData): Omit<RefreshReport, "url" | "path"> {
  let addedProviders = 0;
  let addedModels = 0;
  let changedModels = 0;
  let models = 0;
  const same = (a: ModelDef, b: ModelDef) => JSON.stringify({ ...a, source: undefined }) === JSON.stringify(b);
  for (const p of after.providers) {
    models += p.models.length;
    const prev = before.has(p.id) ? before.provider(p.id) : undefined;
    if (!prev) addedProviders++;
    const old = new Map((prev?.models ?? []).map((m) => [m.id, m]));
    for (const m of p.models) {
      const was = old.get(m.id);
      if (!was) addedModels++;
      else if (!same(was, m)) changedModels++;
    }
  }
  return { providers: after.providers.length, models, addedProviders, addedModels, changedModels };
}

/** Write to a temp file beside `path`, then rename over it: readers see the old or the new file, never half. */
function writeAtomically(path: string, text: string): void {
  const tmp = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(tmp, text, { mode: 0o600 });
    renameSync(tmp, path);
  } catch (err) {
    try {
      rmSync(tmp, { force: true });
    } catch {
      // Nothing was written there (e.g. the cache folder could not be made).
    }
    throw new Error(`Cannot write the model catalog to ${path}: ${errorMessage(err)}`);
  }
}
