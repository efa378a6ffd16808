import { afterEach, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { setModelAuth } from "../../../src/extensions/model-calls.ts";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import type { Model } from "../../../src/providers/types.ts";
import { buildContext } from "../../../src/session/context.ts";
import { pathTo, type Entry } from "../../../src/store/entries.ts";
import { startFakeProvider, type FakeProvider } from "../../support/fake-provider.ts";
import { argument, referenceCalls, sessionReader, toJson } from "../../support/reference-calls.ts";

const REF = process.env.PION_REFERENCE_PKG;
type Fn = (...args: any[]) => any;
const pion = referenceModules()["pi-coding-agent"] as Record<string, Fn> & { DEFAULT_COMPACTION_SETTINGS: unknown };
const refTest = REF ? test : test.skip;

const FIXTURES = join(import.meta.dir, "../../fixtures");
const FILES = ["reference-v3-compaction", "reference-v3-fork-parent", "reference-v3-fork-child", "reference-v1-linear"];
const text = (name: string) => readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8");
type E = Record<string, any> & { type: string; id: string; parentId: string | null };

/** A fixture's entries migrated to v3 by pion (header left out). */
function entriesOf(name: string): E[] {
  const all = pion.parseSessionEntries!(text(name)) as E[];
  pion.migrateSessionEntries!(all);
  return all.filter((e) => e.type !== "session");
}
const clone = <T>(x: T): T => structuredClone(x);

/** Entries with their ids replaced by their positions, so two v1 migrations (random ids) compare. */
function byPosition(entries: E[]): E[] {
  const at = new Map(entries.map((e, i) => [e.id, `#${i}`]));
  return entries.map((e) => ({ ...e, ...(e.type === "session" ? {} : { id: at.get(e.id), parentId: e.parentId === null ? null : at.get(e.parentId) }), ...(e.firstKeptEntryId ? { firstKeptEntryId: at.get(e.firstKeptEntryId) } : {}) }));
}

const at = (ts: number) => new Date(ts).toISOString();
const user = (id: string, parentId: string | null, text: string, ts = 1000): E => ({ type: "message", id, parentId, timestamp: at(ts), message: { role: "user", content: text, timestamp: ts } });
const assistant = (id: string, parentId: string | null, content: unknown[], over: Record<string, unknown> = {}): E => ({
  type: "message",
  id,
  parentId,
  timestamp: at(2000),
  message: { role: "assistant", content, provider: "p", model: "m", api: "openai-completions", stopReason: "stop", usage: { input: 10, output: 5, cacheRead: 0, cacheWrite: 0, totalTokens: 15, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2000, ...over },
});
const toolResult = (id: string, parentId: string, callId: string, text: string): E => ({ type: "message", id, parentId, timestamp: at(3000), message: { role: "toolResult", toolCallId: callId, toolName: "read", content: [{ type: "text", text }], isError: false, timestamp: 3000 } });
const call = (id: string, name: string, args: Record<string, unknown>) => ({ type: "toolCall", id, name, arguments: args });

/** A session with every entry kind the context helpers look at, and a tree: `b2` branches off `u1`. */
function synthetic(): E[] {
  return [
    { type: "model_change", id: "mc", parentId: null, timestamp: at(500), provider: "p", modelId: "m0" },
    user("u1", "mc", "first question"),
    assistant("a1", "u1", [{ type: "text", text: "reading" }, call("c1", "read", { path: "src/a.ts" })]),
    toolResult("t1", "a1", "c1", "x".repeat(5000)),
    assistant("a2", "t1", [call("c2", "edit", { path: "src/b.ts", oldText: "a", newText: "b" }), call("c3", "write", { path: "src/c.ts", content: "c" })]),
    toolResult("t2", "a2", "c2", "edited"),
    { type: "thinking_level_change", id: "tl", parentId: "t2", timestamp: at(3500), thinkingLevel: "high" },
    { type: "label", id: "lb", parentId: "tl", timestamp: at(3600), targetId: "u1", label: "start" },
    { type: "custom_message", id: "cm", parentId: "lb", timestamp: at(3700), customType: "note", content: "a note", display: true },
    { type: "custom", id: "cu", parentId: "cm", timestamp: at(3750), customType: "state", data: { n: 1 } },
    { type: "compaction", id: "co", parentId: "cu", timestamp: at(3800), summary: "earlier work", firstKeptEntryId: "a2", tokensBefore: 1234, details: { readFiles: ["old.ts"], modifiedFiles: [] } },
    { type: "model_change", id: "mc2", parentId: "co", timestamp: at(3900), provider: "p", modelId: "m1" },
    user("u2", "mc2", "second question", 4000),
    assistant("a3", "u2", [{ type: "text", text: "answer two" }]),
    { type: "context_edit", id: "ce", parentId: "a3", timestamp: at(4500), targetId: "u2", replacement: { content: "second question, edited" } },
    { type: "branch_summary", id: "bs", parentId: "ce", timestamp: at(4600), fromId: "b2", summary: "left branch", details: { readFiles: ["r.ts"], modifiedFiles: ["m.ts"] } },
    user("u3", "bs", "third", 5000),
    { type: "branch_summary", id: "bs0", parentId: "u3", timestamp: at(5100), fromId: "x", summary: "" },
    user("b1", "u1", "other way", 6000),
    assistant("b2", "b1", [{ type: "text", text: "other answer" }, call("c9", "read", { path: "src/z.ts" })]),
  ];
}

type Call = [string, ...unknown[]];

/** Each call answered by pion (on copies of its arguments) and by the reference (in its own process), through the same JSON. */
async function answers(calls: Call[], shared: unknown[] = []): Promise<{ ours: unknown[]; theirs: unknown[] }> {
  const theirs = await referenceCalls(REF!, calls, shared);
  const ours = calls.map(([name, ...raw]) => {
    // argument() makes readers and copies of shared values; anything else is copied here.
    const args = raw.map((a) => (a && typeof a === "object" && ("$reader" in a || "$shared" in a) ? argument(a, shared) : clone(a)));
    const value = name === "DEFAULT_COMPACTION_SETTINGS" ? pion[name] : pion[name]!(...args);
    const result = name === "migrateSessionEntries" ? args[0] : value;
    return result === undefined ? undefined : toJson(result);
  });
  return { ours, theirs };
}

/** Every call answers the same in pion and in the reference. */
async function agree(calls: Call[], shared: unknown[] = []): Promise<void> {
  const { ours, theirs } = await answers(calls, shared);
  for (let i = 0; i < calls.length; i++) {
    if (!Bun.deepEquals(ours[i], theirs[i])) expect({ call: calls[i], answer: ours[i] }).toEqual({ call: calls[i], answer: theirs[i] });
  }
  expect(ours.length).toBe(calls.length);
}

describe("session entries: pion's and the reference's agree on the reference's files", () => {
  refTest("parseSessionEntries and migrateSessionEntries (v1 gets ids and a tree, v3 is left alone)", async () => {
    const bad = `{"type":"session","id":"s","timestamp":"t"}\nnot json\n\n{"type":"custom","id":"x","parentId":null,"timestamp":"t"}\n`;
    const parsed = FILES.map((name) => pion.parseSessionEntries!(text(name)) as E[]);
    await agree([...FILES.map((name): Call => ["parseSessionEntries", text(name)]), ["parseSessionEntries", bad]]);
    expect((pion.parseSessionEntries!(bad) as unknown[]).length).toBe(2);
    const { ours, theirs } = await answers(parsed.map((entries): Call => ["migrateSessionEntries", entries]));
    for (let i = 0; i < FILES.length; i++) expect(byPosition(ours[i] as E[])).toEqual(byPosition(theirs[i] as E[]));
    expect((ours[3] as E[])[0]!.version).toBe(3);
  });

  refTest("a v1 compaction's line index becomes the id of the entry on that line; v2's hookMessage becomes custom", async () => {
    const v1 = [
      { type: "session", id: "s", timestamp: at(0), cwd: "/w" },
      { type: "message", timestamp: at(1), message: { role: "user", content: "a", timestamp: 1 } },
      { type: "message", timestamp: at(2), message: { role: "user", content: "b", timestamp: 2 } },
      { type: "compaction", timestamp: at(3), summary: "s", firstKeptEntryIndex: 2, tokensBefore: 5 },
    ];
    const v2 = [{ type: "session", version: 2, id: "s", timestamp: at(0) }, { type: "message", id: "h", parentId: null, timestamp: at(1), message: { role: "hookMessage", customType: "x", content: "c", display: true, timestamp: 1 } }];
    const { ours, theirs } = await answers([["migrateSessionEntries", v1], ["migrateSessionEntries", v2]]);
    const [a, b] = [theirs[0] as E[], ours[0] as E[]];
    expect(byPosition(b)).toEqual(byPosition(a));
    expect(b[3]!.firstKeptEntryId).toBe(b[2]!.id);
    expect(ours[1]).toEqual(theirs[1]);
    expect((ours[1] as E[])[1]!.message.role).toBe("custom");
  });

  refTest("buildSessionContext, buildSessionProjection and buildContextEntries, at every leaf", async () => {
    const calls: Call[] = [];
    const sets = [...FILES.map(entriesOf), synthetic()];
    sets.forEach((entries, k) => {
      // Every leaf of the small sessions, about 8 of the long one.
      const step = entries.length > 100 ? Math.floor(entries.length / 8) : 1;
      const leaves: (string | null | undefined)[] = [undefined, null, "no-such-id", ...entries.filter((_, i) => i % step === 0).map((e) => e.id)];
      for (const leaf of leaves) for (const fn of ["buildSessionContext", "buildSessionProjection", "buildContextEntries"]) calls.push([fn, { $shared: k }, leaf]);
    });
    await agree(calls, sets);
    const ctx = pion.buildSessionContext!(synthetic(), "u3") as { messages: { role: string; content?: unknown }[]; model: unknown; thinkingLevel: string };
    expect(ctx.messages.map((m) => m.role)).toEqual(["compactionSummary", "assistant", "toolResult", "custom", "user", "assistant", "branchSummary", "user"]);
    expect(ctx.messages[4]!.content).toBe("second question, edited");
    expect(ctx).toMatchObject({ model: { provider: "p", modelId: "m" }, thinkingLevel: "high" });
  }, 30_000);

  refTest("pion's own session context (buildContext) is the reference's, a reference-written context edit included", async () => {
    const sets = [synthetic(), entriesOf("reference-v1-linear")];
    const calls: Call[] = [];
    const ours: unknown[] = [];
    sets.forEach((entries, k) => {
      const byId = new Map(entries.map((e) => [e.id, e as unknown as Entry]));
      for (const e of entries.slice(-12)) {
        calls.push(["buildSessionContext", { $shared: k }, e.id]);
        ours.push(toJson(buildContext(pathTo(byId, e.id))));
      }
    });
    const theirs = await referenceCalls(REF!, calls, sets);
    expect(ours).toEqual(theirs.map((c) => (c as { messages: unknown }).messages));
    const edited = buildContext(pathTo(new Map(synthetic().map((e) => [e.id, e as unknown as Entry])), "u3"));
    expect(edited.find((m) => m.role === "user")).toMatchObject({ role: "user", content: "second question, edited", timestamp: 4000 });
  }, 30_000);

  refTest("sessionEntryToContextMessages and getLatestCompactionEntry, entry by entry", async () => {
    const odd: E[] = [
      { type: "message", id: "n1", parentId: null, timestamp: at(1), message: { role: "user", timestamp: 1 } },
      { type: "message", id: "n2", parentId: null, timestamp: at(1), message: { role: "system", timestamp: 1 } },
      { type: "custom_message", id: "n3", parentId: null, timestamp: at(1), customType: "x", display: false },
      { type: "compaction", id: "n4", parentId: null, timestamp: at(1), summary: "s", firstKeptEntryId: "n1", tokensBefore: 1, systemMessage: { role: "system", content: "sys", timestamp: 1 } },
    ];
    const calls: Call[] = [];
    for (const entries of [...FILES.map(entriesOf), synthetic(), odd]) {
      for (const e of entries) calls.push(["sessionEntryToContextMessages", e]);
      calls.push(["getLatestCompactionEntry", entries]);
    }
    await agree(calls);
    expect(pion.getLatestCompactionEntry!(synthetic())).toMatchObject({ id: "co" });
    expect(pion.getLatestCompactionEntry!([])).toBeNull();
  });

  refTest("convertToLlm: user, assistant, tool result, bash and custom messages as the reference converts them", async () => {
    const messages = [
      ...(pion.buildSessionContext!(entriesOf("reference-v1-linear")).messages as { role: string }[]),
      { role: "bashExecution", command: "ls", output: "a\nb", exitCode: 2, cancelled: false, truncated: true, fullOutputPath: "/tmp/o", timestamp: 5 },
      { role: "bashExecution", command: "pwd", output: "", exitCode: 0, cancelled: true, truncated: false, timestamp: 6 },
      { role: "bashExecution", command: "secret", output: "x", exitCode: 0, cancelled: false, truncated: false, excludeFromContext: true, timestamp: 7 },
      { role: "custom", customType: "n", content: "note", display: true, timestamp: 8 },
    ];
    const withSystem = pion.buildSessionContext!(entriesOf("reference-v3-fork-child")).messages as { role: string }[];
    expect(withSystem[0]!.role).toBe("system");
    await agree([["convertToLlm", messages], ["convertToLlm", withSystem]]);
    // The summaries are wrapped in pion's words; the summary text itself goes to the model.
    const summaries = [{ role: "compactionSummary", summary: "S1", tokensBefore: 1, timestamp: 1 }, { role: "branchSummary", summary: "S2", fromId: "x", timestamp: 2 }];
    const converted = pion.convertToLlm!(summaries) as { role: string; content: { text: string }[] }[];
    expect(converted.map((m) => m.role)).toEqual(["user", "user"]);
    expect(converted[0]!.content[0]!.text).toContain("S1");
    expect(converted[1]!.content[0]!.text).toContain("S2");
  });
});

describe("compaction arithmetic: pion's and the reference's agree", () => {
  refTest("DEFAULT_COMPACTION_SETTINGS, calculateContextTokens, getLastAssistantUsage, shouldCompact", async () => {
    const calls: Call[] = [["DEFAULT_COMPACTION_SETTINGS"]];
    const failed = [assistant("x", null, [], { stopReason: "error" }), assistant("y", null, [], { stopReason: "aborted" })];
    for (const entries of [...FILES.map(entriesOf), synthetic(), failed]) {
      calls.push(["getLastAssistantUsage", entries]);
      for (const e of entries) if (e.type === "message" && e.message.usage) calls.push(["calculateContextTokens", e.message.usage]);
    }
    calls.push(["calculateContextTokens", { input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 0 }]);
    for (const settings of [{ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 }, { enabled: false, reserveTokens: 100, keepRecentTokens: 10 }, { enabled: true, reserveTokens: 100, keepRecentTokens: 10 }]) {
      for (const [tokens, window] of [[0, 1000], [899, 1000], [900, 1000], [901, 1000], [200000, 200000], [183617, 200000]] as const) calls.push(["shouldCompact", tokens, window, settings]);
    }
    await agree(calls);
    expect(pion.getLastAssistantUsage!(failed)).toBeUndefined();
    expect(pion.calculateContextTokens!({ input: 1, output: 2, cacheRead: 3, cacheWrite: 4, totalTokens: 0 })).toBe(10);
  });

  refTest("findCutPoint and findTurnStartIndex on every range, for budgets from one token to more than the session holds", async () => {
    const calls: Call[] = [];
    const sets = [...FILES.map(entriesOf), synthetic().slice(0, 10), synthetic().slice(0, 17)];
    sets.forEach((entries, k) => {
      const n = entries.length;
      const all = { $shared: k };
      // 0 and 1: the newest message reaches it; 1e12: nothing does (the first cut point); between, the estimate decides.
      for (const keep of [0, 1, 100, 300, 1000, 5000, 20000, 1e12]) {
        for (const [from, to] of [[0, n], [1, n], [0, n - 1], [Math.floor(n / 2), n], [0, Math.floor(n / 2)], [3, 3]]) calls.push(["findCutPoint", all, from, to, keep]);
      }
      const step = Math.max(1, Math.floor(n / 50));
      for (let i = 0; i < n; i += step) calls.push(["findTurnStartIndex", all, i, 0], ["findTurnStartIndex", all, i, Math.min(i, 3)]);
    });
    await agree(calls, sets);
  }, 30_000);

  refTest("a cut moves back over entries that add nothing to the context, and a cut on an assistant message splits its turn", async () => {
    const s = synthetic().slice(0, 10); // ... t2, thinking level change, label, custom message, custom entry
    expect(pion.findCutPoint!(s, 0, s.length, 1e12)).toEqual({ firstKeptEntryIndex: 0, turnStartIndex: -1, isSplitTurn: false });
    // The custom message at 8 is kept; the metadata before it (6, 7) goes with it.
    expect(pion.findCutPoint!(s, 0, 9, 1)).toEqual({ firstKeptEntryIndex: 6, turnStartIndex: 1, isSplitTurn: true });
    expect(pion.findCutPoint!(s, 2, 5, 1)).toEqual({ firstKeptEntryIndex: 4, turnStartIndex: -1, isSplitTurn: false });
    expect(pion.findCutPoint!(s, 0, 5, 1)).toEqual({ firstKeptEntryIndex: 4, turnStartIndex: 1, isSplitTurn: true });
    await agree([["findCutPoint", s, 0, 9, 1], ["findCutPoint", s, 2, 5, 1], ["findCutPoint", s, 0, 5, 1]]);
  });

  refTest("estimateTokens: pion's estimate is the reference's (text characters / 4, an image as 4800), message by message", async () => {
    const messages = pion.buildSessionContext!(entriesOf("reference-v1-linear")).messages as object[];
    const { ours, theirs } = await answers(messages.map((m): Call => ["estimateTokens", m]));
    expect(ours).toEqual(theirs);
    expect(ours.reduce((a: number, b) => a + (b as number), 0)).toBeGreaterThan(100_000);
  });

  refTest("prepareBranchEntries without a budget and collectEntriesForBranchSummary", async () => {
    const s = synthetic();
    const { ours, theirs } = await answers([["prepareBranchEntries", s]]);
    const a = theirs[0] as { messages: unknown; fileOps: { edited: string[] } };
    const b = ours[0] as typeof a;
    expect(b.messages).toEqual(a.messages);
    expect(b.fileOps).toEqual(a.fileOps);
    expect(b.fileOps.edited).toEqual(["m.ts", "src/b.ts"]);
    const fork = entriesOf("reference-v3-fork-parent");
    const cases: [string | null, string][] = [["b2", "u3"], ["u3", "b2"], ["b2", "u1"], [null, "u1"], ["a3", "a3"], ["b2", "mc"]];
    await agree([...cases.map(([from, to]): Call => ["collectEntriesForBranchSummary", { $reader: s }, from, to]), ["collectEntriesForBranchSummary", { $reader: fork }, fork.at(-1)!.id, fork[3]!.id]]);
    expect((pion.collectEntriesForBranchSummary!(sessionReader(s), "b2", "u3").entries as E[]).map((e) => e.id)).toEqual(["b1", "b2"]);
  });
});

describe("compaction helpers without the reference", () => {
  test("the budget of prepareBranchEntries keeps the newest messages, and a summary while under 90% of it", () => {
    const s = synthetic();
    const all = pion.prepareBranchEntries!(s);
    const last = all.messages.at(-1);
    const tight = pion.prepareBranchEntries!(s, pion.estimateTokens!(last) + 1);
    expect(tight.messages).toEqual([last]);
    expect(tight.totalTokens).toBe(pion.estimateTokens!(last));
    expect(all.messages.some((m: { role: string }) => m.role === "toolResult")).toBe(false);
    expect(all.messages.map((m: { role: string }) => m.role)).toContain("compactionSummary");
    const summary = { type: "compaction", id: "c", parentId: null, timestamp: at(1), summary: "s".repeat(400), firstKeptEntryId: "c", tokensBefore: 1 };
    const note = { type: "custom_message", id: "n", parentId: "u", timestamp: at(1), customType: "x", content: "n".repeat(400), display: true };
    const small = user("u", "c", "tiny");
    const budget = pion.estimateTokens!(pion.sessionEntryToContextMessages!(small)[0]) + 50;
    // Over the budget: the summary still gets in (the rest is well under 90%), a plain message does not.
    expect(pion.prepareBranchEntries!([summary, small], budget).messages.map((m: { role: string }) => m.role)).toEqual(["compactionSummary", "user"]);
    expect(pion.prepareBranchEntries!([note, small], budget).messages.map((m: { role: string }) => m.role)).toEqual(["user"]);
  });

  test("serializeConversation writes labelled lines and cuts long tool output", () => {
    const ctx = pion.buildSessionContext!(synthetic(), "t2").messages;
    const out = pion.serializeConversation!(ctx) as string;
    expect(out).toContain("first question");
    expect(out).toContain("src/a.ts");
    expect(out).not.toContain("x".repeat(2001));
    expect(out.indexOf("first question")).toBeLessThan(out.indexOf("src/b.ts"));
  });

  test("shouldCompact is off when settings say so; DEFAULT_COMPACTION_SETTINGS are pion's defaults", () => {
    expect(pion.shouldCompact!(10_000, 1000, { enabled: false, reserveTokens: 0, keepRecentTokens: 0 })).toBe(false);
    expect(pion.shouldCompact!(10_000, 1000, { enabled: true, reserveTokens: 0, keepRecentTokens: 0 })).toBe(true);
    expect(pion.DEFAULT_COMPACTION_SETTINGS).toEqual({ enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 });
  });
});

describe("summaries through pion's providers (fake provider over HTTP)", () => {
  let fake: FakeProvider | undefined;
  afterEach(async () => {
    setModelAuth(async () => undefined);
    await fake?.stop();
    fake = undefined;
  });
  const modelOf = (f: FakeProvider, over: Partial<Model> = {}): Model => ({
    id: "sum-model",
    name: "Summary model",
    api: "openai-completions",
    provider: "openai",
    baseUrl: `${f.url}/v1`,
    reasoning: false,
    input: ["text"],
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0 },
    contextWindow: 100_000,
    maxTokens: 1000,
    ...over,
  });
  const reply = (t: string) => ({ blocks: [{ type: "text" as const, text: t }], usage: { input: 40, output: 7 } });
  const bodyText = (f: FakeProvider, i: number) => JSON.stringify(f.requests[i]!.body);
  const msgs = [
    { role: "user", content: "please fix the parser", timestamp: 1 },
    { role: "assistant", content: [{ type: "text", text: "on it" }, call("c1", "read", { path: "src/parser.ts" })], provider: "p", model: "m", api: "openai-completions", stopReason: "toolUse", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, timestamp: 2 },
  ];

  test("generateSummaryWithUsage sends the transcript with the given key and returns the summary and its usage", async () => {
    fake = await startFakeProvider({ replies: [reply("## Goal\nFix the parser")] });
    const out = await pion.generateSummaryWithUsage!(msgs, modelOf(fake), undefined, "sk-given", undefined, undefined, "mind the tests", "an older summary");
    expect(out.text).toBe("## Goal\nFix the parser");
    expect(out.usage).toMatchObject({ input: 40, output: 7 });
    expect(fake.requests).toHaveLength(1);
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer sk-given");
    const body = bodyText(fake, 0);
    for (const part of ["please fix the parser", "src/parser.ts", "mind the tests", "an older summary"]) expect(body).toContain(part);
    expect((fake.requests[0]!.body as { tools?: unknown[] }).tools ?? []).toEqual([]);
  });

  test("generateSummary takes the key from the session's registry when the call names none, and throws a failed reply", async () => {
    fake = await startFakeProvider({ replies: [reply("short summary"), { kind: "http_error", status: 400, message: "bad request here" }] });
    setModelAuth(async (provider) => (provider === "openai" ? { apiKey: "sk-registry" } : undefined));
    expect(await pion.generateSummary!(msgs, modelOf(fake))).toBe("short summary");
    expect(fake.requests[0]!.headers.authorization).toBe("Bearer sk-registry");
    await expect(pion.generateSummary!(msgs, modelOf(fake), undefined, "sk-x")).rejects.toThrow(/^Summarization failed: .*bad request here/);
  });

  test("generateSummary retries a transient failure under the caller's policy and reports it to the callbacks", async () => {
    fake = await startFakeProvider({ replies: [{ kind: "http_error", status: 503, message: "overloaded" }, reply("after retry")] });
    const seen: string[] = [];
    const callbacks = { onRetryScheduled: (n: number) => seen.push(`scheduled ${n}`), onRetryAttemptStart: () => seen.push("start"), onRetryFinished: (ok: boolean, n: number) => seen.push(`finished ${ok} ${n}`) };
    const text = await pion.generateSummary!(msgs, modelOf(fake), undefined, "sk-x", undefined, undefined, undefined, undefined, undefined, undefined, undefined, { enabled: true, maxRetries: 2, baseDelayMs: 1 }, callbacks);
    expect(text).toBe("after retry");
    expect(fake.requests).toHaveLength(2);
    expect(seen).toEqual(["scheduled 1", "start", "finished true 1"]);
  });

  test("compact summarizes a split turn in two requests and appends the file lists", async () => {
    fake = await startFakeProvider({ replies: [reply("HISTORY"), reply("PREFIX")] });
    const preparation = {
      firstKeptEntryId: "k1",
      messagesToSummarize: msgs,
      turnPrefixMessages: [{ role: "user", content: "now the lexer", timestamp: 3 }],
      isSplitTurn: true,
      tokensBefore: 4321,
      previousSummary: "PREVIOUS",
      fileOps: { read: new Set(["src/parser.ts", "src/lexer.ts"]), written: new Set(["src/new.ts"]), edited: new Set(["src/lexer.ts"]) },
      settings: { enabled: true, reserveTokens: 16384, keepRecentTokens: 20000 },
    };
    const out = await pion.compact!(preparation, modelOf(fake), "sk-x");
    expect(fake.requests).toHaveLength(2);
    expect(bodyText(fake, 0)).toContain("PREVIOUS");
    expect(bodyText(fake, 1)).toContain("now the lexer");
    expect(bodyText(fake, 1)).not.toContain("please fix the parser");
    expect(out.summary).toBe("HISTORY\n\n---\n\n**Turn Context (split turn):**\n\nPREFIX\n\n<read-files>\nsrc/parser.ts\n</read-files>\n\n<modified-files>\nsrc/lexer.ts\nsrc/new.ts\n</modified-files>");
    expect(out).toMatchObject({ firstKeptEntryId: "k1", tokensBefore: 4321, details: { readFiles: ["src/parser.ts"], modifiedFiles: ["src/lexer.ts", "src/new.ts"] }, usage: { input: 80, output: 14 } });
  });

  test("compact uses a stream function the caller passes instead of the providers", async () => {
    const contexts: unknown[] = [];
    const streamFn = (model: Model, context: unknown, options: { apiKey?: string }) => {
      contexts.push({ model: model.id, context, key: options.apiKey });
      return { result: async () => ({ role: "assistant", content: [{ type: "text", text: "FROM STREAMFN" }], stopReason: "stop", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } } }) };
    };
    const model = { ...modelOf({ url: "http://127.0.0.1:9" } as FakeProvider) };
    const preparation = { firstKeptEntryId: "k", messagesToSummarize: msgs, turnPrefixMessages: [], isSplitTurn: false, tokensBefore: 1, fileOps: { read: new Set<string>(), written: new Set<string>(), edited: new Set<string>() } };
    const out = await pion.compact!(preparation, model, "sk-s", undefined, undefined, undefined, undefined, streamFn);
    expect(out.summary).toBe("FROM STREAMFN");
    expect(contexts).toHaveLength(1);
    expect(JSON.stringify(contexts[0])).toContain("please fix the parser");
    expect((contexts[0] as { key: string }).key).toBe("sk-s");
  });

  test("generateBranchSummary: the branch's messages go out, the summary comes back with the preamble and file lists", async () => {
    fake = await startFakeProvider({ replies: [reply("BRANCH SUMMARY"), { kind: "http_error", status: 401, message: "no key" }] });
    const s = synthetic();
    const branch = s.filter((e) => e.id === "b1" || e.id === "b2");
    const out = await pion.generateBranchSummary!(branch, { model: modelOf(fake), apiKey: "sk-b", customInstructions: "focus on z" });
    expect(bodyText(fake, 0)).toContain("other way");
    expect(bodyText(fake, 0)).toContain("focus on z");
    expect(out.summary.startsWith("Before coming back")).toBe(true);
    expect(out.summary).toContain("BRANCH SUMMARY\n\n<read-files>\nsrc/z.ts\n</read-files>");
    expect(out).toMatchObject({ readFiles: ["src/z.ts"], modifiedFiles: [], usage: { input: 40 } });
    const failed = await pion.generateBranchSummary!(branch, { model: modelOf(fake), apiKey: "sk-b" });
    expect(failed.error).toMatch(/^Branch summarization failed: .*no key/);
    expect(await pion.generateBranchSummary!([s[0]!], { model: modelOf(fake) })).toEqual({ summary: "No content to summarize" });
    expect(fake.requests).toHaveLength(2);
  });
});
