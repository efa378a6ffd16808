import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { convertImageCatalog } from "../../../src/providers/catalog/images-convert.ts";
import type { ModelsDev } from "../../../src/providers/catalog/models-dev.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { behaviourOf } from "../../../src/extensions/surface/export-surface.ts";

const REF = process.env.PION_REFERENCE_PKG;
// biome-ignore lint/suspicious/noExplicitAny: the reference's modules and pion's virtual ones are untyped here
type Mod = Record<string, any>;
const compat = () => referenceModules()["pi-ai/compat"] as Mod;
const SNAPSHOT = ["../../../../shared", "../../../../../shared"].map((d) => join(import.meta.dir, d, "models.dev/api.json")).find((f) => Bun.file(f).size > 0);

const model = (id: string, input: string[] | undefined, output: string[] | undefined, cost?: Mod) => ({ id, name: `${id} name`, limit: {}, ...(input || output ? { modalities: { ...(input ? { input } : {}), ...(output ? { output } : {}) } } : {}), ...(cost ? { cost } : {}) });

describe("the image-model catalog", () => {
  test("models.dev models that output images, for OpenRouter only, in pi-ai's image-model shape", () => {
    const data = {
      openrouter: {
        id: "openrouter",
        name: "OpenRouter",
        env: ["OPENROUTER_API_KEY"],
        models: {
          b: model("z/pic", ["text"], ["image"]),
          a: model("a/both", ["text", "image", "pdf"], ["text", "image"], { input: 1, output: 2, cache_read: 0.1 }),
          c: model("a/chat", ["text"], ["text"]),
          d: model("a/plain", undefined, undefined),
        },
      },
      openai: { id: "openai", name: "OpenAI", env: ["OPENAI_API_KEY"], models: { x: model("gpt-image-1", ["text"], ["image"]) } },
    } as unknown as ModelsDev;
    expect(convertImageCatalog(data)).toEqual([
      {
        type: "image",
        id: "a/both",
        name: "a/both name",
        api: "openrouter-images",
        provider: "openrouter",
        baseUrl: "https://openrouter.ai/api/v1",
        input: ["text", "image"],
        output: ["text", "image"],
        cost: { input: 1, output: 2, cacheRead: 0.1, cacheWrite: 0 },
        inputLimits: { images: { resize: { maxWidth: 2000, maxHeight: 2000, maxBytes: 4718592, jpegQuality: 80 } } },
      },
      { type: "image", id: "z/pic", name: "z/pic name", api: "openrouter-images", provider: "openrouter", baseUrl: "https://openrouter.ai/api/v1", input: ["text"], output: ["image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } },
    ]);
  });

  test("getImageModel, getImageModels and getImageProviders read the embedded catalog built from the snapshot", () => {
    for (const name of ["getImageModel", "getImageModels", "getImageProviders"]) expect([name, behaviourOf(compat()[name])]).toEqual([name, "pion"]);
    expect(compat().getImageProviders()).toEqual(["openrouter"]);
    const all = compat().getImageModels("openrouter") as Mod[];
    expect(all.length).toBeGreaterThan(0);
    expect(all.every((m) => m.type === "image" && m.api === "openrouter-images" && m.output.includes("image"))).toBe(true);
    expect(compat().getImageModel("openrouter", all[0]!.id)).toEqual(all[0]);
    expect(compat().getImageModel("openrouter", "no/such")).toBeUndefined();
    expect(compat().getImageModels("anthropic")).toEqual([]);
    if (SNAPSHOT) {
      const data = JSON.parse(readFileSync(SNAPSHOT, "utf8")) as ModelsDev;
      expect(all).toEqual(convertImageCatalog(data));
    }
  });

  (REF ? test : test.skip)("an entry has the reference's shape: its keys in order, types, endpoint, prices and input limits", async () => {
    const ref = await import(join(REF!, "..", "pi-ai", "dist", "image-models.js"));
    expect(compat().getImageProviders()).toEqual(ref.getImageProviders());
    const id = "google/gemini-2.5-flash-image";
    const mine = compat().getImageModel("openrouter", id) as Mod;
    const theirs = ref.getImageModel("openrouter", id) as Mod;
    expect(Object.keys(mine)).toEqual(Object.keys(theirs));
    for (const k of Object.keys(theirs)) expect([k, typeof mine[k]]).toEqual([k, typeof theirs[k]]);
    const { name: _n, input, output, ...rest } = mine;
    const { name: _rn, input: refInput, output: refOutput, ...refRest } = theirs;
    expect(rest).toEqual(refRest);
    expect([...input].sort()).toEqual([...refInput].sort());
    expect([...output].sort()).toEqual([...refOutput].sort());
    // A text-only model has no input limits, as the reference's.
    const textOnly = (ref.getImageModels("openrouter") as Mod[]).find((m) => !m.input.includes("image"));
    if (textOnly) expect("inputLimits" in textOnly).toBe(false);
    expect((compat().getImageModels("openrouter") as Mod[]).filter((m) => !m.input.includes("image")).every((m) => !("inputLimits" in m))).toBe(true);
  });

  test("every catalog model can be passed to generateImagesOpenRouter, and a Models collection lists them as image models", async () => {
    const bodies: Mod[] = [];
    const server = Bun.serve({
      port: 0,
      async fetch(req) {
        bodies.push((await req.json()) as Mod);
        return Response.json({ id: "gen", choices: [{ message: { role: "assistant", content: null, images: [{ image_url: { url: "data:image/png;base64,AAAA" } }] } }] });
      },
    });
    try {
      const local = `http://127.0.0.1:${server.port}/api/v1`;
      const all = compat().getImageModels("openrouter") as Mod[];
      for (const m of all) {
        const r = await compat().generateImagesOpenRouter({ ...m, baseUrl: local }, { input: [{ type: "text", text: "a cat" }] }, { apiKey: "k" });
        expect([m.id, r.stopReason, r.output]).toEqual([m.id, "stop", [{ type: "image", mimeType: "image/png", data: "AAAA" }]]);
        expect(bodies.at(-1)).toMatchObject({ model: m.id, modalities: m.output.includes("text") ? ["image", "text"] : ["image"] });
      }
      const models = compat().createModels();
      const local_ = all.map((m) => ({ ...m, baseUrl: local }));
      models.setProvider(compat().createProvider({ id: "openrouter", auth: { apiKey: { resolve: async () => ({ auth: { apiKey: "k" } }) } }, models: local_, images: { "openrouter-images": { generateImages: compat().generateImagesOpenRouter } } }));
      expect(models.getModelsOfType("image")).toEqual(local_);
      expect(models.getModelOfType("image", "openrouter", all[0]!.id)).toEqual(local_[0]);
      expect((await models.generateImages(local_[0], { input: [{ type: "text", text: "x" }] })).stopReason).toBe("stop");
    } finally {
      server.stop(true);
    }
  });
});
