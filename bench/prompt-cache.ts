/**
 * Prompt caching: what a scripted coding session's input costs under Anthropic's caching rules,
 * priced from the request bodies the fake provider recorded (bench/cache-pricing.ts has the
 * rules, the token estimate and the bound on the best placement).
 *
 * The session, the same replies for every agent, chosen by what each request holds (so agents
 * that differ in tools, prompts or summary requests stay in step):
 * - prompt A: read f01..f12 one at a time (each reply looks at the file just read and asks for the
 *   next), then f13..f24 in one wide step of 12 parallel calls (24 new blocks, past the 20-block
 *   lookback), then h01..h08 one at a time; the first request after the wide step is answered
 *   529 overloaded and retried (a 529 is answered before the prompt is processed: not billed, it
 *   writes nothing). 21 tool steps.
 * - `compact`: the summary request(s), told apart by carrying no tools.
 * - prompt B: read h09..h12 one at a time, on the compacted context. 4 more tool steps.
 *
 * Prints, per agent: billed input as a share of the uncached input, the bound on the best
 * placement as the same share, their ratio (goal: within 5%), and how many requests read less
 * than the prefix they share with an earlier request (a placement's miss). Deterministic: one
 * iteration unless BENCH_ITER says otherwise.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { startFakeProvider, type FakeBlock, type FakeReply } from "../test/support/fake-provider.ts";
import { bestBound, blocksOf, priceRequests, type Block } from "./cache-pricing.ts";
import { agents, header, iterations, MODEL_ARGS, printTable, request, sandbox, sleep, spawnAgent, type Agent, type Child } from "./lib.ts";

const N = iterations(1);
header("prompt-cache", N);

const file = (name: string, i: number) =>
  Array.from({ length: 60 }, (_, l) => `${name} line ${l + 1}: value_${(i * 7919 + l * 104729) % 100003} = compute(${l}, "${name}");`).join("\n");
const F = Array.from({ length: 24 }, (_, i) => `f${String(i + 1).padStart(2, "0")}.txt`);
const H = Array.from({ length: 12 }, (_, i) => `h${String(i + 1).padStart(2, "0")}.txt`);

const read = (path: string, id: string): FakeBlock => ({ type: "toolCall", id, name: "read", arguments: { path } });
const say = (text: string): FakeBlock => ({ type: "text", text });
const reply = (...blocks: FakeBlock[]): FakeReply => ({ blocks });

/** The replies of one prompt, by step (assistant messages already sent after the prompt). */
const SCRIPT: Record<string, FakeReply[]> = {
  A: [
    ...F.slice(0, 12).map((f, k) => reply(say(k === 0 ? "Starting with the first file." : `Looked at ${F[k - 1]}; next ${f}.`), read(f, `toolu_a${k}`))),
    reply(say("The next twelve at once."), ...F.slice(12).map((f, i) => read(f, `toolu_w${i}`))),
    ...H.slice(0, 8).map((f, k) => reply(say(k === 0 ? "Those look alike; now the h files." : `Looked at ${H[k - 1]}; next ${f}.`), read(f, `toolu_h${k}`))),
    reply(say("All read: every file assigns computed values.")),
  ],
  B: [
    ...H.slice(8).map((f, k) => reply(say(k === 0 ? "Continuing with h09." : `Looked at ${H[7 + k]}; next ${f}.`), read(f, `toolu_b${k}`))),
    reply(say("Done with the rest.")),
  ],
};
/** Prompt A's step whose first request fails with 529 (the one after the wide step). */
const FAIL_STEP = 13;
const SUMMARY = reply(say("## Goal\nRead the f and h files.\n\n## Progress\n- Read f01..f24 and h01..h08.\n\n## Next Steps\n- Read h09..h12."));

type Msg = { role: string; content: string | { type: string; text?: string }[] };
const textOf = (m: Msg) => (typeof m.content === "string" ? m.content : m.content.map((c) => (c.type === "text" ? (c.text ?? "") : "")).join(""));

/** The reply for a request: a summary when it has no tools, else the next step of the prompt it answers. */
function choose(body: { tools?: unknown[]; messages: Msg[] }, failed: Set<string>): FakeReply | { fail: true } | { error: string } {
  if (!body.tools?.length) return SUMMARY;
  let at = -1;
  let prompt = "";
  body.messages.forEach((m, i) => {
    const hit = m.role === "user" ? /\[script (\w)\]/.exec(textOf(m)) : null;
    if (hit) [at, prompt] = [i, hit[1]!];
  });
  const step = body.messages.slice(at + 1).filter((m) => m.role === "assistant").length;
  const next = SCRIPT[prompt]?.[step];
  if (!next) return { error: `no scripted reply for prompt ${prompt || "?"} step ${step}` };
  const key = `${prompt}${step}`;
  if (prompt === "A" && step === FAIL_STEP && !failed.has(key)) {
    failed.add(key);
    return { fail: true };
  }
  return next;
}

/** Ask get_state until the run is over (both agents answer it while a prompt runs). */
async function idle(child: Child, tag: string): Promise<boolean> {
  const deadline = performance.now() + 120_000;
  for (let i = 0; performance.now() < deadline; i++) {
    const r = await request(child, { type: "get_state" }, `${tag}-${i}`);
    if (r.res.success && r.res.data?.isStreaming === false && r.res.data?.isCompacting !== true) return true;
    await sleep(50);
  }
  return false;
}

interface Run {
  blocks: Block[][];
  summaries: number;
  errors: string[];
}

async function session(agent: Agent): Promise<Run> {
  const failedSteps = new Set<string>();
  const failedRequests = new Set<number>();
  const errors: string[] = [];
  const fake = startFakeProvider({
    onRequest(req) {
      const choice = choose(req.body as never, failedSteps);
      if ("error" in choice) {
        errors.push(choice.error);
        throw new Error(choice.error);
      }
      if ("fail" in choice) {
        failedRequests.add(fake.requests.length - 1);
        fake.enqueue({ kind: "http_error", status: 529, errorType: "overloaded_error", message: "Overloaded" });
      } else fake.enqueue(choice);
    },
  });
  const box = sandbox(agent, fake.url);
  for (const [i, f] of [...F, ...H].entries()) writeFileSync(join(box.cwd, f), file(f, i));
  const settings = { retry: { enabled: true, maxRetries: 3, baseDelayMs: 50 }, compaction: { enabled: false, keepRecentTokens: 3000 }, cacheWarming: "off" };
  writeFileSync(join(box.env.PION_HOME ?? box.env.PI_CODING_AGENT_DIR!, "settings.json"), JSON.stringify(settings));
  const child = spawnAgent(box, ["--mode", "rpc", ...MODEL_ARGS]);
  const step = async (cmd: Record<string, unknown>, id: string) => {
    const r = await request(child, cmd, id, 120_000);
    if (!r.res.success) errors.push(`${id}: ${r.res.error}`);
    else if (!(await idle(child, id))) errors.push(`${id}: still running after 120 s`);
  };
  await step({ type: "prompt", message: `[script A] Read ${F[0]} to ${F.at(-1)}, then ${H[0]} to ${H[7]}, and tell me what they have in common.` }, "a");
  await step({ type: "compact" }, "c");
  await step({ type: "prompt", message: `[script B] Now read ${H[8]} to ${H.at(-1)}.` }, "b");
  await child.finish();
  await fake.stop();
  if (fake.failures.length) errors.push(...fake.failures);
  if (errors.length) console.error(`${agent}: ${errors.join("; ")}; stderr: ${(await child.stderr).slice(0, 300)}`);
  box.cleanup();
  const billed = fake.requests.filter((_, i) => !failedRequests.has(i));
  return {
    blocks: billed.map((r) => blocksOf(r.body)),
    summaries: billed.filter((r) => !(r.body as { tools?: unknown[] }).tools?.length).length,
    errors,
  };
}

/** Requests that read less than the longest prefix they share with an earlier request. */
function shortReads(blocks: Block[][], read: number[]): number {
  let short = 0;
  blocks.forEach((req, r) => {
    let shared = 0;
    for (let e = 0; e < r; e++) {
      let i = 0;
      let tokens = 0;
      for (; i < req.length && i < blocks[e]!.length && req[i]!.key === blocks[e]![i]!.key; i++) tokens += req[i]!.tokens;
      shared = Math.max(shared, tokens);
    }
    if (read[r]! < shared) short++;
  });
  return short;
}

type Figures = Record<"requests" | "summaries" | "uncached" | "share" | "best" | "ratio" | "short", number[]>;
const res: Partial<Record<Agent, Figures>> = {};
for (let i = 0; i < N; i++) {
  for (const agent of agents()) {
    const run = await session(agent);
    const price = priceRequests(run.blocks);
    const best = bestBound(run.blocks);
    const f = (res[agent] ??= { requests: [], summaries: [], uncached: [], share: [], best: [], ratio: [], short: [] });
    const ok = run.errors.length === 0;
    f.requests.push(run.blocks.length);
    f.summaries.push(run.summaries);
    f.uncached.push(price.uncached);
    f.share.push(ok ? price.billed / price.uncached : Number.NaN);
    f.best.push(ok ? best / price.uncached : Number.NaN);
    f.ratio.push(ok ? price.billed / best : Number.NaN);
    f.short.push(shortReads(run.blocks, price.requests.map((p) => p.read)));
  }
}

const row = (metric: string, unit: "%" | "x" | "n", key: keyof Figures, goal?: string) => ({ metric, unit, pion: res.pion![key], ref: res.ref?.[key], goal });
printTable("Prompt caching: a 25-tool-step session with a wide step, a retry and a compaction, priced under Anthropic's rules", [
  row("requests priced (the 529 left out)", "n", "requests"),
  row("of which compaction summaries", "n", "summaries"),
  row("uncached input, estimated tokens", "n", "uncached"),
  row("billed input / uncached input", "%", "share"),
  row("best placement (lower bound) / uncached", "%", "best"),
  row("billed / best placement", "x", "ratio", "≤ 1.05×"),
  row("requests reading less than they share with an earlier one", "n", "short", "0"),
]);
