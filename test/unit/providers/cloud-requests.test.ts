import { describe, expect, test } from "bun:test";
import { bedrockInput } from "../../../src/providers/bedrock-request.ts";
import { googleRequest } from "../../../src/providers/google-request.ts";
import type { AssistantMessage, Message } from "../../../src/providers/types.ts";
import { request, testModel } from "./helpers.ts";

const signal = new AbortController().signal;
const sig = Buffer.from("signature-bytes!").toString("base64");

function assistant(model: string, api: AssistantMessage["api"], provider: string, content: AssistantMessage["content"]): AssistantMessage {
  return { role: "assistant", api, provider, model, content, usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: 2 };
}

describe("Gemini request", () => {
  const gemini = testModel("https://g/v1beta", "google-generative-ai", { id: "gemini-3-pro-preview", provider: "google", reasoning: true });

  test("an empty text part that carries a signature is kept; an empty one without is dropped; a bad signature is not sent", () => {
    const own = assistant("gemini-3-pro-preview", "google-generative-ai", "google", [
      { type: "text", text: "", textSignature: sig },
      { type: "text", text: "  " },
      { type: "toolCall", id: "c1", name: "ls", arguments: {}, thoughtSignature: "not base64!" },
    ]);
    const messages: Message[] = [{ role: "user", content: "hi", timestamp: 1 }, own];
    const { contents } = googleRequest(request(gemini, { messages }), signal);
    expect(contents[1]).toEqual({ role: "model", parts: [{ text: "", thoughtSignature: sig }, { functionCall: { name: "ls", args: {}, id: "c1" } }] });
  });

  test("another model's reply: no signatures, thinking as text, redacted thinking dropped; Gemini 2.5 gets no call ids", () => {
    const other = assistant("claude-x", "anthropic-messages", "anthropic", [
      { type: "thinking", thinking: "plan", thinkingSignature: sig },
      { type: "thinking", thinking: "", thinkingSignature: "opaque", redacted: true },
      { type: "toolCall", id: "toolu_1", name: "ls", arguments: { a: 1 } },
    ]);
    const result: Message = { role: "toolResult", toolCallId: "toolu_1", toolName: "ls", content: [{ type: "text", text: "x" }], isError: true, timestamp: 3 };
    const flash = { ...gemini, id: "gemini-2.5-flash" };
    const { contents } = googleRequest(request(flash, { messages: [{ role: "user", content: "hi", timestamp: 1 }, other, result] }), signal);
    expect(contents[1]).toEqual({ role: "model", parts: [{ text: "plan" }, { functionCall: { name: "ls", args: { a: 1 } } }] });
    expect(contents[2]).toEqual({ role: "user", parts: [{ functionResponse: { name: "ls", response: { error: "x" } } }] });
  });

  test("a model without images gets a note instead of the image", () => {
    const blind = { ...gemini, input: ["text"] as Array<"text" | "image"> };
    const { contents } = googleRequest(request(blind, { messages: [{ role: "user", content: [{ type: "image", data: "AAAA", mimeType: "image/png" }], timestamp: 1 }] }), signal);
    expect(contents[0]!.parts![0]!.text).toContain("image omitted");
  });
});

describe("Bedrock request", () => {
  const claude = testModel("https://bedrock-runtime.us-east-1.amazonaws.com", "bedrock-converse-stream", { id: "anthropic.claude-x-v1:0", provider: "amazon-bedrock", reasoning: true });

  test("redacted reasoning goes back as its bytes to its own model; tool results of a turn share one user message", () => {
    const own = assistant(claude.id, "bedrock-converse-stream", "amazon-bedrock", [
      { type: "thinking", thinking: "", thinkingSignature: Buffer.from("secret").toString("base64"), redacted: true },
      { type: "toolCall", id: "t1", name: "ls", arguments: {} },
      { type: "toolCall", id: "t2", name: "ls", arguments: {} },
    ]);
    const results: Message[] = ["t1", "t2"].map((id) => ({ role: "toolResult", toolCallId: id, toolName: "ls", content: [], isError: false, timestamp: 3 }));
    const input = bedrockInput(request(claude, { messages: [{ role: "user", content: "hi", timestamp: 1 }, own, ...results], cacheConversation: false }));
    const [, a, u] = input.messages!;
    expect(a!.content![0]!.reasoningContent!.redactedContent).toEqual(new Uint8Array(Buffer.from("secret")));
    expect(u!.content!.map((b) => b.toolResult?.toolUseId)).toEqual(["t1", "t2"]);
    expect(u!.content![0]!.toolResult!.content).toEqual([{ text: "(empty)" }]);
    // a request no later one extends (a summary) caches only the system prompt
    expect(JSON.stringify(input.messages)).not.toContain("cachePoint");
    expect(input.system!.at(-1)).toEqual({ cachePoint: { type: "default" } });
  });

  test("thinking off sends no thinking field; a level sends Anthropic's budget with max tokens above it", () => {
    const model = { ...claude, maxTokens: 8000, reasoningOptions: [{ type: "budget_tokens" as const, min: 1024, max: 64000 }] };
    expect(bedrockInput(request(model, { thinkingLevel: "off" })).additionalModelRequestFields).toBeUndefined();
    const on = bedrockInput(request(model, { thinkingLevel: "high" }));
    expect(on.additionalModelRequestFields).toEqual({ thinking: { type: "enabled", budget_tokens: 6976 } });
    expect(on.inferenceConfig!.maxTokens).toBe(8000);
  });
});
