import { expect, test } from "bun:test";
import { formatModelList } from "../../../src/modes/list-models.ts";
import type { Model } from "../../../src/providers/types.ts";

const model = (provider: string, id: string, over: Partial<Model> = {}): Model => ({
  id,
  name: id,
  api: "anthropic-messages",
  provider,
  baseUrl: "http://x",
  reasoning: false,
  input: ["text"],
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
  contextWindow: 1_000_000,
  maxTokens: 64_000,
  ...over,
});

const models = [
  model("openai", "gpt-5", { reasoning: true, input: ["text", "image"], contextWindow: 400_000, maxTokens: 128_000 }),
  model("anthropic", "claude-sonnet-4-5", { reasoning: true, contextWindow: 200_000, maxTokens: 1_500 }),
  model("anthropic", "claude-haiku-4-5", { contextWindow: 1_500_000, maxTokens: 900 }),
];

test("a table sorted by provider then id, token counts shortened", () => {
  expect(formatModelList(models)).toBe(
    [
      "provider   model              context  max-out  thinking  images",
      "anthropic  claude-haiku-4-5   1.5M     900      no        no",
      "anthropic  claude-sonnet-4-5  200K     1.5K     yes       no",
      "openai     gpt-5              400K     128K     yes       yes",
      "",
    ].join("\n"),
  );
});

test("search: every word a subsequence of provider and id", () => {
  const ids = (search: string) => formatModelList(models, search).trim().split("\n").slice(1).map((l) => l.split(/\s+/)[1]);
  expect(ids("son45")).toEqual(["claude-sonnet-4-5"]);
  expect(ids("anthropic haiku")).toEqual(["claude-haiku-4-5"]);
  expect(ids("GPT")).toEqual(["gpt-5"]);
  expect(formatModelList(models, "zzz")).toBe('No models matching "zzz"\n');
  expect(formatModelList([])).toStartWith("No models available");
});
