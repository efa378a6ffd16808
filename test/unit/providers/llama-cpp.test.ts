import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { discoverLlamaCpp, llamaServerUrl, namesLlamaCpp } from "../../../src/providers/llama-cpp.ts";
import { loadModels } from "../../../src/providers/models.ts";

/** A stand-in llama-server answering /v1/models and /props with canned bodies; records the auth header. */
function fakeServer(models: unknown, props: unknown) {
  const auth: (string | null)[] = [];
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch(req) {
      auth.push(req.headers.get("authorization"));
      const path = new URL(req.url).pathname;
      if (path === "/v1/models") return Response.json(models);
      if (path === "/props") return Response.json(props);
      return new Response("no", { status: 404 });
    },
  });
  return { url: `http://127.0.0.1:${server.port}`, auth, stop: () => server.stop(true) };
}

const servers: { stop(): void }[] = [];
afterAll(() => {
  for (const s of servers) s.stop();
});

describe("llama.cpp discovery", () => {
  test("LLAMA_BASE_URL: default, trailing /v1 and slashes dropped, bad values named", () => {
    expect(llamaServerUrl({})).toBe("http://127.0.0.1:9931");
    expect(llamaServerUrl({ LLAMA_BASE_URL: " http://box:8080/v1/ " })).toBe("http://box:8080");
    expect(llamaServerUrl({ LLAMA_BASE_URL: "https://host/llama/" })).toBe("https://host/llama");
    expect(() => llamaServerUrl({ LLAMA_BASE_URL: "nope" })).toThrow("LLAMA_BASE_URL is not a URL: nope");
    expect(() => llamaServerUrl({ LLAMA_BASE_URL: "ftp://x" })).toThrow("must be http or https");
  });

  test("which options name the provider", () => {
    expect(namesLlamaCpp({ provider: "llama.cpp" })).toBe(true);
    expect(namesLlamaCpp({ model: "llama.cpp/qwen" })).toBe(true);
    expect(namesLlamaCpp({ provider: "openai", model: "llama.cpp/qwen" })).toBe(false);
    expect(namesLlamaCpp({ model: "qwen" })).toBe(false);
  });

  test("single-model server: the context size comes from /props; no key, no Authorization header", async () => {
    const s = fakeServer({ data: [{ id: "qwen", meta: { n_ctx: 4096, n_ctx_train: 32768 } }] }, { default_generation_settings: { n_ctx: 8192 } });
    servers.push(s);
    const p = await discoverLlamaCpp({ LLAMA_BASE_URL: s.url });
    expect(p).toMatchObject({ id: "llama.cpp", api: "openai-completions", baseUrl: `${s.url}/v1` });
    expect(p.models).toEqual([expect.objectContaining({ id: "qwen", contextWindow: 8192, maxTokens: 8192, input: ["text"] })]);
    expect(s.auth).toEqual([null, null]);
    expect(p.apiKey).toBeUndefined();
    const reg = loadModels(mkdtempSync(join(tmpdir(), "pion-llama-")), {}, undefined, { extraProviders: [p] });
    expect(reg.available().map((m) => m.id)).toContain("qwen");
    // No key: nothing for the credential guard to hide.
    expect(reg.credentials().some((c) => c.label.startsWith("llama.cpp"))).toBe(false);
  });

  test("router: loaded, sleeping and (with autoload) unloaded models; failed and decision-only ones left out", async () => {
    const s = fakeServer(
      {
        data: [
          { id: "a", status: { value: "loaded" }, meta: { n_ctx: 1000 }, architecture: { input_modalities: ["text", "image"] } },
          { id: "b", status: { value: "sleeping", args: ["--ctx-size", "3000"] } },
          { id: "c", status: { value: "unloaded", args: ["-c", "5000"] }, meta: undefined },
          { id: "d", status: { value: "unloaded", failed: true } },
          { id: "e", status: { value: "loaded" }, architecture: { output_modalities: ["decisions"] } },
          { id: "f", status: { value: "loading" } },
        ],
      },
      { role: "router", models_autoload: true },
    );
    servers.push(s);
    const p = await discoverLlamaCpp({ LLAMA_BASE_URL: s.url, LLAMA_API_KEY: "k1" });
    expect(p.models.map((m) => [m.id, m.contextWindow, m.input])).toEqual([
      ["a", 1000, ["text", "image"]],
      ["b", 3000, ["text"]],
      ["c", 5000, ["text"]],
    ]);
    expect(p.apiKey).toBe("k1");
    expect(s.auth.every((h) => h === "Bearer k1")).toBe(true);
  });

  test("router without autoload: unloaded models are not offered", async () => {
    const s = fakeServer({ data: [{ id: "c", status: { value: "unloaded" } }] }, { models_autoload: false });
    servers.push(s);
    expect((await discoverLlamaCpp({ LLAMA_BASE_URL: s.url })).models).toEqual([]);
  });

  test("errors name the server", async () => {
    await expect(discoverLlamaCpp({ LLAMA_BASE_URL: "http://127.0.0.1:9" })).rejects.toThrow("Could not reach the llama.cpp server at http://127.0.0.1:9 (LLAMA_BASE_URL)");
    const s = fakeServer({ object: "list" }, {});
    servers.push(s);
    await expect(discoverLlamaCpp({ LLAMA_BASE_URL: s.url })).rejects.toThrow(`llama.cpp server at ${s.url} returned no model list from /v1/models`);
  });
});

describe("loadModels extraProviders", () => {
  const extra = {
    id: "llama.cpp",
    api: "openai-completions" as const,
    baseUrl: "http://h/v1",
    apiKey: "secret-key",
    models: [{ id: "qwen", contextWindow: 2048, maxTokens: 2048 }],
  };

  test("a run-time provider is listed and available; models.json overrides its models", () => {
    const home = mkdtempSync(join(tmpdir(), "pion-llama-"));
    writeFileSync(join(home, "models.json"), JSON.stringify({ providers: { "llama.cpp": { modelOverrides: { qwen: { maxTokens: 7 } } } } }));
    const reg = loadModels(home, {}, undefined, { extraProviders: [extra] });
    expect(reg.providers()).toContain("llama.cpp");
    expect(reg.find("llama.cpp", "qwen")).toMatchObject({ provider: "llama.cpp", api: "openai-completions", baseUrl: "http://h/v1", contextWindow: 2048, maxTokens: 7 });
    expect(reg.available().some((m) => m.provider === "llama.cpp")).toBe(true);
    expect(reg.apiKey("llama.cpp")).toBe("secret-key");
    expect(reg.credentials()).toContainEqual({ label: "llama.cpp apiKey", envNames: [], value: "secret-key" });
    expect(reg.find("llama.cpp", "qwen")!.source).toBe("models.json");
    expect(loadModels(home, {}, { provider: "openai", apiKey: "k-openai" }, { extraProviders: [extra] }).apiKey("llama.cpp")).toBe("secret-key");
    expect(loadModels(home, {}, { apiKey: "k-all" }, { extraProviders: [extra] }).apiKey("llama.cpp")).toBe("k-all");
    // Without an override a discovered model has no catalog source.
    const bare = loadModels(mkdtempSync(join(tmpdir(), "pion-llama-")), {}, undefined, { extraProviders: [extra] });
    expect(bare.find("llama.cpp", "qwen")!.source).toBeUndefined();
  });

  test("models.json overrides alone do not need the provider to be there", () => {
    const home = mkdtempSync(join(tmpdir(), "pion-llama-"));
    writeFileSync(join(home, "models.json"), JSON.stringify({ providers: { "llama.cpp": { modelOverrides: { qwen: { maxTokens: 7 } } } } }));
    expect(loadModels(home, {}).models("llama.cpp")).toEqual([]);
  });
});
