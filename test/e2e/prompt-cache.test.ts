import { describe, expect, test } from "bun:test";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { blocksOf, priceRequests } from "../../bench/cache-pricing.ts";
import { startFakeProvider, type FakeBlock, type FakeProvider, type FakeRequest } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, writeSettings } from "../support/pion.ts";

type Block = { type: string; text?: string; cache_control?: unknown };
type Body = { system?: Block[]; tools?: Block[]; messages: { role: string; content: string | Block[] }[] };

const EPHEMERAL = '{"type":"ephemeral"}';
const marked = (b: Block | undefined) => JSON.stringify(b?.cache_control) === EPHEMERAL;
const countMarks = (body: unknown) => JSON.stringify(body).split('"cache_control"').length - 1;
const bodyOf = (r: FakeRequest) => r.body as Body;
const lastBlock = (body: Body, message = body.messages.length - 1) => (body.messages[message]!.content as Block[]).at(-1);
const read = (i: number | string): FakeBlock => ({ type: "toolCall", id: `toolu_${i}`, name: "read", arguments: { path: `f${i}.txt` } });

function setup(files: number, settings: Record<string, unknown> = {}, onRequest?: (req: FakeRequest) => void) {
  const fake = startFakeProvider({ onRequest });
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  writeSettings(dirs.home, { retry: { maxRetries: 2, baseDelayMs: 10 }, ...settings });
  for (let i = 0; i < files; i++) writeFileSync(join(dirs.cwd, `f${i}.txt`), `file ${i}\n`.repeat(20));
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model"] });
  return { fake, p };
}

async function prompt(p: Pion, message: string) {
  const from = p.records.length;
  await p.request({ type: "prompt", message });
  await p.waitFor("agent_settled", from);
}

/** Under Anthropic's rules (bench/cache-pricing.ts), request i reads all that request i - 1 sent. */
function expectEachReadsThePrevious(requests: FakeRequest[]) {
  const price = priceRequests(requests.map((r) => blocksOf(r.body)));
  const reads = price.requests.slice(1).map((r) => r.read);
  expect(reads).toEqual(price.requests.slice(0, -1).map((r) => r.uncached));
}

async function done(p: Pion, fake: FakeProvider) {
  expect(fake.failures).toEqual([]);
  await p.close();
  await fake.stop();
}

describe("Anthropic prompt caching", () => {
  test.concurrent("a tool loop: breakpoints on the system prompt, the last tool, the end and the previous request's end; each request reads all the previous one sent", async () => {
    const { fake, p } = setup(3);
    for (let i = 0; i < 3; i++) fake.enqueue({ blocks: [{ type: "text", text: `reading f${i}` }, read(i)] });
    fake.enqueue({ blocks: [{ type: "text", text: "read them all" }] });
    await prompt(p, "read the files one by one");
    expect(fake.requests.length).toBe(4);
    fake.requests.forEach((req, i) => {
      const body = bodyOf(req);
      expect(marked(body.system?.at(-1))).toBe(true);
      expect(body.tools?.map(marked)).toEqual(body.tools!.map((_, j) => j === body.tools!.length - 1));
      expect(body.messages.at(-1)!.role).toBe("user");
      expect(marked(lastBlock(body))).toBe(true);
      if (i === 0) return expect(countMarks(body)).toBe(3);
      // the previous request's last block, still marked: its cache entry is read exactly
      const previous = bodyOf(fake.requests[i - 1]!);
      expect(marked(lastBlock(body, previous.messages.length - 1))).toBe(true);
      expect(countMarks(body)).toBe(4);
    });
    expect(lastBlock(bodyOf(fake.requests[2]!))!.type).toBe("tool_result");
    expectEachReadsThePrevious(fake.requests);
    await done(p, fake);
  });

  test.concurrent("a wide step (12 parallel reads, past the 20-block lookback) still reads all the previous request sent", async () => {
    const { fake, p } = setup(14);
    fake.enqueue(
      { blocks: [{ type: "text", text: "one first" }, read(0)] },
      { blocks: [{ type: "text", text: "now twelve at once" }, ...Array.from({ length: 12 }, (_, i) => read(i + 1))] },
      { blocks: [{ type: "text", text: "and the last" }, read(13)] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    await prompt(p, "read them");
    expect(fake.requests.length).toBe(4);
    const afterWide = bodyOf(fake.requests[2]!);
    expect((afterWide.messages.at(-1)!.content as Block[]).length).toBe(12);
    // the end breakpoint alone looks back 20 blocks and the previous end is 25 back: the second one reads it
    expect(marked(lastBlock(afterWide, bodyOf(fake.requests[1]!).messages.length - 1))).toBe(true);
    expectEachReadsThePrevious(fake.requests);
    await done(p, fake);
  });

  test.concurrent("a retried request carries the same breakpoints and reads what the request before the failure wrote", async () => {
    const { fake, p } = setup(2);
    fake.enqueue(
      { blocks: [{ type: "text", text: "first" }, read(0)] },
      { kind: "http_error", status: 529 },
      { blocks: [{ type: "text", text: "second" }, read(1)] },
      { blocks: [{ type: "text", text: "done" }] },
    );
    await prompt(p, "read two");
    expect(fake.requests.length).toBe(4);
    expect(fake.requests[2]!.body).toEqual(fake.requests[1]!.body);
    // the 529 was answered before the prompt was processed: nothing billed, nothing written
    expectEachReadsThePrevious(fake.requests.filter((_, i) => i !== 1));
    await done(p, fake);
  });

  test.concurrent("compaction: the summary request caches its system prompt only; the compacted conversation gets its breakpoints and reads itself from then on", async () => {
    // a summary request (the only kind without tools) is answered whenever it comes: a split turn makes two
    const summarize = (req: FakeRequest) => void (bodyOf(req).tools?.length ? undefined : fake.enqueue({ blocks: [{ type: "text", text: "## Goal\nSUMMARY" }] }));
    const { fake, p } = setup(4, { compaction: { keepRecentTokens: 30, reserveTokens: 1000 } }, summarize);
    for (const t of ["alpha", "beta"]) {
      fake.enqueue({ blocks: [{ type: "text", text: `looking at ${t}` }, read(t === "alpha" ? 0 : 1)] }, { blocks: [{ type: "text", text: `${t} done `.repeat(10) }] });
      await prompt(p, `${t} `.repeat(10));
    }
    const before = fake.requests.length;
    expect((await p.request({ type: "compact" })).success).toBe(true);
    const summaries = fake.requests.slice(before);
    expect(summaries.length).toBeGreaterThanOrEqual(1);
    for (const req of summaries) {
      const body = bodyOf(req);
      expect(body.tools ?? []).toEqual([]);
      expect(countMarks(body)).toBe(1);
      expect(marked(body.system!.at(-1))).toBe(true);
    }
    const compacted = fake.requests.length;

    fake.enqueue({ blocks: [{ type: "text", text: "gamma" }, read(2)] }, { blocks: [{ type: "text", text: "gamma" }, read(3)] }, { blocks: [{ type: "text", text: "over" }] });
    await prompt(p, "gamma");
    const after = fake.requests.slice(compacted);
    expect(after.length).toBe(3);
    expect(JSON.stringify(bodyOf(after[0]!).messages[0])).toContain("SUMMARY");
    for (const req of after) {
      const body = bodyOf(req);
      expect(marked(lastBlock(body))).toBe(true);
      expect(countMarks(body)).toBeLessThanOrEqual(4);
    }
    // the first compacted request reads the tools and system prompt written before; then each reads all the previous one sent
    const price = priceRequests(fake.requests.map((r) => blocksOf(r.body)));
    const toolsAndSystem = blocksOf(after[0]!.body).filter((b) => /^(fake-model\n)?(tool|system):/.test(b.key));
    expect(price.requests[compacted]!.read).toBe(toolsAndSystem.reduce((a, b) => a + b.tokens, 0));
    expectEachReadsThePrevious(after);
    await done(p, fake);
  });
});

describe("Chat Completions and Responses caching per server", () => {
  test.concurrent("OpenRouter (a model billing cache writes), OpenAI, xAI, an unknown server, and Responses", async () => {
    const fake = startFakeProvider();
    const dirs = tempDirs();
    const cost = (cacheWrite: number) => ({ input: 3, output: 15, cacheRead: 0.3, cacheWrite });
    const provider = (baseUrl: string, id: string, cacheWrite = 0) => ({
      baseUrl,
      api: "openai-completions",
      apiKey: "k",
      models: [{ id, reasoning: false, contextWindow: 200000, maxTokens: 1000, cost: cost(cacheWrite) }],
    });
    // Plain-HTTP base URLs on the real hosts, sent to the fake through HTTP_PROXY: the host picks the caching fields.
    writeFakeModels(dirs.home, fake.url, {
      or: provider("http://openrouter.ai/api/v1", "anthropic/claude-test", 3.75),
      oa: provider("http://api.openai.com/v1", "gpt-test"),
      xai: provider("http://api.x.ai/v1", "grok-test"),
      other: provider(`${fake.url}/v1`, "other-test", 3.75),
    });
    writeFileSync(join(dirs.cwd, "f0.txt"), "zero\n");
    const proxy = { HTTP_PROXY: fake.url, http_proxy: fake.url, NO_PROXY: "", no_proxy: "" };
    const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "or/anthropic/claude-test"], env: proxy });
    const sessionId = (await p.request({ type: "get_state" })).data.sessionId as string;
    const byModel = new Map<string, FakeRequest[]>();
    for (const [prov, model] of [["or", "anthropic/claude-test"], ["oa", "gpt-test"], ["xai", "grok-test"], ["other", "other-test"], ["fake-responses", "fake-resp"]]) {
      expect((await p.request({ type: "set_model", provider: prov, modelId: model })).success).toBe(true);
      const from = fake.requests.length;
      fake.enqueue({ blocks: [{ type: "text", text: "reading" }, read(0)] }, { blocks: [{ type: "text", text: "ok" }] });
      await prompt(p, `go ${prov}`);
      byModel.set(prov!, fake.requests.slice(from));
    }
    type Part = { type: string; text?: string; cache_control?: unknown };
    type ChatBody = { messages: { role: string; content: string | Part[] | null }[]; tools?: { cache_control?: unknown }[]; prompt_cache_key?: string };

    const [orFirst, orSecond] = byModel.get("or")!;
    expect(orFirst!.headers.host).toBe("openrouter.ai");
    expect(orSecond!.headers["x-session-id"]).toBe(sessionId);
    const or = orSecond!.body as ChatBody;
    expect(or.prompt_cache_key).toBeUndefined();
    expect(or.messages[0]).toMatchObject({ role: "system", content: [{ type: "text", cache_control: { type: "ephemeral" } }] });
    expect(or.tools!.map((t) => t.cache_control !== undefined)).toEqual(or.tools!.map((_, i) => i === or.tools!.length - 1));
    // earlier turns' messages come first; this prompt's user message is the previous request's end, the tool result the end
    const tail = or.messages.slice(-3);
    expect(tail.map((m) => m.role)).toEqual(["user", "assistant", "tool"]);
    expect((tail[0]!.content as Part[]).at(-1)).toEqual({ type: "text", text: "go or", cache_control: { type: "ephemeral" } });
    expect((tail[2]!.content as Part[]).at(-1)!.cache_control).toEqual({ type: "ephemeral" });
    expect(countMarks(or)).toBe(4);

    for (const req of byModel.get("oa")!) {
      expect(req.headers.host).toBe("api.openai.com");
      expect((req.body as ChatBody).prompt_cache_key).toBe(sessionId);
      expect(countMarks(req.body)).toBe(0);
      expect(req.headers["x-session-id"]).toBeUndefined();
    }
    for (const req of byModel.get("xai")!) {
      expect(req.headers["x-grok-conv-id"]).toBe(sessionId);
      expect((req.body as ChatBody).prompt_cache_key).toBeUndefined();
      expect(countMarks(req.body)).toBe(0);
    }
    // an unknown OpenAI-compatible server gets nothing new, whatever the catalog says
    for (const req of byModel.get("other")!) {
      expect(countMarks(req.body)).toBe(0);
      expect((req.body as ChatBody).prompt_cache_key).toBeUndefined();
      expect(Object.keys(req.headers).filter((h) => /session|conv-id/.test(h))).toEqual([]);
    }
    for (const req of byModel.get("fake-responses")!) expect((req.body as { prompt_cache_key?: string }).prompt_cache_key).toBe(sessionId);
    expect(fake.failures).toEqual([]);
    await p.close();
    await fake.stop();
  });
});
