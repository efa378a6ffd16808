import { describe, expect, test } from "bun:test";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { AMBIENT_KEY, ambientSource } from "../../../src/providers/ambient.ts";
import { azureTarget } from "../../../src/providers/azure-config.ts";
import { createKeyResolver } from "../../../src/providers/keys.ts";
import type { Catalog } from "../../../src/providers/catalog/load.ts";

const noCatalog = { has: () => false, env: () => undefined } as unknown as Catalog;
const resolver = (env: Record<string, string>) =>
  createKeyResolver({ env, catalog: noCatalog, fileKey: () => undefined, providers: () => ["amazon-bedrock", "google-vertex"], authPaths: [] });

describe("ambient cloud credentials", () => {
  test("AWS: a profile, a whole key pair, a bearer token, ECS or IRSA; half a pair is nothing", () => {
    expect(ambientSource("amazon-bedrock", {})).toBeUndefined();
    expect(ambientSource("amazon-bedrock", { AWS_ACCESS_KEY_ID: "AKIA" })).toBeUndefined();
    expect(ambientSource("amazon-bedrock", { AWS_ACCESS_KEY_ID: "AKIA", AWS_SECRET_ACCESS_KEY: "s" })).toBe("AWS_ACCESS_KEY_ID");
    for (const name of ["AWS_PROFILE", "AWS_BEARER_TOKEN_BEDROCK", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI", "AWS_WEB_IDENTITY_TOKEN_FILE"]) {
      expect(ambientSource("amazon-bedrock", { [name]: "x" })).toBe(name);
    }
  });

  test("Vertex ADC needs a project, a location and a credentials file that exists", () => {
    const dir = mkdtempSync(join(tmpdir(), "pion-adc-"));
    const file = join(dir, "adc.json");
    const base = { GOOGLE_CLOUD_PROJECT: "p", GOOGLE_CLOUD_LOCATION: "l", HOME: dir };
    expect(ambientSource("google-vertex", { ...base, GOOGLE_APPLICATION_CREDENTIALS: file })).toBeUndefined();
    writeFileSync(file, "{}");
    expect(ambientSource("google-vertex", { ...base, GOOGLE_APPLICATION_CREDENTIALS: file })).toBe("GOOGLE_APPLICATION_CREDENTIALS");
    expect(ambientSource("google-vertex", { GOOGLE_CLOUD_LOCATION: "l", GOOGLE_APPLICATION_CREDENTIALS: file })).toBeUndefined();
    expect(ambientSource("google-vertex", base)).toBeUndefined();
  });

  test("the resolver: a placeholder key for ambient credentials, the API key variable first, never a path or half a pair as a key", () => {
    expect(resolver({ AWS_ACCESS_KEY_ID: "AKIA" }).apiKey("amazon-bedrock")).toBeUndefined();
    const aws = resolver({ AWS_BEARER_TOKEN_BEDROCK: "tok" });
    expect(aws.apiKey("amazon-bedrock")).toBe(AMBIENT_KEY);
    expect(aws.keyOrigin("amazon-bedrock")).toBe("AWS_BEARER_TOKEN_BEDROCK");
    expect(resolver({ GOOGLE_CLOUD_API_KEY: "vk", GOOGLE_APPLICATION_CREDENTIALS: "/nope" }).apiKey("google-vertex")).toBe("vk");
    expect(resolver({ GOOGLE_APPLICATION_CREDENTIALS: "/nope" }).apiKey("google-vertex")).toBeUndefined();
    expect(resolver({}).keySources("amazon-bedrock")).toEqual(["AWS_PROFILE", "AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY", "AWS_BEARER_TOKEN_BEDROCK"]);
    // the guard still masks the secret halves
    const labels = resolver({ AWS_SECRET_ACCESS_KEY: "s", AWS_SESSION_TOKEN: "t" }).credentials().map((c) => c.label);
    expect(labels).toEqual(expect.arrayContaining(["AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN"]));
  });
});

describe("Azure's target", () => {
  const model = { id: "gpt-5.4", baseUrl: "https://your-resource.openai.azure.com/openai/v1" };
  test("base URL from the variables, a resource root normalized, deployments mapped, the version", () => {
    expect(() => azureTarget(model, {})).toThrow("AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME");
    expect(azureTarget(model, { AZURE_OPENAI_RESOURCE_NAME: "acme" })).toEqual({ baseUrl: "https://acme.openai.azure.com/openai/v1", apiVersion: "v1", deployment: "gpt-5.4" });
    expect(azureTarget(model, { AZURE_OPENAI_BASE_URL: "https://acme.services.ai.azure.com/", AZURE_OPENAI_API_VERSION: "2025-04-01-preview" })).toMatchObject({
      baseUrl: "https://acme.services.ai.azure.com/openai/v1",
      apiVersion: "2025-04-01-preview",
    });
    expect(azureTarget(model, { AZURE_OPENAI_RESOURCE_NAME: "a", AZURE_OPENAI_DEPLOYMENT_NAME_MAP: "gpt-5=x, gpt-5.4 = prod-gpt ,bad" }).deployment).toBe("prod-gpt");
    expect(azureTarget({ id: "m", baseUrl: "http://127.0.0.1:9/proxy" }, {}).baseUrl).toBe("http://127.0.0.1:9/proxy");
  });
});
