import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { streamModel } from "../../../src/extensions/model-calls.ts";

const REFERENCE = process.env.PION_REFERENCE_PKG;
const refTest = REFERENCE ? test : test.skip;
type Fn = (...args: any[]) => any;
type Mod = Record<string, any>;

const pion = referenceModules()["pi-ai"] as Mod;
const reference = async (): Promise<Mod> => (await import(join(REFERENCE!, "../pi-ai/dist/index.js"))) as Mod;

/** Both functions on each input (deep copies, since some mutate), results or thrown messages equal. */
async function same(name: string, inputs: unknown[][]): Promise<void> {
  const ref = await reference();
  const run = (f: Fn, args: unknown[]) => {
    try {
      return { value: f(...structuredClone(args)) };
    } catch (err) {
      return { threw: err instanceof Error ? err.message : String(err) };
    }
  };
  for (const args of inputs) expect({ name, args, ...run(pion[name] as Fn, args) }).toEqual({ name, args, ...run(ref[name] as Fn, args) });
}

const usage = (u: Partial<Record<"input" | "output" | "cacheRead" | "cacheWrite" | "cacheWrite1h", number>> = {}) => ({
  input: 0,
  output: 0,
  cacheRead: 0,
  cacheWrite: 0,
  totalTokens: 0,
  cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  ...u,
});
const failed = (errorMessage: string, provider = "anthropic") => ({ role: "assistant", content: [], provider, stopReason: "error", errorMessage, usage: usage(), timestamp: 1 });

const ARGUMENTS = [
  "",
  "  ",
  '{"a":1}',
  '{"path":"C:\\dir\\file"}',
  '{"text":"line one\nline two\ttab"}',
  '{"u":"\\u00e9 \\uZZ"}',
  '{"end":"\\',
  "[1,2]",
  "null",
  '"str"',
  '{"a":',
  "{bad json}",
  '{"a":1}}',
  '{"a":"\u0001"}',
];

describe("pi-ai utilities, differential against the reference", () => {
  refTest("JSON repair and tool-call arguments", async () => {
    await same("repairJson", ARGUMENTS.map((a) => [a]));
    await same("parseJsonWithRepair", ARGUMENTS.map((a) => [a]));
    await same("parseToolCallArguments", [...ARGUMENTS.map((a) => [a]), [undefined]]);
  });

  refTest("parseStreamingJson: every prefix of streamed documents, and malformed text", async () => {
    const documents = [
      '{"path": "src/a.ts", "edits": [{"oldText": "a\\nb", "newText": "\\u00e9 \\"q\\""}], "n": -12.5e+3, "ok": true, "none": null, "f": false}',
      '{"a":[ ],"b":{ },"c":[1, 2 ,3],"d":"x y  "}',
      '{"command": "ls -la\\tx", "timeout": 1e3, "list": [true, false, null, "s"]}',
      '[1, "two", {"three": [3]}]',
      '{"e": 12.5, "k": 0}',
      '  {"spaced" :  "value" }  ',
    ];
    const prefixes = documents.flatMap((d) => Array.from({ length: d.length + 1 }, (_, n) => [d.slice(0, n)]));
    const malformed = ["{a:1}", '{"a" 1}', '{"a": 1 "b": 2}', '{"a": tru', '{"a": nul', '{"a": -', '{"a": -Inf', '{"a": NaN', '{"x": 12.', "12.", "-", "1e", '"just a string', '{"s": "raw\nline', '{"p": "C:\\dir', '{"u": "\\u00', "[1.5e, \"e\"]", '{"a": [1 2]}', "}", "nul", '{"a": {"b": {"c": "deep', '{"a":1}}extra', undefined, "", "   "];
    await same("parseStreamingJson", [...prefixes, ...malformed.map((m) => [m])]);
  });

  refTest("StreamingJsonParser: the same changes and snapshots for any split of the text", async () => {
    const ref = await reference();
    const deep = `${"[".repeat(40)}{"k": "v", "n": 1}${"]".repeat(40)}`;
    const wide = `{"items": [${Array.from({ length: 700 }, (_, i) => i).join(",")}], "tail": "end"}`;
    const documents = [
      '{"path": "src/a.ts", "edits": [{"oldText": "a\\nb", "newText": "\\u00e9\\u0041 \\"q\\" \\/"}], "n": -12.5e+3, "ok": true, "none": null, "f": false}',
      '{"a" 1, "b": 2 "c": 3, "d": [1 2 ,, 3], "e": tru, "x": nul}',
      '{"bad": "C:\\dir\\u12x and \\q", "raw": "line\nbreak", "u": "\\uD83D\\uDE00"}',
      '{"__proto__": {"polluted": 1}, "n": 1e, "m": -, "p": 0.5E-2, "w": Infinity, "z": [NaN, 007]}',
      '] } {"after": "stray closers"} trailing {"ignored": 1}',
      '"a root string \\" with escapes \\n"',
      "12345.678e-9 more",
      '[[], {}, [[1], {"a": []}], "s"]',
      deep,
      wide,
      '{"k": "v"  ,  "l" :[ true , false ]  }',
    ];
    let seed = 7;
    const random = () => ((seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648);
    const splits = (text: string): string[][] => {
      const chunked: string[] = [];
      for (let i = 0; i < text.length; ) {
        const n = 1 + Math.floor(random() * 7);
        chunked.push(text.slice(i, i + n));
        i += n;
      }
      return [[text], [...text], chunked];
    };
    const run = (Parser: any, pieces: string[]) => {
      const parser = new Parser();
      let previous: unknown;
      return pieces.map((piece) => {
        const changes = structuredClone(parser.append(piece));
        const snap = parser.snapshot();
        const same = snap === previous;
        previous = snap;
        return { changes, snap: structuredClone(snap), same };
      });
    };
    for (const doc of documents) {
      for (const pieces of splits(doc)) expect(run(pion.StreamingJsonParser, pieces)).toEqual(run(ref.StreamingJsonParser, pieces));
    }
  });

  refTest("context overflow and length stops", async () => {
    const messages = [
      "prompt is too long: 213462 tokens > 200000 maximum",
      '413 {"error":{"type":"request_too_large","message":"Request exceeds the maximum size"}}',
      "Your input exceeds the context window of this model",
      "Requested token count exceeds the model's maximum context length of 131072 tokens",
      "ThrottlingException: Too many tokens, please wait before trying again.",
      "Throttling error: Too many tokens",
      "rate limit: too many tokens",
      "400 status code (no body)",
      "github-copilot API error (413): failed",
      "413",
      "the body mentions 413 somewhere",
      "Overloaded",
      "the request exceeds the available context size, try increasing it",
      "prompt too long; exceeded max context length by 20 tokens",
    ];
    const inputs: unknown[][] = messages.flatMap((m) => [[failed(m)], [failed(m, "cerebras")]]);
    inputs.push([{ ...failed(""), stopReason: "stop", usage: usage({ input: 900, cacheRead: 200 }) }, 1000]);
    inputs.push([{ ...failed(""), stopReason: "stop", usage: usage({ input: 900, cacheRead: 100 }) }, 1000]);
    inputs.push([{ ...failed(""), stopReason: "stop", usage: usage({ input: 2000 }) }]);
    inputs.push([{ ...failed(""), stopReason: "length", usage: usage({ input: 990 }) }, 1000]);
    inputs.push([{ ...failed(""), stopReason: "length", usage: usage({ input: 989 }) }, 1000]);
    inputs.push([{ ...failed(""), stopReason: "length", usage: usage({ input: 995, output: 1 }) }, 1000]);
    await same("isContextOverflow", inputs);
    const ref = await reference();
    expect((pion.getOverflowPatterns as Fn)().map(String)).toEqual(ref.getOverflowPatterns().map(String));
    await same("isRecoverableLength", [
      [{ stopReason: "length", usage: usage({ output: 10 }) }, 100],
      [{ stopReason: "length", usage: usage({ output: 100 }) }, 100],
      [{ stopReason: "length", usage: usage({ output: 10 }) }, 0],
      [{ stopReason: "stop", usage: usage({ output: 10 }) }, 100],
    ]);
  });

  refTest("retryable errors and the backoff", async () => {
    const texts = ["529 overloaded_error", "429 Too Many Requests", "insufficient_quota: rate limit", "fetch failed", "socket hang up", "400 invalid request", "ECONNRESET", "xECONNRESETx", '{"code":"1308"} rate limit', "Monthly usage limit reached", "error 5023", "503", "Service temporarily unavailable", ""];
    await same("isRetryableAssistantError", [...texts.map((t) => [failed(t)]), [{ ...failed("overloaded"), stopReason: "aborted" }]]);
    await same("retryDelayMs", [
      [{ baseDelayMs: 2000 }, 0],
      [{ baseDelayMs: 2000 }, 1],
      [{ baseDelayMs: 2000 }, 3],
      [{ baseDelayMs: 2000 }, 10],
      [{ baseDelayMs: 2000, maxAgentDelayMs: 5000 }, 3],
      [{ baseDelayMs: 2000, maxAgentDelayMs: Number.MAX_VALUE }, 2000],
    ]);
  });

  refTest("retryAssistantCall: the same calls, callbacks and outcome", async () => {
    const ref = await reference();
    const scenario = async (retry: Fn, replies: string[], policy: unknown, abortAfterSchedule = false) => {
      const log: unknown[] = [];
      const queue = [...replies];
      const controller = new AbortController();
      const produce = async () => {
        const next = queue.shift()!;
        log.push(["produce", next]);
        return next === "ok" ? { ...failed(""), stopReason: "stop", errorMessage: undefined } : next === "aborted" ? { ...failed("x"), stopReason: "aborted" } : failed(next);
      };
      const result = await retry(produce, policy, controller.signal, {
        onRetryScheduled: (...a: unknown[]) => {
          log.push(["scheduled", ...a]);
          if (abortAfterSchedule) controller.abort();
        },
        onRetryAttemptStart: () => log.push(["start"]),
        onRetryFinished: (...a: unknown[]) => log.push(["finished", ...a]),
      });
      return { result, log };
    };
    const cases: [string[], unknown, boolean?][] = [
      [["overloaded", "503", "ok"], { enabled: true, maxRetries: 3, baseDelayMs: 1 }],
      [["overloaded", "overloaded"], { enabled: true, maxRetries: 1, baseDelayMs: 1 }],
      [["400 bad request"], { enabled: true, maxRetries: 3, baseDelayMs: 1 }],
      [["overloaded", "aborted"], { enabled: true, maxRetries: 3, baseDelayMs: 1 }],
      [["overloaded"], { enabled: false, maxRetries: 3, baseDelayMs: 1 }],
      [["overloaded"], undefined],
      [["overloaded", "ok"], { enabled: true, maxRetries: 3, baseDelayMs: 50 }, true],
    ];
    for (const [replies, policy, abort] of cases) {
      expect(await scenario(pion.retryAssistantCall as Fn, replies, policy, abort)).toEqual(await scenario(ref.retryAssistantCall, replies, policy, abort));
    }
  });

  refTest("diagnostics", async () => {
    const coded = Object.assign(new Error("boom"), { code: "E_X" });
    const unnamed = Object.assign(new Error(""), { name: "" });
    const thrown = [[new Error("boom")], [new TypeError("")], ["text"], [42], [null], [undefined], [{ a: 1 }], [coded], [unnamed]];
    await same("formatThrownValue", thrown);
    const ref = await reference();
    for (const [value] of thrown) {
      expect((pion.extractDiagnosticError as Fn)(value)).toEqual(ref.extractDiagnosticError(value));
      const ours = (pion.createAssistantMessageDiagnostic as Fn)("t", value, { n: 1 });
      const theirs = ref.createAssistantMessageDiagnostic("t", value, { n: 1 });
      expect({ ...ours, timestamp: 0 }).toEqual({ ...theirs, timestamp: 0 });
    }
    const a: { diagnostics?: unknown[] } = {};
    const b: { diagnostics?: unknown[] } = {};
    const d = { type: "x", timestamp: 1 };
    (pion.appendAssistantMessageDiagnostic as Fn)(a, d);
    (pion.appendAssistantMessageDiagnostic as Fn)(a, d);
    ref.appendAssistantMessageDiagnostic(b, d);
    ref.appendAssistantMessageDiagnostic(b, d);
    expect(a).toEqual(b);
  });

  refTest("calculateCost, model identity and types", async () => {
    const base = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 };
    const tiered = { cost: { ...base, tiers: [{ inputTokensAbove: 200_000, input: 6, output: 22.5, cacheRead: 0.6, cacheWrite: 7.5 }, { inputTokensAbove: 100_000, input: 4, output: 20, cacheRead: 0.4, cacheWrite: 5 }] } };
    await same("calculateCost", [
      [{ cost: base }, usage({ input: 1000, output: 500, cacheRead: 2000, cacheWrite: 300 })],
      [{ cost: base }, usage({ input: 1000, cacheWrite: 300, cacheWrite1h: 100 })],
      [tiered, usage({ input: 150_000, output: 10 })],
      [tiered, usage({ input: 100_000, cacheRead: 150_000, output: 10 })],
      [tiered, usage({ input: 100_000 })],
      [{ cost: base }, { ...usage({ input: 10 }), cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 99, totalFromProvider: true } }],
    ]);
    const models = [{ id: "a", provider: "p", api: "anthropic-messages" }, { id: "a", provider: "p", type: "chat", api: "openai-completions" }, { id: "a", provider: "q" }, { id: "a", provider: "p", type: "image", api: "anthropic-messages" }];
    await same("modelsAreEqual", [...models.flatMap((a) => models.map((b) => [a, b])), [null, models[0]], [models[0], undefined]]);
    await same("getModelType", models.map((m) => [m]));
    await same("isModelType", models.flatMap((m) => [[m, "chat"], [m, "image"]]));
    await same("hasApi", models.flatMap((m) => [[m, "anthropic-messages"], [m, "openai-completions"]]));
  });

  refTest("cache warming", async () => {
    await same("getCacheWarmingDelayMs", [[0], [10_000], [10_001], [60_000], [300_000], [3_600_000], [12_345.6]]);
    const anthropic = { api: "anthropic-messages", promptCache: { short: 300, long: 3600 }, cost: { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75 } };
    const adaptive = { ...anthropic, compat: { forceAdaptiveThinking: true } };
    const noWrites = { api: "openai-responses", cost: { input: 2, output: 8, cacheRead: 0.5, cacheWrite: 0 } };
    const free = { api: "openai-completions", cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 } };
    const options = [undefined, {}, { cacheRetention: "long" }, { cacheRetention: "none" }, { env: { PI_CACHE_RETENTION: "long" } }, { reasoning: "high" }];
    await same("getPromptCacheTtlMs", [anthropic, noWrites, { promptCache: { short: 300 } }].flatMap((m) => options.map((o) => [m, o])));
    await same("isCacheWarmingReplayable", [anthropic, adaptive, noWrites].flatMap((m) => options.map((o) => [m, o])));
    await same("evaluateCacheWarming", [anthropic, noWrites, free].flatMap((m) => [0, 1000, 50_000, 800_000].flatMap((n) => [[m, n, "streaming"], [m, n, "idle"]])));
    const ref = await reference();
    const signal = new AbortController().signal;
    const opts = { maxTokens: 9000, reasoning: "high", maxRetries: 3, sessionId: "s" };
    expect((pion.getCacheWarmingRequestOptions as Fn)(opts, signal)).toEqual(ref.getCacheWarmingRequestOptions(opts, signal));
  });

  refTest("system-message text and transcripts", async () => {
    const tool = (name: string, description = `the ${name} tool`) => ({ name, description, parameters: { type: "object", properties: { x: { type: "string" } } } });
    const sys = (extra: Record<string, unknown>, timestamp = 5) => ({ role: "system", content: "", timestamp, ...extra });
    const user = { role: "user", content: "hi", timestamp: 6 };
    const transcripts: unknown[][] = [
      [],
      [user],
      [sys({ content: "base", sections: { a: "A", b: "B" }, toolsAdded: [tool("read"), tool("bash")] }), user],
      [sys({ content: "base", toolsAdded: [tool("read")] }), user, sys({ content: [{ type: "text", text: "more" }], sections: { a: null, c: "C" }, toolsAdded: [tool("grep")] }, 9)],
      [sys({ content: "base", toolsAdded: [tool("read")] }), user, sys({ toolsRemoved: [{ name: "read" }] }), sys({ toolsAdded: [tool("read")] })],
      [sys({ content: "base", toolsAdded: [tool("read")] }), sys({ toolsAdded: [tool("read", "changed")] }), user, sys({ toolsAdded: [tool("ls")] })],
      [sys({ content: "base", toolsAdded: [tool("read")] }), sys({ toolsAdded: [tool("read")] })],
      [user, sys({ toolsAdded: [tool("ls")] }, 3)],
      [user, { role: "custom", content: "x" }, sys({ content: "late" }, 0)],
    ];
    for (const fn of ["getInitialSystemMessage", "withoutInitialSystemMessage", "getCurrentTools", "getCurrentSystemMessage", "getCurrentSystemPrompt", "getDeclaredTools", "hasToolRedefinitions", "hasNonAdditiveToolChanges"]) {
      await same(fn, transcripts.map((t) => [t]));
    }
    for (const support of ["none", "additions", "changes"]) await same("resolveTranscriptTools", transcripts.map((t) => [t, support]));
    await same("collapseSystemMessages", transcripts.map((t) => [{ messages: t }]));
    await same("resolveTranscript", transcripts.flatMap((t) => [[{ messages: t }, true], [{ messages: t }, false], [{ messages: t }, undefined]]));
    await same("createInitialSystemMessage", [[undefined, undefined], ["", []], ["p", undefined], [undefined, [tool("a")]], ["p", [tool("a")]]]);
    await same("normalizeContext", [[{ messages: [user] }], [{ systemPrompt: "p", messages: [user] }], [{ systemPrompt: "", tools: [tool("a")], messages: [] }]]);
    const blocks = [{ type: "text", text: "a" }, { type: "image", data: "x", mimeType: "image/png" }, { type: "text", text: "b" }, { type: "thinking", thinking: "t" }];
    await same("contentText", [["plain"], [blocks], [blocks, " | "], [[]]]);
    const systems = [sys({ content: "base", sections: { a: "A", gone: null, e: "" } }), sys({ content: [{ type: "text", text: "x" }, { type: "text", text: "y" }] }), sys({ sections: { a: "new", b: null } }), sys({})];
    await same("getSystemMessageText", systems.map((s) => [s]));
    await same("renderSystemMessageUpdate", systems.map((s) => [s]));
  });

  refTest("tool declarations and tool-state changes", async () => {
    const ref = await reference();
    const { Type } = pion;
    const typed = { name: "t", description: "d", parameters: Type.Object({ n: Type.Number() }), execute: () => 1, label: "T" };
    const plain = { name: "t", description: "d", parameters: { type: "object", properties: { n: { type: "number" } }, required: ["n"] } };
    const sampled = { ...plain, constrainedSampling: false, extra: undefined };
    await same("toToolDeclaration", [[plain], [sampled]]);
    expect((pion.toToolDeclaration as Fn)(typed)).toEqual(ref.toToolDeclaration(typed));
    expect((pion.declarationsEqual as Fn)(typed, plain)).toBe(ref.declarationsEqual(typed, plain));
    await same("declarationsEqual", [[plain, plain], [plain, sampled], [plain, { ...plain, description: "e" }]]);
    const other = { name: "u", description: "d", parameters: {} };
    await same("getToolStateChanges", [[[plain], [plain]], [[plain], [{ ...plain, description: "e" }, other]], [[plain, other], []], [[], [other]]]);
  });

  refTest("the two streams behave alike: delivery, completion, end and timing", async () => {
    const ref = await reference();
    const later = Date.now() + 60_000;
    const script = async (make: () => any) => {
      const s = make();
      const seen: unknown[] = [];
      const consumer = (async () => {
        for await (const e of s) seen.push(e);
      })();
      s.push({ type: "start" });
      await Promise.resolve();
      s.push({ type: "text_delta", delta: "a" });
      const message = { role: "assistant", content: [], stopReason: "stop", timestamp: later };
      s.push({ type: "done", reason: "stop", message });
      s.push({ type: "text_delta", delta: "late" });
      await consumer;
      const result = await s.result();
      return { seen: seen.map((e: any) => e.type), result: { ...result, durationMs: typeof result.durationMs } };
    };
    expect(await script(() => (pion.createAssistantMessageEventStream as Fn)())).toEqual(await script(() => ref.createAssistantMessageEventStream()));
    const generic = async (S: any) => {
      const s = new S((e: number) => e < 0, (e: number) => e * 10);
      const a: number[] = [];
      const b: number[] = [];
      const ca = (async () => {
        for await (const e of s) a.push(e);
      })();
      const cb = (async () => {
        for await (const e of s) b.push(e);
      })();
      await Promise.resolve();
      for (const e of [1, 2, 3, -4, 5]) s.push(e);
      await Promise.all([ca, cb]);
      const queued = new S(() => false, (e: number) => e);
      queued.push(7);
      queued.push(8);
      queued.end(99);
      const drained: number[] = [];
      for await (const e of queued) drained.push(e);
      return { all: [...a, ...b].sort(), result: await s.result(), drained, ended: await queued.result() };
    };
    expect(await generic(pion.EventStream)).toEqual(await generic(ref.EventStream));
  });
});

describe("pi-ai utilities (pion alone)", () => {
  test("an EventStream is an async-iterable push stream whose result settles on the completing event", async () => {
    const { EventStream } = pion as { EventStream: new (c: (e: string) => boolean, r: (e: string) => number) => any };
    const s = new EventStream((e) => e === "end", (e) => e.length);
    const seen: string[] = [];
    const reading = (async () => {
      for await (const e of s) seen.push(e);
    })();
    s.push("a");
    s.push("end");
    s.push("ignored");
    await reading;
    expect(seen).toEqual(["a", "end"]);
    expect(await s.result()).toBe(3);
  });

  test("end(message) settles the assistant stream and times a message made after it", async () => {
    const s = (pion.createAssistantMessageEventStream as Fn)();
    expect(s).toBeInstanceOf(pion.AssistantMessageEventStream as Fn);
    const old = { role: "assistant", timestamp: 0 };
    s.end(old);
    expect(await s.result()).toBe(old);
    expect("durationMs" in old).toBe(false);
    const t = (pion.createAssistantMessageEventStream as Fn)();
    const fresh = { role: "assistant", timestamp: Date.now() + 1 };
    t.push({ type: "error", reason: "error", error: fresh });
    expect((await t.result()).durationMs).toBeGreaterThanOrEqual(0);
  });

  test("pi-ai's stream() hands out an AssistantMessageEventStream ending in an error event when the call fails", async () => {
    const model = { id: "m", name: "m", api: "openai-completions", provider: "nowhere", baseUrl: "http://127.0.0.1:9", reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 1000, maxTokens: 100 } as const;
    const s = streamModel(model as never, { messages: [{ role: "user", content: "hi", timestamp: 1 }] }, { apiKey: "k" });
    expect(s).toBeInstanceOf(pion.AssistantMessageEventStream as Fn);
    const types: string[] = [];
    for await (const e of s) types.push(e.type);
    expect(types[0]).toBe("start");
    expect(types.at(-1)).toBe("error");
    expect((await s.result()).stopReason).toBe("error");
  });

  test("parseToolCallArguments mends a raw newline and reports a non-object with the text", () => {
    expect((pion.parseToolCallArguments as Fn)('{"a":"x\ny"}')).toEqual({ arguments: { a: "x\ny" } });
    expect((pion.parseToolCallArguments as Fn)("[1]")).toEqual({ arguments: {}, argumentsError: "Tool arguments must be a JSON object\n\nReceived arguments:\n[1]" });
  });

  test("parseStreamingJson shows a cut-off document's value so far", () => {
    const parse = pion.parseStreamingJson as Fn;
    expect(parse('{"path": "src/a', )).toEqual({ path: "src/a" });
    expect(parse('{"a": [1, {"b": tr')).toEqual({ a: [1, { b: true }] });
    expect(parse('{"a": 1, "b":')).toEqual({ a: 1 });
    expect(parse('{"a": "x\\u00')).toEqual({ a: "x" });
    expect(parse("not json")).toEqual({});
    expect(parse(undefined)).toEqual({});
  });

  test("StreamingJsonParser reports what each piece changed and keeps earlier snapshots unchanged", () => {
    const parser = new (pion.StreamingJsonParser as new () => { append(t: string): unknown[]; snapshot(): unknown })();
    expect(parser.append('{"cmd": "ls')).toEqual([{ kind: "set", path: [], value: {} }, { kind: "set", path: ["cmd"], value: "ls" }]);
    const first = parser.snapshot();
    expect(first).toEqual({ cmd: "ls" });
    expect(parser.append(' -la", "n": 4')).toEqual([{ kind: "append", path: ["cmd"], text: " -la" }]);
    expect(parser.snapshot()).toEqual({ cmd: "ls -la", n: 4 });
    expect(parser.append("2}")).toEqual([{ kind: "set", path: ["n"], value: 42 }]);
    expect(parser.snapshot()).toEqual({ cmd: "ls -la", n: 42 });
    expect(first).toEqual({ cmd: "ls" });
  });

  test("overflow, retry and cost classify as documented", () => {
    expect((pion.isContextOverflow as Fn)(failed("prompt is too long: 2 tokens > 1 maximum"))).toBe(true);
    expect((pion.isContextOverflow as Fn)(failed("Throttling error: Too many tokens"))).toBe(false);
    expect((pion.isRetryableAssistantError as Fn)(failed("529 overloaded"))).toBe(true);
    expect((pion.isRetryableAssistantError as Fn)(failed("insufficient_quota"))).toBe(false);
    expect((pion.retryDelayMs as Fn)({ baseDelayMs: 1000 }, 10)).toBe(60_000);
    const cost = (pion.calculateCost as Fn)({ cost: { input: 3, output: 15, cacheRead: 0, cacheWrite: 0 } }, usage({ input: 1_000_000, output: 1_000_000 }));
    expect(cost).toEqual({ input: 3, output: 15, cacheRead: 0, cacheWrite: 0, total: 18, totalFromProvider: false });
  });

  test("session cleanups run in turn, each despite another's failure, and can be unregistered", () => {
    const calls: unknown[] = [];
    const off1 = (pion.registerSessionResourceCleanup as Fn)((id: string) => calls.push(["one", id]));
    const off2 = (pion.registerSessionResourceCleanup as Fn)(() => {
      throw new Error("nope");
    });
    expect(() => (pion.cleanupSessionResources as Fn)("s1")).toThrow("Failed to cleanup session resources");
    off2();
    (pion.cleanupSessionResources as Fn)("s2");
    off1();
    (pion.cleanupSessionResources as Fn)("s3");
    expect(calls).toEqual([["one", "s1"], ["one", "s2"]]);
  });

  test("transcript replay: later system messages patch sections and tools", () => {
    const messages = [
      { role: "system", content: "base", sections: { a: "A" }, toolsAdded: [{ name: "read", description: "", parameters: {} }], timestamp: 1 },
      { role: "system", content: "", sections: { a: null, b: "B" }, toolsRemoved: [{ name: "read" }], timestamp: 2 },
    ];
    expect((pion.getCurrentSystemPrompt as Fn)(messages)).toBe("base\n\nB");
    expect((pion.getCurrentTools as Fn)(messages)).toEqual([]);
    expect((pion.hasNonAdditiveToolChanges as Fn)(messages)).toBe(true);
  });
});
