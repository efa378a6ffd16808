import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { fakeThoughtSignature } from "../support/fake-provider/google.ts";
import { Pion, promptToResult, runPion, tempDirs, writeSettings } from "../support/pion.ts";
import { abortedMidStream, overflowRecovered, twoShortTurns } from "../support/provider-scenarios.ts";

// The real @google/genai SDK against the fake's `…/models/<id>:streamGenerateContent?alt=sse`.
function setup(models: Record<string, unknown>[] = []) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  const gemini = (id: string, extra: Record<string, unknown> = {}) => ({ id, reasoning: true, input: ["text", "image"], contextWindow: 1_000_000, maxTokens: 65536, ...extra });
  const providers = {
    gem: {
      baseUrl: `${fake.url}/v1beta`,
      api: "google-generative-ai",
      apiKey: "gem-key",
      models: [gemini("gemini-3-pro-preview", { reasoningOptions: [{ type: "effort", values: ["low", "high"] }] }), gemini("gemini-2.5-flash", { reasoningOptions: [{ type: "toggle" }, { type: "budget_tokens", min: 0, max: 24576 }] }), { id: "tiny", reasoning: false, contextWindow: 4000, maxTokens: 1000 }, ...models],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 20 }, compaction: { keepRecentTokens: 30, reserveTokens: 1000 } });
  return { fake, dirs };
}

type Body = { contents: { role: string; parts: Record<string, unknown>[] }[]; systemInstruction?: unknown; generationConfig?: Record<string, unknown>; tools?: unknown[] };
const bodyOf = (r: FakeRequest) => r.body as Body;

describe("Gemini through @google/genai", () => {
  test.concurrent("text: path, key header, system instruction, usage", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: ["Hel", "lo"] }], usage: { input: 40, output: 7, cacheRead: 10 } });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    const recs = await promptToResult(p, "hi");
    const end = recs.findLast((r) => r.type === "message_end")!.message;
    expect(end.content).toEqual([{ type: "text", text: "Hello" }]);
    expect(end.usage).toMatchObject({ input: 40, output: 7, cacheRead: 10 });
    expect(end.api).toBe("google-generative-ai");
    const req = fake.requests[0]!;
    expect(req.path).toBe("/v1beta/models/gemini-3-pro-preview:streamGenerateContent");
    expect(req.headers["x-goog-api-key"]).toBe("gem-key");
    const body = bodyOf(req);
    expect(body.contents).toEqual([{ role: "user", parts: [{ text: "hi" }] }]);
    expect(JSON.stringify(body.systemInstruction)).toContain("coding");
    expect(body.generationConfig?.maxOutputTokens).toBe(65536);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a tool loop of three requests replays every thoughtSignature byte for byte", async () => {
    const { fake, dirs } = setup();
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha");
    const [s1, s2, s3] = [fakeThoughtSignature(), fakeThoughtSignature(), fakeThoughtSignature()];
    fake.enqueue(
      { blocks: [{ type: "thinking", thinking: "look", signature: s1 }, { type: "toolCall", id: "c1", name: "read", arguments: { path: "a.txt" }, signature: s2 }] },
      { blocks: [{ type: "toolCall", id: "c2", name: "ls", arguments: {}, signature: s3 }] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    await promptToResult(p, "read it");
    expect(fake.requests.length).toBe(3);
    const second = bodyOf(fake.requests[1]!).contents;
    expect(second[1]).toEqual({
      role: "model",
      parts: [
        { thought: true, text: "look", thoughtSignature: s1 },
        { functionCall: { name: "read", args: { path: "a.txt" }, id: "c1" }, thoughtSignature: s2 },
      ],
    });
    expect(second[2]!.role).toBe("user");
    expect(second[2]!.parts[0]).toMatchObject({ functionResponse: { name: "read", id: "c1", response: { output: expect.stringContaining("alpha") } } });
    const third = bodyOf(fake.requests[2]!).contents;
    expect(third[3]).toEqual({ role: "model", parts: [{ functionCall: { name: "ls", args: {}, id: "c2" }, thoughtSignature: s3 }] });
    expect(bodyOf(fake.requests[0]!).tools).toHaveLength(1);
    await p.close();
    await fake.stop();
  });

  test.concurrent("thinking: a level for Gemini 3, a budget for Gemini 2.5, thoughts streamed as thinking", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "thinking", thinking: ["hm", "m"] }, { type: "text", text: "ok" }], usage: { output: 30, reasoning: 20 } }, { blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview", "--thinking", "high"] });
    const recs = await promptToResult(p, "think");
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg.content).toEqual([{ type: "thinking", thinking: "hmm" }, { type: "text", text: "ok" }]);
    expect(msg.usage.output).toBe(30);
    expect(bodyOf(fake.requests[0]!).generationConfig?.thinkingConfig).toEqual({ includeThoughts: true, thinkingLevel: "HIGH" });
    await p.request({ type: "set_model", provider: "gem", modelId: "gemini-2.5-flash" });
    await p.request({ type: "set_thinking_level", level: "off" });
    await promptToResult(p, "again");
    expect(bodyOf(fake.requests[1]!).generationConfig?.thinkingConfig).toEqual({ thinkingBudget: 0 });
    // Another model's thinking goes back as plain text, without its signature
    expect(bodyOf(fake.requests[1]!).contents[1]).toEqual({ role: "model", parts: [{ text: "hmm" }, { text: "ok" }] });
    await p.close();
    await fake.stop();
  });

  test.concurrent("an image goes as inlineData", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "a dot" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    // a real 1x1 PNG: a prompt's images are decoded (normalized) before they are sent
    const data = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";
    await p.request({ type: "prompt", message: "what is it", images: [{ type: "image", data, mimeType: "image/png" }] });
    await p.waitFor("agent_settled");
    expect(bodyOf(fake.requests[0]!).contents[0]!.parts).toContainEqual({ inlineData: { mimeType: "image/png", data } });
    await p.close();
    await fake.stop();
  });

  test.concurrent("a 429 and a 503 are retried", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ kind: "http_error", status: 429, message: "Resource exhausted" }, { kind: "http_error", status: 503, message: "The model is overloaded" }, { blocks: [{ type: "text", text: "fine" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    const recs = await promptToResult(p, "hi");
    const starts = recs.filter((r) => r.type === "auto_retry_start");
    expect(starts.map((s) => s.errorMessage)).toEqual(["429 RESOURCE_EXHAUSTED: Resource exhausted", "503 UNAVAILABLE: The model is overloaded"]);
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "fine" }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a context-length error is recovered by compaction", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/tiny"] });
    await twoShortTurns(p, fake);
    const recs = await overflowRecovered(p, fake, { kind: "http_error", status: 400, message: "The input token count (5000) exceeds the maximum number of tokens allowed (4000)." });
    expect(recs.findLast((r) => r.type === "message_end")!.message.content).toEqual([{ type: "text", text: "after overflow" }]);
    await p.close();
    await fake.stop();
  });

  test.concurrent("abort mid-stream", async () => {
    const { fake, dirs } = setup();
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    await abortedMidStream(p, fake);
    await p.close();
    await fake.stop();
  });

  test.concurrent("a safety stop is an error the user can read", async () => {
    const { fake, dirs } = setup();
    fake.enqueue({ blocks: [{ type: "text", text: "I" }], finishReason: "SAFETY" });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    const recs = await promptToResult(p, "hi");
    const msg = recs.findLast((r) => r.type === "message_end")!.message;
    expect(msg.stopReason).toBe("error");
    expect(msg.errorMessage).toBe("Gemini stopped the response: the reply was blocked by safety filters (SAFETY)");
    await p.close();
    await fake.stop();
  });

  test.concurrent("the catalog's google provider needs GEMINI_API_KEY and names it when missing", async () => {
    const dirs = tempDirs();
    const r = await runPion(["-p", "hi", "--model", "google/gemini-2.5-flash"], dirs);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain("GEMINI_API_KEY");
    const list = await runPion(["--list-models", "gemini-2.5-flash"], { ...dirs, env: { GEMINI_API_KEY: "k" } });
    expect(list.stdout).toContain("google");
  });
});

describe("Gemini tool results with images", () => {
  test.concurrent("Gemini 3 nests them in the function response; Gemini 2.5 gets them in a user turn after it", async () => {
    const { fake, dirs } = setup();
    // a 1×1 PNG the read tool returns as an image
    const png = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==", "base64");
    writeFileSync(join(dirs.cwd, "dot.png"), png);
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "gem/gemini-3-pro-preview"] });
    for (const model of ["gemini-3-pro-preview", "gemini-2.5-flash"]) {
      await p.request({ type: "set_model", provider: "gem", modelId: model });
      fake.enqueue({ blocks: [{ type: "toolCall", id: `c-${model}`, name: "read", arguments: { path: "dot.png" } }] }, { blocks: [{ type: "text", text: "a dot" }] });
      await promptToResult(p, "look");
    }
    const g3 = bodyOf(fake.requests[1]!).contents.at(-1)!;
    expect(g3.parts[0]).toMatchObject({ functionResponse: { name: "read", id: "c-gemini-3-pro-preview", parts: [{ inlineData: { mimeType: "image/png" } }] } });
    const g25 = bodyOf(fake.requests[3]!).contents;
    expect(g25.at(-2)!.parts[0]).toEqual({ functionResponse: { name: "read", response: { output: expect.any(String) } } });
    expect(g25.at(-1)).toMatchObject({ role: "user", parts: [{ text: "Images returned by read:" }, { inlineData: { mimeType: "image/png" } }] });
    await p.close();
    await fake.stop();
  });
});
