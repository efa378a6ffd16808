/**
 * The embedded image-model catalog (images-convert.ts makes it), read when first asked for.
 */
import { readFileSync } from "node:fs";
import IMAGES_PATH from "./builtin-images.jsonl" with { type: "file" };
import type { ImageModel } from "./images-convert.ts";

let byProvider: Map<string, Map<string, ImageModel>> | undefined;

/** The embedded image catalog by provider and id, read on the first call. */
export function imageCatalog(): Map<string, Map<string, ImageModel>> {
  if (byProvider) return byProvider;
  byProvider = new Map();
  for (const line of readFileSync(IMAGES_PATH, "utf8").split("\n")) {
    if (line.length === 0) continue;
    const m = JSON.parse(line) as ImageModel;
    let models = byProvider.get(m.provider);
    if (!models) byProvider.set(m.provider, (models = new Map()));
    models.set(m.id, m);
  }
  return byProvider;
}
