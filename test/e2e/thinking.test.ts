import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, type Rec } from "../support/pion.ts";

/**
 * Catalog models (and one models.json model) sent to the fake server: the levels each offers, the
 * thinking_level_changed records when a level is clamped, and the reasoning parameters of the
 * request bodies, for each reasoning kind on each API.
 */
function setup(fake: FakeProvider) {
  const dirs = tempDirs();
  const v1 = `${fake.url}/v1`;
  const providers = {
    anthropic: { baseUrl: fake.url, apiKey: "k" },
    openai: { baseUrl: v1, apiKey: "k" },
    google: { baseUrl: v1, apiKey: "k" },
    zai: { baseUrl: v1, apiKey: "k" },
    fake: {
      baseUrl: fake.url,
      api: "anthropic-messages",
      apiKey: "k",
      models: [{ id: "toggler", reasoning: true, reasoningOptions: [{ type: "toggle" }], maxTokens: 16000 }],
    },
  };
  writeFileSync(join(dirs.home, "models.json"), JSON.stringify({ providers }));
  return dirs;
}

const ok = { blocks: [{ type: "text" as const, text: "ok" }] };

/** Runs one prompt and returns the body of the request it made. */
async function promptBody(p: Pion, fake: FakeProvider): Promise<Rec> {
  const n = fake.requests.length;
  fake.enqueue(ok);
  const from = p.records.length;
  await p.request({ type: "prompt", message: "go" });
  await p.waitFor("agent_settled", from);
  expect(fake.requests.length).toBe(n + 1);
  return fake.requests[n]!.body as Rec;
}

const levels = async (p: Pion) => (await p.request({ type: "get_available_thinking_levels" })).data.levels;

/** The thinking_level_changed records a command produced. */
async function changes(p: Pion, cmd: Rec): Promise<Rec[]> {
  const from = p.records.length;
  const res = await p.request(cmd);
  expect(res.success).toBe(true);
  return p.records.slice(from).filter((r) => r.type === "thinking_level_changed");
}

const pick = (body: Rec, keys: string[]) => Object.fromEntries(keys.filter((k) => k in body).map((k) => [k, body[k]]));
const ANTHROPIC = ["max_tokens", "thinking", "output_config"];
const OPENAI = ["reasoning", "include", "reasoning_effort", "thinking"];

describe("thinking per model", () => {
  test.concurrent("Anthropic: effort, budget, toggle and none models; clamping says so", async () => {
    await using fake = startFakeProvider();
    const p = new Pion({ ...setup(fake), args: ["--mode", "rpc", "--model", "anthropic/claude-opus-4-6", "--thinking", "high"] });
    expect(await levels(p)).toEqual(["off", "low", "medium", "high", "max"]);
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({
      max_tokens: 128000,
      thinking: { type: "adaptive", display: "summarized" },
      output_config: { effort: "high" },
    });
    expect(await changes(p, { type: "set_thinking_level", level: "xhigh" })).toEqual([{ type: "thinking_level_changed", level: "max", requested: "xhigh" }]);
    expect((await p.request({ type: "get_state" })).data.thinkingLevel).toBe("max");
    expect(await changes(p, { type: "set_thinking_level", level: "off" })).toEqual([{ type: "thinking_level_changed", level: "off" }]);
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({ max_tokens: 128000, thinking: { type: "disabled" } });
    expect(await changes(p, { type: "set_thinking_level", level: "minimal" })).toEqual([{ type: "thinking_level_changed", level: "low", requested: "minimal" }]);

    // budget: claude-3-7-sonnet takes budget_tokens (min 1024); low is offered, so nothing changes
    expect(await changes(p, { type: "set_model", provider: "anthropic", modelId: "claude-3-7-sonnet-20250219" })).toEqual([]);
    expect(await levels(p)).toEqual(["off", "minimal", "low", "medium", "high"]);
    await p.request({ type: "set_thinking_level", level: "medium" });
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({ max_tokens: 64000, thinking: { type: "enabled", budget_tokens: 10240 } });

    // toggle: on or off only; "on" is called high and gets a budget below max_tokens
    expect(await changes(p, { type: "set_model", provider: "fake", modelId: "toggler" })).toEqual([
      { type: "thinking_level_changed", level: "high", requested: "medium" },
    ]);
    expect(await levels(p)).toEqual(["off", "high"]);
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({ max_tokens: 16000, thinking: { type: "enabled", budget_tokens: 14976 } });
    expect((await p.request({ type: "cycle_thinking_level" })).data).toEqual({ level: "off" });
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({ max_tokens: 16000, thinking: { type: "disabled" } });
    await p.request({ type: "cycle_thinking_level" });

    // none: no thinking parameter; a request for a level it lacks is answered with the event
    expect(await changes(p, { type: "set_model", provider: "anthropic", modelId: "claude-3-5-sonnet-20241022" })).toEqual([
      { type: "thinking_level_changed", level: "off", requested: "high" },
    ]);
    expect(await levels(p)).toEqual(["off"]);
    expect(pick(await promptBody(p, fake), ANTHROPIC)).toEqual({ max_tokens: 8192 });
    expect(await changes(p, { type: "set_thinking_level", level: "high" })).toEqual([{ type: "thinking_level_changed", level: "off", requested: "high" }]);
    expect((await p.request({ type: "cycle_thinking_level" })).data).toBeNull();
    const entries = (await p.request({ type: "get_entries" })).data.entries.filter((e: Rec) => e.type === "thinking_level_change");
    expect(entries.map((e: Rec) => e.thinkingLevel)).toEqual(["high", "max", "off", "low", "medium", "high", "off", "high", "off"]);
    await p.close();
  });

  test.concurrent("OpenAI: effort models on Responses, budget and toggle models on Chat Completions", async () => {
    await using fake = startFakeProvider();
    const p = new Pion({ ...setup(fake), args: ["--mode", "rpc", "--model", "openai/gpt-5.1"] });
    expect(await levels(p)).toEqual(["off", "low", "medium", "high"]);
    expect(await changes(p, { type: "set_thinking_level", level: "minimal" })).toEqual([{ type: "thinking_level_changed", level: "low", requested: "minimal" }]);
    const include = ["reasoning.encrypted_content"];
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ include, reasoning: { effort: "low", summary: "auto" } });
    await p.request({ type: "set_thinking_level", level: "off" });
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ include, reasoning: { effort: "none" } });

    // gpt-5-pro offers only high
    expect(await changes(p, { type: "set_model", provider: "openai", modelId: "gpt-5-pro" })).toEqual([
      { type: "thinking_level_changed", level: "high", requested: "off" },
    ]);
    expect(await levels(p)).toEqual(["high"]);
    expect((await p.request({ type: "cycle_thinking_level" })).data).toBeNull();
    expect(await changes(p, { type: "set_thinking_level", level: "low" })).toEqual([{ type: "thinking_level_changed", level: "high", requested: "low" }]);
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ include, reasoning: { effort: "high", summary: "auto" } });

    // gpt-5 cannot stop reasoning: minimal is its least
    await p.request({ type: "set_model", provider: "openai", modelId: "gpt-5" });
    expect(await levels(p)).toEqual(["minimal", "low", "medium", "high"]);
    expect(await changes(p, { type: "set_thinking_level", level: "off" })).toEqual([{ type: "thinking_level_changed", level: "minimal", requested: "off" }]);
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ include, reasoning: { effort: "minimal", summary: "auto" } });

    // budget (the Gemini API): thinkingBudget within the catalog's range; off is a budget of 0
    expect(await changes(p, { type: "set_model", provider: "google", modelId: "gemini-2.5-flash" })).toEqual([
      { type: "thinking_level_changed", level: "low", requested: "minimal" },
    ]);
    expect(await levels(p)).toEqual(["off", "low", "medium", "high"]);
    const gemini = async () => (await promptBody(p, fake)).generationConfig.thinkingConfig;
    expect(await gemini()).toEqual({ includeThoughts: true, thinkingBudget: 4096 });
    await p.request({ type: "set_thinking_level", level: "off" });
    expect(await gemini()).toEqual({ thinkingBudget: 0 });

    // toggle (Chat Completions): thinking.type
    expect(await changes(p, { type: "set_model", provider: "zai", modelId: "glm-4.5" })).toEqual([]);
    expect(await levels(p)).toEqual(["off", "high"]);
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ thinking: { type: "disabled" } });
    await p.request({ type: "set_thinking_level", level: "medium" });
    expect((await p.request({ type: "get_state" })).data.thinkingLevel).toBe("high");
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({ thinking: { type: "enabled" } });

    // none: no reasoning parameter
    await p.request({ type: "set_model", provider: "openai", modelId: "gpt-4.1" });
    expect(await levels(p)).toEqual(["off"]);
    expect(pick(await promptBody(p, fake), OPENAI)).toEqual({});
    await p.close();
  });

  test.concurrent("thinking is replayed exactly to the model that wrote it and dropped for another API", async () => {
    await using fake = startFakeProvider();
    const dirs = setup(fake);
    writeFileSync(join(dirs.cwd, "a.txt"), "alpha\n");
    const signature = "EqQBCkgIAxABGAIiQ+sig/==";
    fake.enqueue(
      {
        blocks: [
          { type: "thinking", thinking: ["I should ", "read a.txt.\n"], signature },
          { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
          { type: "toolCall", id: "toolu_a", name: "read", arguments: { path: "a.txt" } },
        ],
      },
      { blocks: [{ type: "text", text: "it says alpha" }] },
    );
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "anthropic/claude-opus-4-6"] });
    await p.request({ type: "prompt", message: "read a.txt" });
    await p.waitFor("agent_settled");
    type Msg = { role: string; content: Rec[] | string };
    const replayed = (fake.requests[1]!.body as { messages: Msg[] }).messages[1]!;
    expect(replayed).toEqual({
      role: "assistant",
      content: [
        { type: "thinking", thinking: "I should read a.txt.\n", signature },
        { type: "redacted_thinking", data: "EmwKAhgBEgy3va3pzix" },
        { type: "tool_use", id: "toolu_a", name: "read", input: { path: "a.txt" } },
      ],
    });

    await p.request({ type: "set_model", provider: "openai", modelId: "gpt-5.1" });
    fake.enqueue({ blocks: [{ type: "thinking", thinking: "gpt plan" }, { type: "text", text: "still alpha" }] });
    let from = p.records.length;
    await p.request({ type: "prompt", message: "and now?" });
    await p.waitFor("agent_settled", from);
    const input = (fake.requests[2]!.body as { input: Rec[] }).input;
    expect(input.filter((i) => i.type === "reasoning")).toEqual([]);
    expect(JSON.stringify(input)).not.toContain(signature);
    expect(JSON.stringify(input)).not.toContain("Reasoning redacted");

    // back on the first model: its own blocks are still signed; the other model's thinking is text
    await p.request({ type: "set_model", provider: "anthropic", modelId: "claude-opus-4-6" });
    fake.enqueue(ok);
    from = p.records.length;
    await p.request({ type: "prompt", message: "bye" });
    await p.waitFor("agent_settled", from);
    const messages = (fake.requests[3]!.body as { messages: Msg[] }).messages;
    expect(messages[1]).toEqual(replayed);
    expect(messages.find((m) => m.role === "assistant" && JSON.stringify(m.content).includes("still alpha"))).toEqual({
      role: "assistant",
      content: [
        { type: "text", text: "gpt plan" },
        { type: "text", text: "still alpha" },
      ],
    });
    await p.close();
  });
});
