/**
 * `bun run catalog [models.dev api.json] [output folder]`: turn a models.dev snapshot (default
 * ../shared/models.dev/api.json) into the catalog pion embeds (builtin.jsonl, and its index builtin-index.json)
 * and the image-model catalog (builtin-images.jsonl).
 * Regenerate, and commit the result on its own, whenever the snapshot changes.
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import * as v from "valibot";
import { describeIssues } from "../../util/issues.ts";
import { convertCatalog } from "./convert.ts";
import { encodeCatalog } from "./file-format.ts";
import { convertImageCatalog, encodeImageCatalog } from "./images-convert.ts";
import { ModelsDevSchema } from "./models-dev.ts";

const root = resolve(import.meta.dir, "../../..");
// The snapshot sits in the shared folder beside the checkout (one level up from a worktree's too).
const fallback = ["../shared", "../../shared"].map((d) => join(root, d, "models.dev/api.json")).find((f) => existsSync(f));
const input = resolve(process.argv[2] ?? fallback ?? join(root, "../shared/models.dev/api.json"));
const parsed = v.safeParse(ModelsDevSchema, JSON.parse(readFileSync(input, "utf8")));
if (!parsed.success) {
  console.error(`gen-catalog: ${input} is not in models.dev's format: ${describeIssues(parsed.issues)}`);
  process.exit(1);
}
const outDir = resolve(process.argv[3] ?? import.meta.dir);
const catalog = convertCatalog(parsed.output, `models.dev snapshot ${relative(root, input).replace(/^(\.\.\/)+/, "")}`);
writeFileSync(join(outDir, "builtin.jsonl"), encodeCatalog(catalog));
// Ids and key variables, imported eagerly: choosing a provider by key, or learning that a
// models.json provider is not a catalog one, reads none of the model data.
const index = { date: catalog.date, env: Object.fromEntries(catalog.providers.map((p) => [p.id, p.env])) };
writeFileSync(join(outDir, "builtin-index.json"), `${JSON.stringify(index)}\n`);
const images = convertImageCatalog(parsed.output);
writeFileSync(join(outDir, "builtin-images.jsonl"), encodeImageCatalog(images));
const models = catalog.providers.reduce((n, p) => n + p.models.length, 0);
console.error(`gen-catalog: ${catalog.providers.length} providers, ${models} models (data as of ${catalog.date}), ${images.length} image models`);
