import { expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { fakeThoughtSignature } from "../support/fake-provider/google.ts";
import { Pion, promptToResult, tempDirs } from "../support/pion.ts";

// One session across Bedrock, Gemini and Anthropic: each gets back only the signatures its own model made.
test("a session switching between Bedrock, Gemini and Anthropic sends each only what it accepts", async () => {
  await using fake = startFakeProvider();
  const dirs = tempDirs();
  const m = (id: string, extra: Record<string, unknown> = {}) => ({ id, reasoning: true, input: ["text"], contextWindow: 200000, maxTokens: 32000, ...extra });
  const providers = {
    "amazon-bedrock": { baseUrl: fake.url, api: "bedrock-converse-stream", models: [m("anthropic.claude-sonnet-4-5-v1:0", { reasoningOptions: [{ type: "budget_tokens", min: 1024, max: 32000 }] })] },
    gem: { baseUrl: `${fake.url}/v1beta`, api: "google-generative-ai", apiKey: "k", models: [m("gemini-3-pro-preview", { reasoningOptions: [{ type: "effort", values: ["low", "high"] }] })] },
    fake: { baseUrl: fake.url, api: "anthropic-messages", apiKey: "k", models: [m("claude-x")] },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  const env = { AWS_ACCESS_KEY_ID: "AKIA", AWS_SECRET_ACCESS_KEY: "s", AWS_REGION: "us-east-1" };
  const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", "amazon-bedrock/anthropic.claude-sonnet-4-5-v1:0", "--thinking", "low"] });
  const gsig = fakeThoughtSignature();
  fake.enqueue(
    { blocks: [{ type: "thinking", thinking: "bedrock thought", signature: "BEDROCK-SIG" }, { type: "text", text: "from bedrock" }] },
    { blocks: [{ type: "thinking", thinking: "gemini thought", signature: gsig }, { type: "text", text: "from gemini" }] },
    { blocks: [{ type: "text", text: "from anthropic" }] },
    { blocks: [{ type: "text", text: "gemini again" }] },
    { blocks: [{ type: "text", text: "bedrock again" }] },
  );
  await promptToResult(p, "one");
  await p.request({ type: "set_model", provider: "gem", modelId: "gemini-3-pro-preview" });
  await promptToResult(p, "two");
  await p.request({ type: "set_model", provider: "fake", modelId: "claude-x" });
  await promptToResult(p, "three");
  await p.request({ type: "set_model", provider: "gem", modelId: "gemini-3-pro-preview" });
  await promptToResult(p, "four");
  await p.request({ type: "set_model", provider: "amazon-bedrock", modelId: "anthropic.claude-sonnet-4-5-v1:0" });
  await promptToResult(p, "five");
  const bodies = fake.requests.map((r) => JSON.stringify(r.body));
  expect(bodies.length).toBe(5);
  // Gemini: Bedrock's reasoning as plain text, no signature of Bedrock's
  expect(bodies[1]).not.toContain("BEDROCK-SIG");
  expect(bodies[1]).toContain('{"text":"bedrock thought"}');
  // Anthropic: neither signature
  expect(bodies[2]).not.toContain("BEDROCK-SIG");
  expect(bodies[2]).not.toContain(gsig);
  // Gemini again: its own signature, on its own thought part
  const gemini = fake.requests[3]!.body as { contents: { parts: unknown[] }[] };
  expect(gemini.contents[3]!.parts[0]).toEqual({ thought: true, text: "gemini thought", thoughtSignature: gsig });
  expect(bodies[3]).not.toContain("BEDROCK-SIG");
  // Bedrock again: its own reasoning with its signature, Gemini's as text
  const bedrock = fake.requests[4]!.body as { messages: { content: unknown[] }[] };
  expect(bedrock.messages[1]!.content[0]).toEqual({ reasoningContent: { reasoningText: { text: "bedrock thought", signature: "BEDROCK-SIG" } } });
  expect(bedrock.messages[3]!.content[0]).toEqual({ text: "gemini thought" });
  expect(bodies[4]).not.toContain(gsig);
  await p.close();
});
