import { expect, test } from "bun:test";
import { join } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

const EXT = join(import.meta.dir, "../fixtures/extensions/tree-navigation.ts");
const text = (t: string) => ({ blocks: [{ type: "text" as const, text: t }] });

test("ctx.navigateTree: a summary of the branch left, labels, where the leaf lands, session_before_tree / session_tree, rejections", async () => {
  const fake = startFakeProvider({ replies: [text("first reply"), text("second reply"), text("the branch summary text")] });
  const { home, cwd } = tempDirs();
  writeFakeModels(home, fake.url);
  const p = new Pion({ home, cwd, args: ["--mode", "rpc", "--model", "fake/fake-model", "-e", EXT] });
  const nav = async (arg: Record<string, unknown>) => {
    const from = p.records.length;
    await p.request({ type: "prompt", message: `/nav ${JSON.stringify(arg)}` });
    const r = await p.waitFor((r) => r.type === "extension_ui_request" && r.method === "notify", from);
    return JSON.parse(r.message as string);
  };
  const entries = async () => (await p.request({ type: "get_entries" })).data as { entries: Rec[]; leafId: string };
  for (const m of ["one", "two"]) {
    const from = p.records.length;
    await p.request({ type: "prompt", message: m });
    await p.waitFor("agent_settled", from);
  }
  const before = await entries();
  const [user1, reply1, user2, reply2] = before.entries.filter((e) => e.type === "message");
  expect(before.leafId).toBe(reply2!.id);

  // Summarized, with a label: the summary sits under the target, the label on it, and the label is the new leaf.
  const out = await nav({ target: reply1!.id, options: { summarize: true, label: "checkpoint", customInstructions: "Focus on the numbers" } });
  const after = await entries();
  const summary = after.entries.find((e) => e.type === "branch_summary")!;
  expect(summary).toMatchObject({ parentId: reply1!.id, fromId: reply2!.id, fromHook: false, details: { readFiles: [], modifiedFiles: [] } });
  expect(summary.summary).toContain("the branch summary text");
  expect(summary.usage).toMatchObject({ input: expect.any(Number), output: expect.any(Number) });
  const label = after.entries.at(-1)!;
  expect(label).toMatchObject({ type: "label", parentId: summary.id, targetId: summary.id, label: "checkpoint" });
  expect(after.leafId).toBe(label.id);
  expect(out).toEqual({
    result: { cancelled: false },
    leaf: label.id,
    seen: [
      {
        type: "session_before_tree",
        targetId: reply1!.id,
        oldLeafId: reply2!.id,
        commonAncestorId: reply1!.id,
        entriesToSummarize: [user2!.id, reply2!.id],
        userWantsSummary: true,
        customInstructions: "Focus on the numbers",
        label: "checkpoint",
        signal: true,
      },
      { type: "session_tree", newLeafId: label.id, oldLeafId: reply2!.id, summaryEntry: { id: summary.id, type: "branch_summary" }, fromExtension: false, stored: "branch_summary", leaf: label.id },
    ],
  });
  // The summary request: the branch left, and the instructions.
  const request = JSON.stringify(fake.requests.at(-1)!.body);
  expect(request).toContain("second reply");
  expect(request).toContain("Focus on the numbers");
  expect(request).not.toContain("first reply");
  const tree = (await p.request({ type: "get_tree" })).data;
  expect(tree.leafId).toBe(label.id);
  expect(JSON.stringify(tree.tree)).toContain('"checkpoint"');

  // A user message target: the leaf goes back to its parent; the label goes on the target; no summary without `summarize`.
  const back = await nav({ target: user1!.id, options: { label: "start" } });
  const afterBack = await entries();
  const startLabel = afterBack.entries.at(-1)!;
  expect(startLabel).toMatchObject({ type: "label", targetId: user1!.id, label: "start", parentId: user1!.parentId });
  expect(back.result).toEqual({ cancelled: false });
  expect(back.seen.at(-1)).toEqual({ type: "session_tree", newLeafId: startLabel.id, oldLeafId: label.id, leaf: startLabel.id });
  expect(afterBack.entries.filter((e) => e.type === "branch_summary")).toHaveLength(1);

  // session_before_tree cancels: nothing moves, no session_tree.
  const cancelled = await nav({ target: reply2!.id, options: { summarize: true }, answer: { cancel: true } });
  expect(cancelled.result).toEqual({ cancelled: true });
  expect(cancelled.leaf).toBe(startLabel.id);
  expect(cancelled.seen.map((s: Rec) => s.type)).toEqual(["session_before_tree"]);

  // session_before_tree supplies the summary: no model request, fromHook, its label overriding the caller's.
  const requests = fake.requests.length;
  const own = await nav({ target: reply2!.id, options: { summarize: true, label: "mine" }, answer: { summary: { summary: "an extension's summary", details: { by: "ext" } }, label: "theirs" } });
  const afterOwn = await entries();
  const ownSummary = afterOwn.entries.filter((e) => e.type === "branch_summary").at(-1)!;
  expect(ownSummary).toMatchObject({ summary: "an extension's summary", details: { by: "ext" }, fromHook: true, parentId: reply2!.id, fromId: startLabel.id });
  expect(afterOwn.entries.at(-1)).toMatchObject({ type: "label", targetId: ownSummary.id, label: "theirs" });
  expect(own.seen.at(-1)).toMatchObject({ type: "session_tree", fromExtension: true, summaryEntry: { id: ownSummary.id } });
  expect(fake.requests.length).toBe(requests);

  // Rejections: an unknown entry; a prompt running.
  expect(await nav({ target: "nope", options: {} })).toEqual({ error: "Entry nope not found", leaf: afterOwn.leafId });
  fake.enqueue({ ...text("slow reply"), chunkDelayMs: 400 });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "three" });
  await p.waitFor("message_start", from);
  expect((await nav({ target: reply1!.id, options: {} })).error).toBe("Wait for the current response to finish before navigating the session tree.");
  await p.waitFor("agent_settled", from);
  // The next prompt continues from where the navigation landed, the summary in its context.
  const next = JSON.stringify(fake.requests.at(-1)!.body);
  expect(next).toContain("an extension's summary");
  expect(next).toContain("second reply");
  expect(p.records.filter((r) => r.type === "extension_error")).toEqual([]);
  await p.close();
  await fake.stop();
});
