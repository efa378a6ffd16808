import { expect, test } from "bun:test";
import { providerEnvNames } from "../../../src/providers/env-names.ts";

test("the reference's names come first, then the catalog's, once each", () => {
  expect(providerEnvNames("zai", ["ZHIPU_API_KEY"])).toEqual(["ZAI_API_KEY", "ZHIPU_API_KEY"]);
  expect(providerEnvNames("anthropic", ["ANTHROPIC_API_KEY"])).toEqual(["ANTHROPIC_AUTH_TOKEN", "ANTHROPIC_OAUTH_TOKEN", "ANTHROPIC_API_KEY"]);
  expect(providerEnvNames("llama", ["LLAMA_API_KEY"])).toEqual(["META_API_KEY", "LLAMA_API_KEY"]);
  expect(providerEnvNames("cloudflare-workers-ai")).toEqual(["CLOUDFLARE_API_KEY"]);
  expect(providerEnvNames("somewhere", ["X_KEY"])).toEqual(["X_KEY"]);
});

test("Copilot is never enabled by a plain GITHUB_TOKEN; GitHub Models still is", () => {
  expect(providerEnvNames("github-copilot", ["GITHUB_TOKEN"])).toEqual(["COPILOT_GITHUB_TOKEN"]);
  expect(providerEnvNames("github-models", ["GITHUB_TOKEN"])).toEqual(["GITHUB_TOKEN"]);
});
