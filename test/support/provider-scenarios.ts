import { expect } from "bun:test";
import type { FakeProvider, FakeReply } from "./fake-provider.ts";
import { type Pion, promptToResult, type Rec } from "./pion.ts";

/** Two short turns of 100 input tokens each, which fill a small window. */
export async function twoShortTurns(p: Pion, fake: FakeProvider): Promise<void> {
  for (const m of ["one", "two"]) {
    fake.enqueue({ blocks: [{ type: "text", text: `reply ${m}` }], usage: { input: 100, output: 10 } });
    await promptToResult(p, m);
  }
}

/**
 * The provider refuses the next prompt as too long (`overflow`); pion compacts (`summaries`, the
 * summary requests' replies) and sends it again, answered "after overflow". Returns the run's records.
 */
export async function overflowRecovered(p: Pion, fake: FakeProvider, overflow: FakeReply, summaries: FakeReply[] = [{ blocks: [{ type: "text", text: "SUMMARY" }] }]): Promise<Rec[]> {
  fake.enqueue(overflow, ...summaries, { blocks: [{ type: "text", text: "after overflow" }] });
  const recs = await promptToResult(p, "three");
  expect(recs.find((r) => r.type === "compaction_end")).toMatchObject({ reason: "overflow", willRetry: true });
  return recs;
}

/** A reply that stalls after `stallAfterChunks` chunks, aborted once it has begun: the message ends "aborted". */
export async function abortedMidStream(p: Pion, fake: FakeProvider, stallAfterChunks = 2): Promise<void> {
  fake.enqueue({ blocks: [{ type: "text", text: ["a", "b", "c"] }], stallAfterChunks });
  const from = p.records.length;
  await p.request({ type: "prompt", message: "go" });
  await p.waitFor((r) => r.type === "message_update", from);
  await p.request({ type: "abort" });
  await p.waitFor("agent_settled", from);
  expect(p.records.findLast((r) => r.type === "message_end")!.message.stopReason).toBe("aborted");
}
