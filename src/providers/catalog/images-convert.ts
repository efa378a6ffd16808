/**
 * The image-model catalog's data: models.dev's models that output images, for the providers whose
 * image API pion implements (OpenRouter's, `openrouter-images`: a Chat Completions request with
 * `modalities`), in pi-ai's image-model shape. `bun run catalog` writes it beside the text
 * catalog (builtin-images.jsonl, one model a line); images.ts reads it.
 */
import { KNOWN_ENDPOINTS, usableUrl } from "./convert.ts";
import type { ModelsDev, ModelsDevModel } from "./models-dev.ts";

type Modality = "text" | "image";

/** One image model as pi-ai describes it (its catalog's `type: "image"` entries). */
export interface ImageModel {
  type: "image";
  id: string;
  name: string;
  api: string;
  provider: string;
  baseUrl: string;
  input: Modality[];
  output: Modality[];
  cost: { input: number; output: number; cacheRead: number; cacheWrite: number };
  inputLimits?: { images: { resize: { maxWidth: number; maxHeight: number; maxBytes: number; jpegQuality: number } } };
}

/** The image APIs pion implements, by provider, with the endpoint models.dev may leave out. */
const IMAGE_APIS: Record<string, { api: string; baseUrl: string }> = {
  openrouter: { api: "openrouter-images", baseUrl: KNOWN_ENDPOINTS.openrouter!.baseUrl },
};

/** How images sent to an image model are scaled down first: the reference's limits for OpenRouter's image models. */
const IMAGE_INPUT_LIMITS: NonNullable<ImageModel["inputLimits"]> = { images: { resize: { maxWidth: 2000, maxHeight: 2000, maxBytes: 4.5 * 1024 * 1024, jpegQuality: 80 } } };

const modalities = (list: string[] | undefined): Modality[] => (list ?? []).filter((x): x is Modality => x === "text" || x === "image");

function convertImageModel(m: ModelsDevModel, provider: string, endpoint: { api: string; baseUrl: string }): ImageModel | undefined {
  const output = modalities(m.modalities?.output);
  if (!output.includes("image")) return undefined;
  const input = m.modalities?.input ? modalities(m.modalities.input) : ["text" as const];
  const model: ImageModel = {
    type: "image",
    id: m.id,
    name: m.name,
    api: endpoint.api,
    provider,
    baseUrl: endpoint.baseUrl,
    input,
    output,
    cost: { input: m.cost?.input ?? 0, output: m.cost?.output ?? 0, cacheRead: m.cost?.cache_read ?? 0, cacheWrite: m.cost?.cache_write ?? 0 },
  };
  if (input.includes("image")) model.inputLimits = structuredClone(IMAGE_INPUT_LIMITS);
  return model;
}

/** models.dev data (validated) -> the image models pion can generate with, sorted by provider and id. */
export function convertImageCatalog(data: ModelsDev): ImageModel[] {
  const out: ImageModel[] = [];
  for (const [id, endpoint] of Object.entries(IMAGE_APIS).sort(([a], [b]) => (a < b ? -1 : 1))) {
    const p = data[id];
    if (!p) continue;
    const baseUrl = usableUrl(p.api) ? p.api : endpoint.baseUrl;
    const models = Object.values(p.models).flatMap((m) => convertImageModel(m, id, { api: endpoint.api, baseUrl }) ?? []);
    out.push(...models.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)));
  }
  return out;
}

export const encodeImageCatalog = (models: ImageModel[]): string => models.map((m) => `${JSON.stringify(m)}\n`).join("");

