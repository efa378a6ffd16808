import { expect, test } from "bun:test";
import { copyFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { locateSession } from "../../../src/session/navigation.ts";
import { SessionTree } from "../../../src/session/tree.ts";
import { openSqliteStore } from "../../../src/store/sqlite-store.ts";
import { tempDir } from "../store/helpers.ts";

const FIXTURES = resolve(import.meta.dir, "../../fixtures");

test("an imported linear file is summarized as a plain context; one with a compaction is not", () => {
  using dir = tempDir();
  const store = openSqliteStore(":memory:");
  const linear = join(dir.path, "linear.jsonl");
  const rows = [
    { type: "session", version: 3, id: "11111111-0000-4000-8000-000000000000", timestamp: "2026-01-01T00:00:00.000Z", cwd: dir.path },
    { type: "message", id: "a", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: "system", content: "", timestamp: 1 } },
    { type: "message", id: "b", parentId: "a", timestamp: "2026-01-01T00:00:02.000Z", message: { role: "user", content: "hi", timestamp: 2 } },
    { type: "label", id: "c", parentId: "b", timestamp: "2026-01-01T00:00:03.000Z", targetId: "b", label: "x" },
  ];
  writeFileSync(linear, `${rows.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const a = locateSession(store, linear, dir.path, () => undefined);
  expect(store.getSession(a)?.cache).toEqual({ leafId: "c", messageCount: 1, linear: true, plainContext: true });
  expect([...store.contextMessages(a)].map((p) => (typeof p === "string" ? p : new TextDecoder().decode(p)))).toEqual([JSON.stringify(rows[2]!.message)]);

  const compacted = join(dir.path, "compaction.jsonl");
  copyFileSync(join(FIXTURES, "reference-v3-compaction.jsonl"), compacted);
  const b = locateSession(store, compacted, dir.path, () => undefined);
  expect(store.getSession(b)?.cache).toMatchObject({ linear: true });
  expect(store.getSession(b)?.cache?.plainContext).toBeUndefined();

  // Every entry on the path, but a child listed before its parent: the rows are not in path order.
  const swapped = join(dir.path, "swapped.jsonl");
  writeFileSync(swapped, `${[rows[0], rows[2], rows[1], rows[3]].map((r) => JSON.stringify({ ...r, id: r!.type === "session" ? "22222222-0000-4000-8000-000000000000" : r!.id })).join("\n")}\n`);
  const c = locateSession(store, swapped, dir.path, () => undefined);
  expect(store.getSession(c)?.cache).toEqual({ leafId: "c", messageCount: 1 });

  // Model and thinking level: the last change on the branch, taken as the entries stream by.
  const settings = join(dir.path, "settings.jsonl");
  const withSettings = [
    { ...rows[0], id: "33333333-0000-4000-8000-000000000000" },
    { type: "model_change", id: "m1", parentId: null, timestamp: "2026-01-01T00:00:01.000Z", provider: "p", modelId: "one" },
    { type: "thinking_level_change", id: "t1", parentId: "m1", timestamp: "2026-01-01T00:00:02.000Z", thinkingLevel: "high" },
    { type: "model_change", id: "m2", parentId: "t1", timestamp: "2026-01-01T00:00:03.000Z", provider: "p", modelId: "two" },
    { ...rows[2], parentId: "m2" },
  ];
  writeFileSync(settings, `${withSettings.map((r) => JSON.stringify(r)).join("\n")}\n`);
  const d = locateSession(store, settings, dir.path, () => undefined);
  expect(store.getSession(d)?.cache).toEqual({ leafId: "b", messageCount: 1, linear: true, plainContext: true, model: { provider: "p", modelId: "two" }, thinkingLevel: "high" });

  // A session pion wrote and left: the flag is recorded for the next opener as well.
  const tree = new SessionTree(store, dir.path, () => undefined, () => ({}));
  tree.openStored(a);
  tree.append({ type: "message", message: { role: "user", content: "more", timestamp: 3 } });
  tree.release();
  expect(store.getSession(a)?.cache).toMatchObject({ messageCount: 2, linear: true, plainContext: true });
  store.close();
});

/** A linear v3 file of `n` ~1 KB messages; `odd` may rewrite a line. */
function messages(path: string, n: number, odd: (i: number, text: string) => string = (_, t) => t): void {
  const lines = [JSON.stringify({ type: "session", version: 3, id: "22222222-0000-4000-8000-000000000000", timestamp: "2026-01-01T00:00:00.000Z", cwd: "/" })];
  for (let i = 0; i < n; i++) {
    const e = { type: "message", id: `m${i}`, parentId: i ? `m${i - 1}` : null, timestamp: "2026-01-01T00:00:01.000Z", message: { role: i % 2 ? "assistant" : "user", content: "x".repeat(1000) } };
    lines.push(odd(i, JSON.stringify(e)));
  }
  writeFileSync(path, `${lines.join("\n")}\n`);
}

test("a message that is not one JSON value is found as its row is written, or by the check thread of a large file: the file is parsed instead", () => {
  using dir = tempDir();
  // A field after the message: the first fields read as usual, the rest is not one message.
  const note = (at: number) => (i: number, t: string) => (i === at ? `${t.slice(0, -1)},"note":${i}}` : t);
  for (const [n, at] of [
    [3_000, 2_500], // 3 MB: confirmed as the rows are written
    [33_000, 30_000], // 34 MB: confirmed on the check thread
  ] as const) {
    const store = openSqliteStore(":memory:");
    const path = join(dir.path, `odd-${n}.jsonl`);
    messages(path, n, note(at));
    const id = locateSession(store, path, dir.path, () => undefined);
    const entries = store.entries(id);
    expect(entries.length).toBe(n);
    expect((entries[at] as unknown as { note: number }).note).toBe(at);
    // Parsed, its message is not cut from the body at an offset: the context has it whole.
    const context: string[] = [];
    for (const p of store.contextMessages(id)) context.push(typeof p === "string" ? p : new TextDecoder().decode(p));
    expect((JSON.parse(`[${context.join(",")}]`) as unknown[])[at]).toEqual({ role: "user", content: "x".repeat(1000) });
    store.close();
  }
});
