import { describe, expect, test } from "bun:test";
import type { ExtensionRunner } from "../../../src/extensions/types.ts";
import type { StreamFn } from "../../../src/providers/types.ts";
import { sessionStats } from "../../../src/session/stats.ts";
import { navigateTree, type NavigationHost } from "../../../src/session/tree-navigation.ts";
import type { Entry } from "../../../src/store/entries.ts";
import { Branch, failure, model, scripted, text, usage } from "./branch.ts";

/** one -> r1 -> two -> r2 (the leaf): e0..e3. */
function conversation() {
  const b = new Branch();
  b.user("one");
  b.say("r1");
  b.user("two");
  b.say("r2");
  return b.entries;
}

type Seen = { event: string; payload: Record<string, unknown>; held: boolean };

/** A session tree in memory, with an extension runner that records what it is asked and told. */
function host(entries: Entry[], stream: StreamFn, answer?: Record<string, unknown>, retry = { enabled: false, maxRetries: 0, baseDelayMs: 0 }) {
  const events: Record<string, unknown>[] = [];
  const all = [...entries];
  let leaf: string | null = all.at(-1)?.id ?? null;
  let held = false;
  const controller = new AbortController();
  const seen: Seen[] = [];
  const extensions = {
    handles: () => true,
    askBefore: async (event: string, payload: Record<string, unknown>) => (seen.push({ event, payload, held }), answer),
    notify: async (event: string, payload: Record<string, unknown>) => void seen.push({ event, payload, held }),
  } as unknown as ExtensionRunner;
  const h: NavigationHost = {
    state: "idle",
    model,
    entries: () => all,
    leaf: () => leaf,
    hold: async (work) => {
      held = true;
      try {
        return await work(controller.signal);
      } finally {
        held = false;
      }
    },
    append: (e) => {
      const entry = { ...e, id: `n${all.length}`, parentId: leaf, timestamp: new Date().toISOString() } as Entry;
      all.push(entry);
      leaf = entry.id;
      return entry;
    },
    setLeaf: (id) => void (leaf = id),
    extensions,
    summaries: { auth: async () => ({ apiKey: "key" }), stream, retry },
    emit: (e) => void events.push(e as Record<string, unknown>),
  };
  return { h, all, seen, controller, events };
}

describe("navigateTree", () => {
  test("rejects while a prompt runs or the session is held, without a model to summarize, for a missing target; the leaf itself is a no-op", async () => {
    const none = scripted().stream;
    const { h, all } = host(conversation(), none);
    await expect(navigateTree("e1", {}, { ...h, state: "streaming" })).rejects.toThrow("Wait for the current response to finish before navigating the session tree.");
    await expect(navigateTree("e1", {}, { ...h, state: "busy" })).rejects.toThrow("Wait for the current compaction or tree navigation to finish before navigating the session tree.");
    await expect(navigateTree("e1", { summarize: true }, { ...h, model: undefined })).rejects.toThrow("No model available for summarization");
    await expect(navigateTree("nope", {}, h)).rejects.toThrow("Entry nope not found");
    // Moving to the leaf is checked first: even without a model it succeeds, and writes nothing.
    expect(await navigateTree("e3", { summarize: true, label: "x" }, { ...h, model: undefined })).toEqual({ cancelled: false });
    expect(all).toHaveLength(4);
    expect(h.leaf()).toBe("e3");
  });

  test("summarizes the branch left under the target, labels the summary, and tells session_tree once released", async () => {
    const { stream, requests } = scripted(text("what the branch did", usage(30, 7)));
    const { h, all, seen } = host(conversation(), stream);
    const out = await navigateTree("e1", { summarize: true, label: "cp", customInstructions: "Mind the numbers" }, h);
    const summary = all[4]!;
    expect(summary).toMatchObject({ type: "branch_summary", parentId: "e1", fromId: "e3", fromHook: false, details: { readFiles: [], modifiedFiles: [] }, usage: { input: 30, output: 7 } });
    expect((summary as { summary: string }).summary).toContain("what the branch did");
    expect(all[5]).toMatchObject({ type: "label", parentId: summary.id, targetId: summary.id, label: "cp" });
    expect(h.leaf()).toBe(all[5]!.id);
    expect(out).toEqual({ cancelled: false, summaryEntry: summary as never });
    const sent = JSON.stringify(requests[0]!.messages);
    expect(sent).toContain("two");
    expect(sent).toContain("r2");
    expect(sent).toContain("Mind the numbers");
    expect(sent).not.toContain("r1");
    expect(seen.map((s) => [s.event, s.held])).toEqual([["session_before_tree", true], ["session_tree", false]]);
    expect(seen[0]!.payload.preparation).toMatchObject({ targetId: "e1", oldLeafId: "e3", commonAncestorId: "e1", userWantsSummary: true, label: "cp" });
    expect(seen[1]!.payload).toEqual({ newLeafId: all[5]!.id, oldLeafId: "e3", summaryEntry: summary, fromExtension: false });
    // The summary's request counts in the session's totals, as the reference's getSessionStats counts it.
    const without = sessionStats(all.slice(0, 4), [], undefined).tokens;
    expect(sessionStats(all, [], undefined).tokens).toEqual({ ...without, input: without.input + 30, output: without.output + 7, total: without.total + 37 });
  });

  test("a user or custom message target: the leaf is its parent (none at the root) and its text is returned", async () => {
    const entries = conversation();
    const { h, all } = host(entries, scripted().stream);
    expect(await navigateTree("e2", {}, h)).toEqual({ cancelled: false, editorText: "two" });
    expect(h.leaf()).toBe("e1");
    expect(await navigateTree("e0", { label: "start" }, h)).toEqual({ cancelled: false, editorText: "one" });
    expect(all.at(-1)).toMatchObject({ type: "label", parentId: null, targetId: "e0", label: "start" });
    const custom = { type: "custom_message", id: "c1", parentId: "e1", timestamp: "", customType: "note", content: [{ type: "text", text: "from a note" }], display: true } as Entry;
    const second = host([custom, ...entries], scripted().stream);
    expect(await navigateTree("c1", {}, second.h)).toEqual({ cancelled: false, editorText: "from a note" });
    expect(second.h.leaf()).toBe("e1");
  });

  test("session_before_tree cancels, or gives the summary (only when one is wanted), instructions and label", async () => {
    const cancel = host(conversation(), scripted().stream, { cancel: true });
    expect(await navigateTree("e1", { summarize: true }, cancel.h)).toEqual({ cancelled: true });
    expect([cancel.h.leaf(), cancel.all.length, cancel.seen.length]).toEqual(["e3", 4, 1]);

    const own = host(conversation(), scripted().stream, { summary: { summary: "theirs", details: { n: 1 } }, label: "over" });
    const out = await navigateTree("e1", { summarize: true, label: "mine" }, own.h);
    expect(out.summaryEntry).toMatchObject({ summary: "theirs", details: { n: 1 }, fromHook: true, parentId: "e1" });
    expect(own.all.at(-1)).toMatchObject({ type: "label", targetId: out.summaryEntry!.id, label: "over" });
    expect(own.seen.at(-1)!.payload.fromExtension).toBe(true);

    const unwanted = host(conversation(), scripted().stream, { summary: { summary: "theirs" } });
    expect(await navigateTree("e1", {}, unwanted.h)).toEqual({ cancelled: false });
    expect(unwanted.all.filter((e) => e.type === "branch_summary")).toEqual([]);
    expect(unwanted.seen.at(-1)!.payload.fromExtension).toBeUndefined();

    const instructed = scripted(text("s"));
    await navigateTree("e1", { summarize: true }, host(conversation(), instructed.stream, { customInstructions: "ONLY THIS", replaceInstructions: true }).h);
    expect(JSON.stringify(instructed.requests[0]!.messages)).toContain("ONLY THIS");
  });

  test("an aborted summary cancels and leaves the tree as it was; a failed one rejects", async () => {
    const aborted = host(conversation(), scripted("hang").stream);
    const pending = navigateTree("e1", { summarize: true }, aborted.h);
    await new Promise((r) => setTimeout(r, 10));
    aborted.controller.abort();
    expect(await pending).toEqual({ cancelled: true, aborted: true });
    expect([aborted.h.leaf(), aborted.all.length]).toEqual(["e3", 4]);

    const failed = host(conversation(), scripted(failure("overloaded")).stream);
    await expect(navigateTree("e1", { summarize: true }, failed.h)).rejects.toThrow("overloaded");
    expect([failed.h.leaf(), failed.all.length]).toEqual(["e3", 4]);
  });

  test("a summary's retries are the session's summarization_retry events, source branchSummary", async () => {
    const { stream, requests } = scripted(failure("503 overloaded"), text("after a retry"));
    const { h, all, events } = host(conversation(), stream, undefined, { enabled: true, maxRetries: 2, baseDelayMs: 1 });
    await navigateTree("e1", { summarize: true }, h);
    expect(requests).toHaveLength(2);
    expect((all[4] as { summary: string }).summary).toContain("after a retry");
    expect(events.map((e) => e.type)).toEqual(["summarization_retry_scheduled", "summarization_retry_attempt_start", "summarization_retry_finished"]);
    expect(events[1]).toEqual({ type: "summarization_retry_attempt_start", source: "branchSummary" });
  });

  test("nothing left behind (the target is ahead on the same path): no summary, no request", async () => {
    const { stream, requests } = scripted();
    const { h, all } = host(conversation(), stream);
    h.setLeaf("e1");
    expect(await navigateTree("e3", { summarize: true }, h)).toEqual({ cancelled: false });
    expect([h.leaf(), all.length, requests.length]).toEqual(["e3", 4, 0]);
  });
});
