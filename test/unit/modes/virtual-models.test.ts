import { describe, expect, test } from "bun:test";
import type { VirtualModelDefinition } from "../../../src/extensions/api.ts";
import type { ExtensionRunner } from "../../../src/extensions/types.ts";
import { withVirtualModels } from "../../../src/modes/virtual-models.ts";
import type { ModelRegistry } from "../../../src/providers/models.ts";
import { clampThinkingLevel, thinkingLevelsFor } from "../../../src/providers/thinking.ts";
import type { Model } from "../../../src/providers/types.ts";

const physical = (provider: string, id: string): Model => ({
  id,
  name: id,
  api: "anthropic-messages",
  provider,
  baseUrl: "http://x",
  reasoning: true,
  input: ["text"],
  cost: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1000,
  maxTokens: 100,
});
const catalog = [physical("keyed", "auto"), physical("keyed", "other"), physical("keyless", "m")];
const base: ModelRegistry = {
  providers: () => ["keyed", "keyless"],
  models: (p) => catalog.filter((m) => m.provider === p),
  all: () => catalog,
  apiKey: (p) => (p === "keyed" ? "k" : undefined),
  keyOrigin: (p) => (p === "keyed" ? "KEYED_API_KEY" : undefined),
  requestAuth: async (p) => (p === "keyed" ? { apiKey: "k" } : {}),
  keySources: () => [],
  onNewCredentials: () => {},
  find: (p, id) => catalog.find((m) => m.provider === p && m.id === id),
  available: () => catalog.filter((m) => m.provider === "keyed"),
  credentials: () => [],
  providerDefaults: (p) => (p === "keyed" || p === "keyless" ? { api: "anthropic-messages", baseUrl: "http://x" } : undefined),
};
const route = () => undefined;
const defs: VirtualModelDefinition[] = [
  { provider: "router", id: "fast", thinkingLevels: ["low", "high"], route },
  { provider: "keyed", id: "auto", name: "Keyed auto", contextWindow: 5000, route },
  { provider: "keyless", id: "v", route },
];
const registry = withVirtualModels(base, { virtualModels: () => defs, providers: () => [] } as unknown as ExtensionRunner);
const key = (m: Model) => `${m.provider}/${m.id}`;

describe("the registry with virtual models", () => {
  test("listed beside the physical ones; one with a physical model's id hides it", () => {
    expect(registry.providers()).toEqual(["keyed", "keyless", "router"]);
    expect(registry.models("keyed").map(key)).toEqual(["keyed/other", "keyed/auto"]);
    expect(registry.find("keyed", "auto")).toMatchObject({ api: "pi-virtual", name: "Keyed auto", contextWindow: 5000, maxTokens: 0, thinkingLevels: ["off"], reasoning: false });
    expect(registry.all().map(key)).toEqual(["keyed/other", "keyless/m", "router/fast", "keyed/auto", "keyless/v"]);
  });

  test("available: under a provider of its own always, under a physical provider when that one has credentials", () => {
    expect(registry.available().map(key)).toEqual(["keyed/other", "router/fast", "keyed/auto"]);
    expect([registry.apiKey("router"), registry.keyOrigin("router")]).toEqual(["none", "virtual model"]);
    expect(registry.apiKey("keyless")).toBeUndefined();
    expect(registry.apiKey("nobody")).toBeUndefined();
  });

  test("a virtual model offers exactly its thinking levels", () => {
    const fast = registry.find("router", "fast")!;
    expect(fast).toMatchObject({ name: "fast", reasoning: true, input: ["text", "image"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } });
    expect(thinkingLevelsFor(fast)).toEqual(["low", "high"]);
    expect(["off", "medium", "xhigh"].map((l) => clampThinkingLevel(fast, l as "off"))).toEqual(["low", "high", "high"]);
    expect(thinkingLevelsFor(registry.find("keyed", "auto"))).toEqual(["off"]);
  });
});
