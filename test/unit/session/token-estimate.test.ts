import { describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { referenceModules } from "../../../src/extensions/surface/modules.ts";
import { planCompaction } from "../../../src/session/compaction.ts";
import { findCutPoint } from "../../../src/session/cut-point.ts";
import { contextTokens, estimateContext, estimateTokens } from "../../../src/session/stats.ts";
import { pathTo, type AgentMessage, type Entry } from "../../../src/store/entries.ts";
import { referenceCalls } from "../../support/reference-calls.ts";

const REF = process.env.PION_REFERENCE_PKG;
const refTest = REF ? test : test.skip;
type Fn = (...args: any[]) => any;
const surface = referenceModules()["pi-coding-agent"] as Record<string, Fn>;

const FIXTURES = join(import.meta.dir, "../../fixtures");
const FILES = ["reference-v1-linear", "reference-v3-compaction", "reference-v3-fork-parent", "reference-v3-fork-child"];

/** A fixture's entries migrated to v3 as pion imports them (header left out). */
function entriesOf(name: string): Entry[] {
  const all = surface.parseSessionEntries!(readFileSync(join(FIXTURES, `${name}.jsonl`), "utf8")) as { type: string }[];
  surface.migrateSessionEntries!(all);
  return all.filter((e) => e.type !== "session") as Entry[];
}

const at = (ts: number) => new Date(ts).toISOString();
const usage = (total: number) => ({ input: total - 10, output: 10, cacheRead: 0, cacheWrite: 0, totalTokens: total, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } });
const image = { type: "image", data: "aGVsbG8=", mimeType: "image/png" };

/** One message of every kind the estimate knows, with the parts it counts and the parts it does not. */
const MESSAGES: object[] = [
  { role: "user", content: "plain text with ünïcødé and 🎉", timestamp: 1 },
  { role: "user", content: [{ type: "text", text: "look" }, image, { type: "text", text: "" }, image], timestamp: 1 },
  { role: "user", content: [], timestamp: 1 },
  {
    role: "assistant",
    content: [
      { type: "thinking", thinking: "let me think", thinkingSignature: "sig".repeat(100) },
      { type: "text", text: "reading two files" },
      { type: "toolCall", id: "c1", name: "read", arguments: { path: "src/a.ts", range: [1, 20], nested: { quote: "\"x\"\n" } } },
      { type: "toolCall", id: "c2", name: "bash", arguments: {} },
    ],
    api: "anthropic-messages",
    provider: "anthropic",
    model: "m",
    usage: usage(500),
    stopReason: "toolUse",
    timestamp: 2,
  },
  { role: "toolResult", toolCallId: "c1", toolName: "read", content: [{ type: "text", text: "x".repeat(1001) }, image], details: { big: "y".repeat(5000) }, isError: false, timestamp: 3 },
  { role: "bashExecution", command: "ls -la", output: "a\nb\nc\n", exitCode: 0, cancelled: false, truncated: false, timestamp: 4 },
  { role: "custom", customType: "note", content: "a note", display: true, details: { n: 1 }, timestamp: 5 },
  { role: "custom", customType: "note", content: [{ type: "text", text: "blocks" }, image], display: false, timestamp: 5 },
  { role: "branchSummary", summary: "the branch left behind", fromId: "x", timestamp: 6 },
  { role: "compactionSummary", summary: "s".repeat(333), tokensBefore: 9999, timestamp: 7 },
  { role: "system", content: "You are a coding agent.", sections: { env: "cwd: /tmp", gone: null }, toolsAdded: [{ name: "read", description: "Read a file", parameters: { type: "object" } }], timestamp: 0 },
  { role: "system", content: [{ type: "text", text: "block prompt" }], timestamp: 0 },
  { role: "somethingElse", content: "not counted", timestamp: 8 },
];

const message = (id: string, parentId: string | null, m: object, ts = 1000): Entry => ({ type: "message", id, parentId, timestamp: at(ts), message: m } as Entry);
const user = (id: string, parentId: string | null, text: string) => message(id, parentId, { role: "user", content: text, timestamp: 1000 });
const reply = (id: string, parentId: string, text: string, total: number, over: object = {}) =>
  message(id, parentId, { role: "assistant", content: [{ type: "text", text }], api: "anthropic-messages", provider: "p", model: "m", usage: usage(total), stopReason: "stop", timestamp: 2000, ...over }, 2000);

/** Sessions where the context-usage estimate takes each of its ways. */
function sessions(): Record<string, Entry[]> {
  const system = message("sys", null, { role: "system", content: "prompt", sections: { a: "section text" }, toolsAdded: [{ name: "t", description: "d", parameters: {} }], timestamp: 0 });
  const base = [system, user("u1", "sys", "first question"), reply("a1", "u1", "first answer", 4000)];
  return {
    noUsage: [user("u1", null, "hello"), message("m1", "u1", { role: "user", content: [{ type: "text", text: "see" }, image], timestamp: 1 }), { type: "custom_message", id: "cm", parentId: "m1", timestamp: at(1), customType: "n", content: "note", display: true } as Entry],
    zeroUsage: [user("u1", null, "hello"), reply("a1", "u1", "hi", 0)],
    failedLast: [...base, user("u2", "a1", "again"), reply("a2", "u2", "", 9000, { stopReason: "error" })],
    trailing: [
      ...base,
      message("b1", "a1", { role: "bashExecution", command: "ls", output: "x".repeat(400), exitCode: 0, cancelled: false, truncated: false, timestamp: 3 }),
      { type: "branch_summary", id: "bs", parentId: "b1", timestamp: at(3), fromId: "x", summary: "other branch" } as Entry,
      message("s2", "bs", { role: "system", content: "", sections: { a: "changed section" }, timestamp: 4 }),
      user("u2", "s2", "next"),
    ],
    editedAfterUsage: [...base, user("u2", "a1", "long ".repeat(100)), { type: "context_edit", id: "ce", parentId: "u2", timestamp: at(3), targetId: "u2", replacement: { content: "short" } } as Entry],
    removedAfterUsage: [...base, user("u2", "a1", "gone"), { type: "context_edit", id: "ce", parentId: "u2", timestamp: at(3), targetId: "a1", replacement: null } as Entry],
    compacted: [...base, { type: "compaction", id: "co", parentId: "a1", timestamp: at(3), summary: "summary of it all", firstKeptEntryId: "a1", tokensBefore: 4000 } as Entry, user("u2", "co", "after")],
    compactedThenAnswered: [
      ...base,
      { type: "compaction", id: "co", parentId: "a1", timestamp: at(3), summary: "summary", firstKeptEntryId: "u1", tokensBefore: 4000, systemMessage: { role: "system", content: "prompt", sections: { a: "kept section" }, timestamp: 0 } } as Entry,
      user("u2", "co", "after"),
      reply("a2", "u2", "answered", 1500),
      user("u3", "a2", "and then"),
    ],
  };
}

describe("estimateTokens: the reference's estimate", () => {
  test("counts text, an image as 4800 characters, a tool call's name and JSON arguments, a system message's sections and tools", () => {
    const [text, blocks, empty, assistant, result, bash, note, noteBlocks, branch, compaction, system, systemBlocks, unknown] = MESSAGES.map((m) => estimateTokens(m as AgentMessage));
    expect(text).toBe(Math.ceil("plain text with ünïcødé and 🎉".length / 4));
    expect(blocks).toBe(Math.ceil((4 + 2 * 4800) / 4));
    expect(empty).toBe(0);
    const args = JSON.stringify({ path: "src/a.ts", range: [1, 20], nested: { quote: "\"x\"\n" } }).length;
    expect(assistant).toBe(Math.ceil(("let me think".length + "reading two files".length + 4 + args + 4 + 2) / 4));
    expect(result).toBe(Math.ceil((1001 + 4800) / 4)); // details are not counted
    expect(bash).toBe(Math.ceil((6 + 6) / 4));
    expect([note, noteBlocks]).toEqual([2, Math.ceil((6 + 4800) / 4)]);
    expect([branch, compaction]).toEqual([6, 84]);
    const tools = JSON.stringify([{ name: "read", description: "Read a file", parameters: { type: "object" } }]).length;
    expect(system).toBe(Math.ceil(("You are a coding agent.".length + "cwd: /tmp".length + tools) / 4));
    expect([systemBlocks, unknown]).toEqual([3, 0]);
  });

  test("the context usage: usage plus what follows it; everything estimated without usage or after an edit; null after a compaction until a response", () => {
    const s = sessions();
    const tokens = (name: string) => contextTokens(s[name]!);
    expect(tokens("noUsage")).toBe(2 + Math.ceil((3 + 4800) / 4) + 1);
    expect(tokens("zeroUsage")).toBe(2 + 1);
    expect(tokens("failedLast")).toBe(4000 + 2 + 0);
    // the bash run, the branch summary and the new user message after the usage; a later system message counts as it is
    expect(tokens("trailing")).toBe(4000 + Math.ceil(402 / 4) + 3 + Math.ceil("changed section".length / 4) + 1);
    // an edit after the newest usage: the usage no longer measures the context
    const system = Math.ceil(("prompt".length + "section text".length + JSON.stringify([{ name: "t", description: "d", parameters: {} }]).length) / 4);
    expect(tokens("editedAfterUsage")).toBe(system + 4 + 3 + 2);
    expect(tokens("removedAfterUsage")).toBe(system + 4 + 1);
    expect(tokens("compacted")).toBeNull();
    // the system message before the kept entries went into the summary (this compaction kept none of its own)
    expect(estimateContext(s.compacted!)).toBe(5 + 3 + 2);
    expect(tokens("compactedThenAnswered")).toBe(1500 + 2);
  });
});

describe("pion's estimates are the reference's", () => {
  refTest("estimateTokens of every message kind and of every message in the fixtures", async () => {
    const fromFixtures = FILES.flatMap((name) => entriesOf(name).flatMap((e) => surface.sessionEntryToContextMessages!(e) as object[]));
    const messages = [...MESSAGES, ...fromFixtures];
    const theirs = await referenceCalls(REF!, messages.map((_, i) => ["estimateTokens", { $shared: i }]), messages);
    const ours = messages.map((m) => estimateTokens(m as AgentMessage));
    expect(ours).toEqual(theirs as number[]);
    expect(messages.map((m) => surface.estimateTokens!(m))).toEqual(theirs);
    expect(fromFixtures.length).toBeGreaterThan(900);
  }, 30_000);

  refTest("the context usage at every leaf of every fixture and in each synthetic session is the reference's projected estimate", async () => {
    const cases: { branch: Entry[]; entries: Entry[]; leaf: string }[] = [];
    for (const name of FILES) {
      const entries = entriesOf(name);
      const byId = new Map(entries.map((e) => [e.id, e]));
      const step = Math.max(1, Math.floor(entries.length / 40));
      for (let i = 0; i < entries.length; i += step) cases.push({ entries, leaf: entries[i]!.id, branch: pathTo(byId, entries[i]!.id) });
      cases.push({ entries, leaf: entries.at(-1)!.id, branch: pathTo(byId, entries.at(-1)!.id) });
    }
    for (const entries of Object.values(sessions())) {
      const byId = new Map(entries.map((e) => [e.id, e]));
      for (const e of entries) cases.push({ entries, leaf: e.id, branch: pathTo(byId, e.id) });
    }
    const shared = [...new Set(cases.map((c) => c.entries))];
    const projections = await referenceCalls(REF!, cases.map((c) => ["buildSessionProjection", { $shared: shared.indexOf(c.entries) }, c.leaf]), shared);
    const theirs = (await referenceCalls(REF!, cases.map((c, i) => ["estimateProjectedContextTokens", { $shared: 2 * i }, { $shared: 2 * i + 1 }]), cases.flatMap((c, i) => [projections[i], c.branch]))) as { tokens: number }[];
    let compared = 0;
    cases.forEach((c, i) => {
      expect({ leaf: c.leaf, tokens: estimateContext(c.branch) }).toEqual({ leaf: c.leaf, tokens: theirs[i]!.tokens });
      const ours = contextTokens(c.branch);
      // null only after a compaction no response in the context has answered since
      const compactedAt = c.branch.findLastIndex((e) => e.type === "compaction");
      const answered = c.branch.slice(compactedAt + 1).some((e) => e.type === "message" && e.message.role === "assistant" && e.message.stopReason !== "error" && e.message.stopReason !== "aborted" && e.message.usage.totalTokens > 0);
      expect({ leaf: c.leaf, ours }).toEqual({ leaf: c.leaf, ours: compactedAt >= 0 && !answered ? null : theirs[i]!.tokens });
      if (ours !== null) compared++;
    });
    expect(compared).toBeGreaterThan(40);
  }, 60_000);

  refTest("findCutPoint keeps the entries the reference keeps on the v1 session, for budgets small and large", async () => {
    const entries = entriesOf("reference-v1-linear");
    const keeps = [500, 1000, 2000, 5000, 8000, 12000, 20000, 30000, 50000, 80000];
    const theirs = (await referenceCalls(REF!, keeps.map((k) => ["findCutPoint", { $shared: 0 }, 0, entries.length, k]), [entries])) as { firstKeptEntryIndex: number; turnStartIndex: number }[];
    const ours = keeps.map((k) => findCutPoint(entries, k));
    expect(ours.map((c) => [c?.firstKeptIndex, c?.turnStartIndex])).toEqual(theirs.map((c) => [c.firstKeptEntryIndex, c.turnStartIndex]));
    expect(ours[3]!.firstKeptIndex).toBe(983);
    expect(ours[6]!.firstKeptIndex).toBe(837);
  }, 30_000);

  refTest("a compaction of each fixture's branch keeps from the entry the reference's keeps from, and counts the tokens before as it does", async () => {
    const cases: { path: Entry[]; keep: number }[] = [];
    for (const name of FILES) {
      const entries = entriesOf(name);
      const path = pathTo(new Map(entries.map((e) => [e.id, e])), entries.at(-1)!.id);
      for (const keep of [1, 10, 50, 200, 1000, 5000, 20000]) cases.push({ path, keep });
    }
    const paths = [...new Set(cases.map((c) => c.path))];
    const theirs = (await referenceCalls(REF!, cases.map((c) => ["prepareCompaction", { $shared: paths.indexOf(c.path) }, { enabled: true, reserveTokens: 1000, keepRecentTokens: c.keep }]), paths)) as ({ firstKeptEntryId: string; isSplitTurn: boolean; tokensBefore: number } | undefined)[];
    const ours = cases.map((c) => {
      const plan = planCompaction(c.path, c.keep);
      return plan && { firstKeptEntryId: plan.firstKeptEntryId, isSplitTurn: plan.splitTurn, tokensBefore: estimateContext(c.path) };
    });
    expect(ours).toEqual(theirs.map((t) => t && { firstKeptEntryId: t.firstKeptEntryId, isSplitTurn: t.isSplitTurn, tokensBefore: t.tokensBefore }));
    expect(ours.filter((o) => o !== undefined).length).toBeGreaterThan(10);
  }, 30_000);
});
