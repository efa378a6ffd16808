import { expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const EXT = join(import.meta.dir, "../fixtures/extensions/ai-telemetry.ts");

test("an extension's Models request reports pi.ai.request to the span it passes, and reads the image-model catalog", async () => {
  const fake = startFakeProvider({
    replies: [
      { blocks: [{ type: "text", text: "hello there" }, { type: "toolCall", name: "echo", arguments: { text: "hi" } }], usage: { input: 12, output: 7 } },
      { blocks: [{ type: "text", text: "again" }] },
    ],
  });
  const { home, cwd } = tempDirs();
  writeFakeModels(home, fake.url);
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-model", "--no-session", "-e", EXT] });
  try {
    const note = (from: number) => p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
    let from = p.records.length;
    await p.request({ type: "prompt", message: `/telemetry ${fake.url}` });
    const t = JSON.parse((await note(from)).message) as Rec;
    expect(t.stop).toEqual(["toolUse", "stop"]);
    expect(t.same).toBe(true);
    expect(t.spans).toEqual(["pi.ai.request", "pi.ai.poll"]);
    // Only the request that passed a span is recorded: the second call had no telemetry.
    expect(t.recorded.map((s: Rec) => s.name)).toEqual(["ext.turn", "pi.ai.request"]);
    const request = t.recorded[1];
    expect(request.attributes).toEqual({ provider: "fake", api: "anthropic-messages", model: "fake-model", reasoning: "low", stop: "toolUse", "usage.input": 12, "usage.output": 7, "usage.cache_read": 0, "usage.cache_write": 0, "cost.total": (12 * 3 + 7 * 15) / 1e6, "response.id": "string" });
    expect(request.events).toEqual([
      { name: "pi.ai.first_chunk" },
      { name: "pi.ai.block", attributes: { type: "text", index: 0, chars: 11 } },
      { name: "pi.ai.block", attributes: { type: "tool_call", index: 1, chars: JSON.stringify({ text: "hi" }).length, tool: "echo" } },
    ]);
    expect(request.status).toBeUndefined();
    const base = { provider: "fake", model: "fake-model" };
    expect(t.metrics).toEqual([
      { name: "pi.ai.first_chunk.duration", kind: "histogram", unit: "ms", attributes: base },
      { name: "pi.ai.request.duration", kind: "histogram", unit: "ms", attributes: { ...base, stop: "toolUse" } },
      { name: "pi.ai.tokens", kind: "counter", unit: "token", value: 12, attributes: { ...base, kind: "input" } },
      { name: "pi.ai.tokens", kind: "counter", unit: "token", value: 7, attributes: { ...base, kind: "output" } },
      { name: "pi.ai.tokens", kind: "counter", unit: "token", value: 0, attributes: { ...base, kind: "cache_read" } },
      { name: "pi.ai.tokens", kind: "counter", unit: "token", value: 0, attributes: { ...base, kind: "cache_write" } },
      { name: "pi.ai.cost", kind: "counter", unit: "USD", value: (12 * 3 + 7 * 15) / 1e6, attributes: base },
    ]);
    expect(t.durations).toBe(true);
    expect(JSON.stringify(t)).not.toContain("hello there");

    from = p.records.length;
    await p.request({ type: "prompt", message: "/images" });
    const i = JSON.parse((await note(from)).message) as Rec;
    expect(i.providers).toEqual(["openrouter"]);
    expect(i.count).toBeGreaterThan(0);
    expect(Object.keys(i.first)).toEqual(["type", "id", "name", "api", "provider", "baseUrl", "input", "output", "cost", "inputLimits"]);
    expect(i.first).toMatchObject({ type: "image", api: "openrouter-images", provider: "openrouter", baseUrl: "https://openrouter.ai/api/v1" });
    expect(i.same).toBe(true);
  } finally {
    await p.close();
    await fake.stop();
  }
});
