import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_ACCESS_TOKEN, FAKE_TOKEN_PATH, startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { fakeThoughtSignature } from "../support/fake-provider/google.ts";
import { Pion, promptToResult, runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream, overflowRecovered } from "../support/provider-scenarios.ts";

// @google/genai in Vertex mode against the fake: `/v1beta1/projects/<p>/locations/<l>/publishers/google/models/<id>:streamGenerateContent`,
// with Application Default Credentials from an external_account file whose token_url is the fake's OAuth endpoint.
function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  const gemini = (id: string, extra: Record<string, unknown> = {}) => ({ id, reasoning: true, input: ["text", "image"], contextWindow: 1_000_000, maxTokens: 65536, ...extra });
  const providers = {
    "google-vertex": {
      baseUrl: fake.url,
      api: "google-vertex",
      models: [gemini("gemini-3-pro-preview", { reasoningOptions: [{ type: "effort", values: ["low", "high"] }] }), { id: "tiny", reasoning: false, contextWindow: 4000, maxTokens: 1000 }],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 20 }, compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
  const subject = join(dirs.home, "subject-token");
  writeFileSync(subject, "fake-oidc-token");
  const adc = join(dirs.home, "adc.json");
  writeFileSync(
    adc,
    JSON.stringify({
      type: "external_account",
      audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/ci/providers/github",
      subject_token_type: "urn:ietf:params:oauth:token-type:jwt",
      token_url: `${fake.url}${FAKE_TOKEN_PATH}`,
      credential_source: { file: subject },
    }),
  );
  const env = { GOOGLE_APPLICATION_CREDENTIALS: adc, GOOGLE_CLOUD_PROJECT: "my-proj", GOOGLE_CLOUD_LOCATION: "europe-west4" };
  const pion = (model = "gemini-3-pro-preview", extra: Record<string, string> = {}) => new Pion({ ...dirs, env: { ...env, ...extra }, args: ["--mode", "rpc", "--model", `google-vertex/${model}`] });
  return { fake, dirs, pion, env };
}

const streams = (fake: { requests: FakeRequest[] }) => fake.requests.filter((r) => r.api === "google-generative-ai");
type Body = { contents: { role: string; parts: Record<string, unknown>[] }[] };

describe("Gemini on Vertex AI through @google/genai", () => {
  test.concurrent("ADC: the OAuth token from the token endpoint as Bearer, the project's regional path", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "Hello" }] });
    const p = pion();
    const recs = await promptToResult(p, "hi");
    expect(recs.findLast((r) => r.type === "message_end")!.message).toMatchObject({ content: [{ type: "text", text: "Hello" }], api: "google-vertex" });
    const token = fake.requests.find((r) => r.path === FAKE_TOKEN_PATH)!;
    expect(String(token.body)).toContain("subject_token=fake-oidc-token");
    const req = streams(fake)[0]!;
    expect(req.path).toBe("/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-3-pro-preview:streamGenerateContent");
    expect(req.headers.authorization).toBe(`Bearer ${FAKE_ACCESS_TOKEN}`);
    await p.close();
    await fake.stop();
  });

  test.concurrent("GOOGLE_CLOUD_API_KEY: express mode with the key; a tool loop replays signatures", async () => {
    const { fake, dirs } = setup();
    const sig = fakeThoughtSignature();
    fake.enqueue({ blocks: [{ type: "toolCall", id: "c1", name: "ls", arguments: {}, signature: sig }] }, { blocks: [{ type: "toolCall", id: "c2", name: "ls", arguments: {} }] }, { blocks: [{ type: "text", text: "done" }] });
    const p = new Pion({ ...dirs, env: { GOOGLE_CLOUD_API_KEY: "vx-key" }, args: ["--mode", "rpc", "--model", "google-vertex/gemini-3-pro-preview"] });
    await promptToResult(p, "list");
    const reqs = streams(fake);
    expect(reqs.length).toBe(3);
    expect(reqs[0]!.path).toBe("/v1beta1/publishers/google/models/gemini-3-pro-preview:streamGenerateContent");
    expect(reqs[0]!.headers["x-goog-api-key"]).toBe("vx-key");
    expect((reqs[1]!.body as Body).contents[1]).toEqual({ role: "model", parts: [{ functionCall: { name: "ls", args: {}, id: "c1" }, thoughtSignature: sig }] });
    expect((reqs[2]!.body as Body).contents[3]).toEqual({ role: "model", parts: [{ functionCall: { name: "ls", args: {}, id: "c2" } }] });
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 503 is retried; a context-length error is recovered by compaction; abort mid-stream", async () => {
    const { fake, pion } = setup();
    const p = pion("tiny");
    fake.enqueue({ kind: "http_error", status: 503, message: "overloaded" }, { blocks: [{ type: "text", text: "reply one" }], usage: { input: 100, output: 10 } });
    const one = await promptToResult(p, "one");
    expect(one.find((r) => r.type === "auto_retry_start")!.errorMessage).toBe("503 UNAVAILABLE: overloaded");
    fake.enqueue({ blocks: [{ type: "text", text: "reply two" }], usage: { input: 100, output: 10 } });
    await promptToResult(p, "two");
    const recs = await overflowRecovered(p, fake, { kind: "http_error", status: 400, message: "The input token count (5000) exceeds the maximum number of tokens allowed (4000)." });
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "after overflow" }]);
    await abortedMidStream(p, fake);
    await p.close();
    await fake.stop();
  });

  test.concurrent("without a key or ADC the catalog's Vertex models are unavailable and the message names the variables", async () => {
    const dirs = tempDirs();
    const r = await runPion(["-p", "hi", "--model", "google-vertex/gemini-2.5-pro"], dirs);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("GOOGLE_CLOUD_API_KEY or GOOGLE_CLOUD_PROJECT + GOOGLE_CLOUD_LOCATION + GOOGLE_APPLICATION_CREDENTIALS");
    // A project without a location (or credentials) is not enough
    const partial = await runPion(["--list-models", "google-vertex"], { ...dirs, env: { GOOGLE_CLOUD_PROJECT: "p" } });
    expect(partial.stdout).not.toContain("google-vertex");
  });
});

describe("Claude on Vertex AI through @anthropic-ai/vertex-sdk", () => {
  function claudeSetup() {
    const base = setup();
    const providers = {
      "google-vertex-anthropic": {
        baseUrl: `${base.fake.url}/v1`,
        api: "anthropic-vertex",
        models: [{ id: "claude-sonnet-4-5@20250929", reasoning: true, input: ["text", "image"], contextWindow: 200000, maxTokens: 64000, reasoningOptions: [{ type: "budget_tokens", min: 1024, max: 64000 }] }],
      },
    };
    writeFileSync(join(base.dirs.home, "models.json"), JSON.stringify({ providers }));
    return base;
  }

  test.concurrent("ADC Bearer token, streamRawPredict path, the Anthropic body with cache points and thinking; a signature replayed; a 429 retried", async () => {
    const { fake, dirs, env } = claudeSetup();
    fake.enqueue(
      { kind: "http_error", status: 429, message: "Resource exhausted. Please try again later." },
      { blocks: [{ type: "thinking", thinking: "hm", signature: "CLAUDE-SIG" }, { type: "toolCall", id: "toolu_1", name: "ls", arguments: {} }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", "google-vertex-anthropic/claude-sonnet-4-5@20250929", "--thinking", "low"] });
    const recs = await promptToResult(p, "list");
    expect(recs.find((r) => r.type === "auto_retry_start")!.errorMessage).toContain("429");
    const reqs = fake.requests.filter((r) => r.api === "anthropic-messages");
    expect(reqs.length).toBe(3);
    expect(reqs[1]!.path).toBe("/v1/projects/my-proj/locations/europe-west4/publishers/anthropic/models/claude-sonnet-4-5@20250929:streamRawPredict");
    expect(reqs[1]!.headers.authorization).toBe(`Bearer ${FAKE_ACCESS_TOKEN}`);
    const body = reqs[1]!.body as Record<string, unknown> & { system: { cache_control?: unknown }[]; messages: { content: Record<string, unknown>[] }[] };
    // the SDK moves its anthropic-version header into the body
    expect(body.anthropic_version).toEqual(expect.any(String));
    expect(reqs[1]!.headers["anthropic-version"]).toBeUndefined();
    expect(body.model).toBeUndefined();
    expect(body.thinking).toEqual({ type: "enabled", budget_tokens: 4096 });
    expect(body.system[0]!.cache_control).toEqual({ type: "ephemeral" });
    const third = reqs[2]!.body as typeof body;
    expect(third.messages[1]!.content[0]).toEqual({ type: "thinking", thinking: "hm", signature: "CLAUDE-SIG" });
    await p.close();
    await fake.stop();
  });
});
