import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, promptToResult, runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream, overflowRecovered, twoShortTurns } from "../support/provider-scenarios.ts";

// The real @aws-sdk/client-bedrock-runtime against the fake's `/model/<id>/converse-stream`,
// binary event-stream frames with their CRCs; credentials from the SDK's chain (env keys here).
const AWS = { AWS_ACCESS_KEY_ID: "AKIAFAKEFAKEFAKE", AWS_SECRET_ACCESS_KEY: "fake-secret", AWS_REGION: "eu-west-1" };
const CLAUDE = "anthropic.claude-sonnet-4-5-20250929-v1:0";

function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  const m = (id: string, extra: Record<string, unknown> = {}) => ({ id, reasoning: true, input: ["text", "image"], contextWindow: 200000, maxTokens: 64000, ...extra });
  const providers = {
    "amazon-bedrock": {
      baseUrl: fake.url,
      api: "bedrock-converse-stream",
      models: [m(CLAUDE, { reasoningOptions: [{ type: "budget_tokens", min: 1024, max: 64000 }] }), m("amazon.nova-pro-v1:0", { reasoning: false }), m("amazon.nova-lite-v1:0", { reasoning: false, cost: { input: 0.06, output: 0.24, cacheRead: 0.015 } }), { id: "tiny", reasoning: false, contextWindow: 4000, maxTokens: 1000 }],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeSettings(dirs.home, { retry: { maxRetries: 3, baseDelayMs: 20 }, compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
  const pion = (model = CLAUDE, args: string[] = []) => new Pion({ ...dirs, env: AWS, args: ["--mode", "rpc", "--model", `amazon-bedrock/${model}`, ...args] });
  return { fake, dirs, pion };
}

type Body = { messages: { role: string; content: Record<string, unknown>[] }[]; system?: Record<string, unknown>[]; inferenceConfig?: { maxTokens: number }; additionalModelRequestFields?: Record<string, unknown>; toolConfig?: { tools: unknown[] } };
const bodyOf = (r: FakeRequest) => r.body as Body;

describe("Bedrock Converse stream through the AWS SDK", () => {
  test.concurrent("text: path, SigV4 with the region, cache points for Claude, usage with cache reads and writes", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["Hel", "lo"] }], usage: { input: 40, output: 7, cacheRead: 100, cacheWrite: 20 } });
    const p = pion();
    const recs = await promptToResult(p, "hi");
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg).toMatchObject({ content: [{ type: "text", text: "Hello" }], stopReason: "stop", rawStopReason: "end_turn", api: "bedrock-converse-stream" });
    expect(msg.usage).toMatchObject({ input: 40, output: 7, cacheRead: 100, cacheWrite: 20, totalTokens: 167 });
    const req = fake.requests[0]!;
    expect(decodeURIComponent(req.path)).toBe(`/model/${CLAUDE}/converse-stream`);
    expect(req.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIAFAKEFAKEFAKE\/\d{8}\/eu-west-1\/bedrock\/aws4_request/);
    const body = bodyOf(req);
    expect(body.system?.[1]).toEqual({ cachePoint: { type: "default" } });
    expect(body.messages).toEqual([{ role: "user", content: [{ text: "hi" }, { cachePoint: { type: "default" } }] }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a model the catalog prices cache reads for (Nova) gets cache points, without Claude's thinking fields", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "hi" }] });
    const p = pion("amazon.nova-lite-v1:0");
    await promptToResult(p, "hi");
    const body = bodyOf(fake.requests[0]!);
    expect(body.system?.at(-1)).toEqual({ cachePoint: { type: "default" } });
    expect(body.messages[0]!.content.at(-1)).toEqual({ cachePoint: { type: "default" } });
    expect(body.additionalModelRequestFields).toBeUndefined();
    await p.close();
    await fake.stop();
  });

  test.concurrent("a tool loop of three requests, reasoning replayed with its signature", async () => {
    const { fake, dirs, pion } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha");
    fake.enqueue(
      { blocks: [{ type: "thinking", thinking: ["lo", "ok"], signature: "sig-one" }, { type: "toolCall", id: "tu1", name: "read", arguments: { path: "a.txt" } }] },
      { blocks: [{ type: "toolCall", id: "tu2", name: "ls", arguments: {} }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const p = pion(CLAUDE, ["--thinking", "medium"]);
    await promptToResult(p, "read it");
    expect(fake.requests.length).toBe(3);
    const first = bodyOf(fake.requests[0]!);
    expect(first.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 10240 } });
    expect(first.toolConfig?.tools.length).toBeGreaterThan(0);
    const second = bodyOf(fake.requests[1]!).messages;
    expect(second[1]).toEqual({
      role: "assistant",
      content: [{ reasoningContent: { reasoningText: { text: "look", signature: "sig-one" } } }, { toolUse: { toolUseId: "tu1", name: "read", input: { path: "a.txt" } } }],
    });
    expect(second[2]!.content[0]).toMatchObject({ toolResult: { toolUseId: "tu1", status: "success", content: [{ text: expect.stringContaining("alpha") }] } });
    const third = bodyOf(fake.requests[2]!).messages;
    expect(third[3]).toEqual({ role: "assistant", content: [{ toolUse: { toolUseId: "tu2", name: "ls", input: {} } }] });
    await p.close();
    await fake.stop();
  });

  test.concurrent("an image goes as bytes; a model that is not Claude gets no cache points or thinking fields", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "a dot" }] });
    const p = pion("amazon.nova-pro-v1:0");
    // a real 1x1 PNG: a prompt's images are decoded (normalized) before they are sent
    const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await p.request({ type: "prompt", message: "what is it", images: [{ type: "image", data, mimeType: "image/png" }] });
    await p.waitFor("agent_settled");
    const body = bodyOf(fake.requests[0]!);
    expect(body.messages[0]!.content).toContainEqual({ image: { format: "png", source: { bytes: data } } });
    expect(JSON.stringify(body)).not.toContain("cachePoint");
    expect(body.additionalModelRequestFields).toBeUndefined();
    await p.close();
    await fake.stop();
  });

  test.concurrent("throttling (429), a 503 and a ModelStreamErrorException mid-stream are retried", async () => {
    const { fake, pion } = setup();
    fake.enqueue(
      { kind: "http_error", status: 429, message: "Too many requests, please wait before trying again." },
      { kind: "http_error", status: 503, message: "Service unavailable" },
      { kind: "stream_error", afterBlocks: [{ type: "text", text: "par" }], message: "The model stream failed" },
      { blocks: [{ type: "text", text: "fine" }] },
    );
    const p = pion(CLAUDE);
    const recs = await promptToResult(p, "hi");
    expect(recs.filter((r) => r.type === "auto_retry_start").map((s) => s.errorMessage)).toEqual([
      "429 ThrottlingException: Too many requests, please wait before trying again.",
      "503 ServiceUnavailableException: Service unavailable",
      "503 ModelStreamErrorException: The model stream failed",
    ]);
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "fine" }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a context-length ValidationException is recovered by compaction", async () => {
    const { fake, pion } = setup();
    const p = pion("tiny");
    await twoShortTurns(p, fake);
    const recs = await overflowRecovered(p, fake, { kind: "http_error", status: 400, message: "Input is too long for requested model." });
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "after overflow" }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort mid-stream", async () => {
    const { fake, pion } = setup();
    const p = pion();
    await abortedMidStream(p, fake);
    await p.close();
    await fake.stop();
  });

  test.concurrent("AWS_PROFILE: the profile's keys and region from the shared files", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.home, "aws-config"), "[profile ci]\nregion = ap-south-1\n");
    writeFileSync(join(dirs.home, "aws-credentials"), "[ci]\naws_access_key_id = AKIAPROFILE\naws_secret_access_key = s\n");
    const env = { AWS_PROFILE: "ci", AWS_CONFIG_FILE: join(dirs.home, "aws-config"), AWS_SHARED_CREDENTIALS_FILE: join(dirs.home, "aws-credentials") };
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, env, args: ["--mode", "rpc", "--model", `amazon-bedrock/${CLAUDE}`] });
    await promptToResult(p, "hi");
    expect(fake.requests[0]!.headers.authorization).toMatch(/Credential=AKIAPROFILE\/\d{8}\/ap-south-1\/bedrock\//);
    await p.close();
    await fake.stop();
  });

  test.concurrent("without AWS credentials the catalog's Bedrock models are unavailable and the message names the variables", async () => {
    const dirs = tempDirs();
    const r = await runPion(["-p", "hi", "--model", `amazon-bedrock/${CLAUDE}`], dirs);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("AWS_PROFILE or AWS_ACCESS_KEY_ID + AWS_SECRET_ACCESS_KEY or AWS_BEARER_TOKEN_BEDROCK");
    const none = await runPion(["--list-models", "amazon-bedrock"], dirs);
    expect(none.stdout).not.toContain("amazon-bedrock");
    // Half a key pair is not a credential; a bearer token or a profile is.
    const half = await runPion(["--list-models", "amazon-bedrock"], { ...dirs, env: { AWS_ACCESS_KEY_ID: "AKIA" } });
    expect(half.stdout).not.toContain("amazon-bedrock");
    const token = await runPion(["--list-models", "amazon-bedrock"], { ...dirs, env: { AWS_BEARER_TOKEN_BEDROCK: "tok" } });
    expect(token.stdout).toContain("amazon-bedrock");
  });
});
