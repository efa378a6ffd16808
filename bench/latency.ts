/**
 * How long pion takes to stop or finish work the tests only check happens (tests assert
 * behaviour, never time): a provider stream aborted mid-reply, a bash command killed by its
 * timeout or by abort, and markdown rendering of pathological input (the HTML export).
 * In-process, on the source modules.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { renderMarkdown } from "../src/export/markdown.ts";
import { streamAnthropic } from "../src/providers/anthropic.ts";
import { streamOpenAICompletions } from "../src/providers/openai-completions.ts";
import { streamOpenAIResponses } from "../src/providers/openai-responses.ts";
import type { Api, LlmRequest, StreamFn } from "../src/providers/types.ts";
import { createBashTool } from "../src/tools/bash.ts";
import { startFakeProvider } from "../test/support/fake-provider.ts";
import { PATHOLOGICAL_MARKDOWN } from "../test/unit/export/sessions.ts";
import { iterations, printTable, type Row } from "./lib.ts";

const ITER = iterations(10);
console.log(`\n## latency: ${ITER} iteration(s), in process (source modules)`);

function request(baseUrl: string, api: Api): LlmRequest {
  return {
    model: {
      id: "bench-model", name: "bench", api, provider: api === "anthropic-messages" ? "anthropic" : "openai", baseUrl,
      reasoning: false, input: ["text"], cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 }, contextWindow: 128000, maxTokens: 4096,
    },
    apiKey: "bench-key",
    systemPrompt: "bench",
    messages: [{ role: "user", content: "hi", timestamp: 1 }],
    tools: [],
    thinkingLevel: "off",
  };
}

/** abort() -> the stream's final message, for a reply that stalls after its first deltas. */
async function abortLatency(fn: StreamFn, api: Api): Promise<number> {
  await using fake = startFakeProvider({ replies: [{ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks: 6 }] });
  const controller = new AbortController();
  const stream = fn(request(api === "anthropic-messages" ? fake.url : `${fake.url}/v1`, api), controller.signal);
  const it = stream[Symbol.asyncIterator]();
  for (let r = await it.next(); !r.done; r = await it.next()) if (r.value.type.endsWith("_delta")) break;
  const t0 = performance.now();
  controller.abort();
  const message = await stream.result();
  if (message.stopReason !== "aborted") throw new Error(`expected aborted, got ${message.stopReason}`);
  return performance.now() - t0;
}

const bash = createBashTool();
const dir = mkdtempSync(join(tmpdir(), "pion-bench-latency-"));
const ctx = (signal: AbortSignal, onUpdate?: () => void) => ({ signal, callId: "b", cwd: dir, onUpdate });

/** A 0.3 s timeout on a command that would run 30 s: call -> result, minus the 300 ms. */
async function timeoutOverrun(): Promise<number> {
  const t0 = performance.now();
  await bash.execute(await bash.parse({ command: "sleep 30 & wait", timeout: 0.3 }), ctx(new AbortController().signal));
  return performance.now() - t0 - 300;
}

/** abort() on the first output of a command that would run 30 s -> its result. */
async function bashAbortLatency(): Promise<number> {
  const controller = new AbortController();
  let t0 = 0;
  await bash.execute(
    await bash.parse({ command: "echo started; sleep 30 & wait" }),
    ctx(controller.signal, () => {
      if (t0) return;
      t0 = performance.now();
      controller.abort();
    }),
  );
  return performance.now() - t0;
}

function markdownTime(): number {
  const t0 = performance.now();
  for (const src of PATHOLOGICAL_MARKDOWN) renderMarkdown(src);
  return performance.now() - t0;
}

const rows: Row[] = [
  { metric: "abort → final message, Anthropic stream", unit: "ms", pion: [], goal: "< 200 ms" },
  { metric: "abort → final message, OpenAI completions stream", unit: "ms", pion: [], goal: "< 200 ms" },
  { metric: "abort → final message, OpenAI responses stream", unit: "ms", pion: [], goal: "< 200 ms" },
  { metric: "bash timeout 0.3 s on a 30 s command: overrun", unit: "ms", pion: [], goal: "< 500 ms" },
  { metric: "bash abort on first output → result", unit: "ms", pion: [], goal: "< 500 ms" },
  { metric: "markdown: the 9 pathological inputs of markdown.test.ts", unit: "ms", pion: [], goal: "< 3 s" },
];
try {
  for (let i = 0; i < ITER; i++) {
    rows[0]!.pion.push(await abortLatency(streamAnthropic, "anthropic-messages"));
    rows[1]!.pion.push(await abortLatency(streamOpenAICompletions, "openai-completions"));
    rows[2]!.pion.push(await abortLatency(streamOpenAIResponses, "openai-responses"));
    rows[3]!.pion.push(await timeoutOverrun());
    rows[4]!.pion.push(await bashAbortLatency());
    rows[5]!.pion.push(markdownTime());
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
printTable("latency of stopping work", rows);
