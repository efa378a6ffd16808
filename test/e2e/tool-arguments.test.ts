import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels } from "../support/pion.ts";

const MODELS = { "anthropic-messages": "fake/fake-model", "openai-completions": "fake-openai/fake-chat", "openai-responses": "fake-responses/fake-resp" };
const CUT_OFF = '{"path": "/etc", "limit": 1';

describe("tool-call arguments that are not valid JSON", () => {
  for (const [api, model] of Object.entries(MODELS)) {
    test.concurrent(`${api}: a call cut off by max_tokens is an error result, the tool never runs on defaults`, async () => {
      await using fake = startFakeProvider();
      const dirs = tempDirs();
      writeFakeModels(dirs.home, fake.url);
      // ls on defaults would list the working directory: this file would show up in the result.
      writeFileSync(join(dirs.cwd, "listed-if-ls-ran.txt"), "x");
      fake.enqueue({ blocks: [{ type: "toolCall", id: "call_cut", name: "ls", arguments: CUT_OFF }], stopReason: "length" });
      fake.enqueue({ blocks: [{ type: "text", text: "I will retry." }] });
      const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", model, "--tools", "ls"] });
      await p.request({ type: "prompt", message: "list /etc" });
      await p.waitFor("agent_settled");

      const start = p.records.find((r) => r.type === "tool_execution_start")!;
      expect(start).toMatchObject({ toolName: "ls", args: {} });
      const end = p.records.find((r) => r.type === "tool_execution_end")!;
      expect(end.isError).toBe(true);
      const text = end.result.content[0].text as string;
      expect(text).toContain('Invalid arguments for tool "ls": the arguments are not valid JSON');
      expect(text).toContain(`They began: ${CUT_OFF}`);
      expect(text).not.toContain("listed-if-ls-ran.txt");

      // The persisted call keeps the reason, and the model is told in the next request.
      const assistant = p.records.find((r) => r.type === "message_end" && r.message.role === "assistant")!.message;
      expect(assistant.content[0]).toMatchObject({ type: "toolCall", name: "ls", arguments: {} });
      expect(assistant.content[0].argumentsError).toContain("not valid JSON");
      expect(fake.requests.length).toBe(2);
      expect(JSON.stringify(fake.requests[1]!.body)).toContain("not valid JSON");
      await p.close();
    });
  }

  test.concurrent("arguments that are JSON but not an object are refused the same way", async () => {
    await using fake = startFakeProvider();
    const dirs = tempDirs();
    writeFakeModels(dirs.home, fake.url);
    fake.enqueue({ blocks: [{ type: "toolCall", id: "toolu_arr", name: "ls", arguments: '["/etc"]' }] });
    fake.enqueue({ blocks: [{ type: "text", text: "ok" }] });
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", "--tools", "ls"] });
    await p.request({ type: "prompt", message: "list" });
    await p.waitFor("agent_settled");
    const end = p.records.find((r) => r.type === "tool_execution_end")!;
    expect(end.isError).toBe(true);
    expect(end.result.content[0].text).toContain("expected a JSON object, got an array");
    await p.close();
  });
});
