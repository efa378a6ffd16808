import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, promptToResult, runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream, overflowRecovered, twoShortTurns } from "../support/provider-scenarios.ts";

// The openai SDK's AzureOpenAI client against the fake: `<base>/openai/v1/responses?api-version=…`, `api-key` header.
function setup(env: Record<string, string> = {}) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  const providers = {
    azure: {
      api: "azure-openai-responses",
      baseUrl: "https://unused.openai.azure.com",
      models: [
        { id: "gpt-5.4", reasoning: true, input: ["text", "image"], contextWindow: 400000, maxTokens: 128000, reasoningOptions: [{ type: "effort", values: ["none", "low", "medium", "high", "xhigh"] }] },
        { id: "tiny", reasoning: false, contextWindow: 4000, maxTokens: 1000 },
      ],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 20 }, compaction: { keepRecentTokens: 4, reserveTokens: 1000 } });
  const allEnv = { AZURE_OPENAI_API_KEY: "az-key", AZURE_OPENAI_BASE_URL: `${fake.url}/openai/v1`, ...env };
  const pion = (model = "gpt-5.4", args: string[] = []) => new Pion({ ...dirs, env: allEnv, args: ["--mode", "rpc", "--model", `azure/${model}`, ...args] });
  return { fake, dirs, pion };
}

const bodyOf = (r: FakeRequest) => r.body as { model: string; input: Record<string, unknown>[]; reasoning?: unknown };

describe("Azure OpenAI Responses through the openai SDK's Azure client", () => {
  test.concurrent("text: deployment from AZURE_OPENAI_DEPLOYMENT_NAME_MAP, api-key header, api-version", async () => {
    const { fake, pion } = setup({ AZURE_OPENAI_DEPLOYMENT_NAME_MAP: "other=x, gpt-5.4=my-gpt", AZURE_OPENAI_API_VERSION: "2025-04-01-preview" });
    fake.enqueue({ blocks: [{ type: "text", text: "Hello" }], usage: { input: 30, output: 4, cacheRead: 10 } });
    const p = pion();
    const recs = await promptToResult(p, "hi");
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg).toMatchObject({ content: [{ type: "text", text: "Hello" }], api: "azure-openai-responses", model: "gpt-5.4" });
    expect(msg.usage).toMatchObject({ input: 30, cacheRead: 10, output: 4 });
    const req = fake.requests[0]!;
    expect(req.path).toBe("/openai/v1/responses");
    expect(req.headers["api-key"]).toBe("az-key");
    expect(req.headers.authorization).toBeUndefined();
    expect(bodyOf(req).model).toBe("my-gpt");
    await p.close();
    await fake.stop();
  });

  test.concurrent("a tool loop of three requests with reasoning items replayed, and an image", async () => {
    const { fake, dirs, pion } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha");
    fake.enqueue(
      { blocks: [{ type: "thinking", thinking: "look", signature: "gAAAAenc1" }, { type: "toolCall", id: "call_1", name: "read", arguments: { path: "a.txt" } }] },
      { blocks: [{ type: "toolCall", id: "call_2", name: "ls", arguments: {} }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const p = pion("gpt-5.4", ["--thinking", "high"]);
    // a real 1x1 PNG: a prompt's images are decoded (normalized) before they are sent
    const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    const from = p.records.length;
    await p.request({ type: "prompt", message: "read it", images: [{ type: "image", data, mimeType: "image/png" }] });
    await p.waitFor("agent_settled", from);
    expect(fake.requests.length).toBe(3);
    const first = bodyOf(fake.requests[0]!);
    expect(first.reasoning).toMatchObject({ effort: "high" });
    expect(JSON.stringify(first.input)).toContain(`data:image/png;base64,${data}`);
    const third = bodyOf(fake.requests[2]!).input;
    const types = third.map((i) => i.type);
    expect(types).toContain("reasoning");
    expect(third.find((i) => i.type === "reasoning")).toMatchObject({ encrypted_content: "gAAAAenc1" });
    expect(third.filter((i) => i.type === "function_call").map((i) => i.call_id)).toEqual(["call_1", "call_2"]);
    expect(third.filter((i) => i.type === "function_call_output").map((i) => i.call_id)).toEqual(["call_1", "call_2"]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 429 is retried; a context-length error is recovered by compaction", async () => {
    const { fake, pion } = setup();
    const q = pion();
    fake.enqueue({ kind: "http_error", status: 429, message: "Rate limit reached" }, { blocks: [{ type: "text", text: "fine" }] });
    const retried = await promptToResult(q, "one");
    expect(retried.find((r) => r.type === "auto_retry_start")!.errorMessage).toContain("429");
    expect(retried.findLast((r) => r.type === "message_end")!.message.content[0].text).toBe("fine");
    await q.close();
    const p = pion("tiny");
    await twoShortTurns(p, fake);
    const recs = await overflowRecovered(
      p,
      fake,
      { kind: "http_error", status: 400, message: "This model's maximum context length is 4000 tokens.", errorType: "invalid_request_error" },
      // keepRecentTokens 4 (the prompt "three", 2 tokens, and "reply two", 3) cuts inside turn two: a split-turn summary too
      [{ blocks: [{ type: "text", text: "SUMMARY" }] }, { blocks: [{ type: "text", text: "TURN-PREFIX" }] }],
    );
    expect(recs.findLast((r) => r.type === "message_end")!.message.content[0].text).toBe("after overflow");
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort mid-stream", async () => {
    const { fake, pion } = setup();
    const p = pion();
    await abortedMidStream(p, fake, 4);
    await p.close();
    await fake.stop();
  });

  test.concurrent("missing credentials name AZURE_OPENAI_API_KEY; a missing resource names its variables", async () => {
    const dirs = tempDirs();
    const r = await runPion(["-p", "hi", "--model", "azure/gpt-5.4"], dirs);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("AZURE_OPENAI_API_KEY");
    const noUrl = await runPion(["-p", "hi", "--model", "azure/gpt-5.4"], { ...dirs, env: { AZURE_OPENAI_API_KEY: "k" } });
    expect(noUrl.code).not.toBe(0);
    expect(noUrl.stdout + noUrl.stderr).toContain("AZURE_OPENAI_BASE_URL or AZURE_OPENAI_RESOURCE_NAME");
  });
});

describe("Foundry models on the azure provider (Chat Completions)", () => {
  test.concurrent("models.json `api: openai-completions` under azure: <base>/chat/completions, api-key, the deployment as model", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    const providers = { azure: { api: "openai-completions", baseUrl: "https://unused.services.ai.azure.com", models: [{ id: "deepseek-v4-pro", reasoning: false, contextWindow: 128000, maxTokens: 8000 }] } };
    writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
    fake.enqueue({ blocks: [{ type: "text", text: "from foundry" }] });
    const env = { AZURE_OPENAI_API_KEY: "az-key", AZURE_OPENAI_BASE_URL: `${fake.url}/openai/v1`, AZURE_OPENAI_DEPLOYMENT_NAME_MAP: "deepseek-v4-pro=my-deepseek" };
    const r = await runPion(["-p", "hi", "--no-session", "--model", "azure/deepseek-v4-pro"], { ...dirs, env });
    expect({ code: r.code, out: r.stdout.trim() }).toEqual({ code: 0, out: "from foundry" });
    const req = fake.requests[0]!;
    expect(req.path).toBe("/openai/v1/chat/completions");
    expect(req.headers["api-key"]).toBe("az-key");
    expect(req.headers.authorization).toBeUndefined();
    expect((req.body as { model: string }).model).toBe("my-deepseek");
  });
});
