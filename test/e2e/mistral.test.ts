import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, promptToResult, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream } from "../support/provider-scenarios.ts";

// The built-in mistral provider (its catalog models, MISTRAL_API_KEY) with only its base URL
// moved by models.json to the fake, which serves Mistral's format under /mistral/.
function setup() {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers: { mistral: { baseUrl: `${fake.url}/mistral` } } }));
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 20 } });
  const pion = (model = "mistral/mistral-small-latest", extra: string[] = []) =>
    new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model, ...extra], env: { MISTRAL_API_KEY: "mistral-test-key" } });
  return { fake, dirs, pion };
}

type Body = { model: string; messages: Record<string, unknown>[]; tools?: { function: { name: string } }[]; reasoning_effort?: string; prompt_mode?: string; prompt_cache_key?: string; max_tokens?: number };
const bodyOf = (r: FakeRequest) => r.body as Body;

describe("the built-in mistral provider on mistral-conversations", () => {
  test.concurrent("text: endpoint, key, body, usage and cost, the message's api", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["Bon", "jour"] }], usage: { input: 1000, cacheRead: 400, output: 50 } });
    const p = pion();
    const recs = await promptToResult(p, "salut");
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg).toMatchObject({ api: "mistral-conversations", provider: "mistral", model: "mistral-small-latest", stopReason: "stop", content: [{ type: "text", text: "Bonjour" }] });
    expect(msg.usage).toMatchObject({ input: 1000, cacheRead: 400, output: 50, cacheWrite: 0, totalTokens: 1450 });
    expect(msg.usage.cost.total).toBeGreaterThan(0);
    const req = fake.requests[0]!;
    expect(req.path).toBe("/mistral/v1/chat/completions");
    expect(req.headers.authorization).toBe("Bearer mistral-test-key");
    const body = bodyOf(req);
    expect(body.model).toBe("mistral-small-latest");
    expect(body.messages[0]!.role).toBe("system");
    expect(body.messages[1]).toEqual({ role: "user", content: [{ type: "text", text: "salut" }] });
    expect(body.tools?.map((t) => t.function.name)).toEqual(expect.arrayContaining(["read", "bash"]));
    // A session id: Mistral's cache key and its affinity header.
    const state = await p.request({ type: "get_state" });
    expect(body.prompt_cache_key).toBe(state.data.sessionId);
    expect(req.headers["x-affinity"]).toBe(state.data.sessionId);
    expect(p.wireIssues).toEqual([]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a tool round trip: the call's 9-character id comes back on the tool message, thinking replayed as Mistral's parts", async () => {
    const { fake, dirs, pion } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha");
    fake.enqueue(
      { blocks: [{ type: "thinking", thinking: "read it" }, { type: "toolCall", id: "Ab12Cd34E", name: "read", arguments: { path: "a.txt" }, fragments: 2 }] },
      { blocks: [{ type: "text", text: "It says alpha." }] },
    );
    const p = pion("mistral/mistral-small-latest", ["--thinking", "high"]);
    const recs = await promptToResult(p, "what is in a.txt?");
    expect(recs.find((r) => r.type === "tool_execution_end")).toMatchObject({ toolCallId: "Ab12Cd34E", toolName: "read", isError: false });
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "It says alpha." }]);
    expect(fake.requests.length).toBe(2);
    expect(bodyOf(fake.requests[0]!).reasoning_effort).toBe("high");
    const second = bodyOf(fake.requests[1]!).messages;
    expect(second[2]).toEqual({
      role: "assistant",
      prefix: false,
      content: [{ type: "thinking", thinking: [{ type: "text", text: "read it" }] }],
      tool_calls: [{ id: "Ab12Cd34E", type: "function", function: { name: "read", arguments: '{"path":"a.txt"}' }, index: 0 }],
    });
    expect(second[3]).toMatchObject({ role: "tool", tool_call_id: "Ab12Cd34E", name: "read" });
    expect(JSON.stringify(second[3]!.content)).toContain("alpha");
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 429 and a 503 are retried with the documented events; the error text carries Mistral's body", async () => {
    const { fake, pion } = setup();
    fake.enqueue(
      { kind: "http_error", status: 429, message: "Requests rate limit exceeded" },
      { kind: "http_error", status: 503, message: "Service unavailable" },
      { blocks: [{ type: "text", text: "fine" }] },
    );
    const p = pion();
    const recs = await promptToResult(p, "hi");
    const starts = recs.filter((r) => r.type === "auto_retry_start");
    expect(starts.map((s) => [s.attempt, s.maxAttempts, s.delayMs])).toEqual([
      [1, 2, 20],
      [2, 2, 40],
    ]);
    expect(starts[0]!.errorMessage).toBe('Mistral API error (429): {"object":"error","message":"Requests rate limit exceeded","type":"rate_limited","param":null,"code":null}');
    expect(starts[1]!.errorMessage).toStartWith("Mistral API error (503): ");
    expect(recs.find((r) => r.type === "auto_retry_end")).toEqual({ type: "auto_retry_end", success: true, attempt: 2 });
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "fine" }]);
    expect(fake.requests.length).toBe(3);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 401 is not retried: the turn ends with Mistral's error", async () => {
    const { fake, pion } = setup();
    fake.enqueue({ kind: "http_error", status: 401, message: "Unauthorized" });
    const p = pion();
    const recs = await promptToResult(p, "hi");
    expect(recs.some((r) => r.type === "auto_retry_start")).toBe(false);
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg.stopReason).toBe("error");
    expect(msg.errorMessage).toStartWith("Mistral API error (401): ");
    expect(fake.requests.length).toBe(1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("models.json: a provider on mistral-conversations, and one model on it under another API, with no warning", async () => {
    const fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: "one" }] }, { blocks: [{ type: "text", text: "two" }] }] });
    const dirs = tempDirs();
    const providers = {
      "my-mistral": { baseUrl: `${fake.url}/mistral`, api: "mistral-conversations", apiKey: "k2", models: [{ id: "magistral-x", reasoning: true, contextWindow: 40000, maxTokens: 4000 }] },
      mixed: { baseUrl: `${fake.url}/v1`, api: "openai-completions", apiKey: "k3", models: [{ id: "chat" }, { id: "via-mistral", api: "mistral-conversations", baseUrl: `${fake.url}/mistral/v1` }] },
    };
    writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "my-mistral/magistral-x", "--thinking", "high"] });
    await promptToResult(p, "think");
    await p.request({ type: "set_model", provider: "mixed", modelId: "via-mistral" });
    await promptToResult(p, "again");
    expect(fake.requests.map((r) => [r.api, r.path, r.headers.authorization])).toEqual([
      ["mistral-conversations", "/mistral/v1/chat/completions", "Bearer k2"],
      ["mistral-conversations", "/mistral/v1/chat/completions", "Bearer k3"],
    ]);
    // A reasoning model without effort levels is switched on by prompt_mode.
    expect(bodyOf(fake.requests[0]!)).toMatchObject({ prompt_mode: "reasoning", max_tokens: 4000 });
    expect(bodyOf(fake.requests[0]!).reasoning_effort).toBeUndefined();
    expect(p.stderr).not.toContain("does not implement");
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
});
