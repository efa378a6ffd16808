import { describe, expect, test } from "bun:test";
import { copyFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { startFakeProvider } from "../support/fake-provider.ts";
import { Pion, tempDirs, writeFakeModels, type Rec } from "../support/pion.ts";

/*
 * A session opened from a file is answered from the store without reading its entries into
 * the process: get_messages over the index with each message taken from its row, get_entries
 * and get_tree streamed. These tests hold those answers to the ones the same process gives once
 * it has read the entries (any append reads them), on both paths.
 */

const FIXTURES = resolve(import.meta.dir, "../fixtures");
const lines = (file: string): Rec[] =>
  readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

function open(extra: string[]) {
  const fake = startFakeProvider();
  const dirs = tempDirs();
  writeFakeModels(dirs.home, fake.url);
  const p = new Pion({ ...dirs, args: ["--mode", "rpc", "--model", "fake/fake-model", ...extra] });
  return { p, fake, ...dirs };
}

/** [id, parent] of every node, depth first; the nodes' entries must be the parents' children. */
function flat(nodes: Rec[], parent: string | null = null, out: [string, string | null][] = []): [string, string | null][] {
  for (const n of nodes) {
    expect(n.entry.parentId ?? null).toBe(parent);
    out.push([n.entry.id, parent]);
    flat(n.children, n.entry.id, out);
  }
  return out;
}

/** The tree as [id, label, children], labels kept. */
const shape = (nodes: Rec[]): unknown[] => nodes.map((n) => [n.entry.id, n.label ?? null, shape(n.children)]);

describe.each([
  ["--no-session", ["--no-session"]],
  ["persisted", [] as string[]],
])("a file opened with switch_session (%s)", (_name, extra) => {
  test.concurrent("get_messages, get_entries and get_tree answer the same before and after the entries are read", async () => {
    const { p, cwd } = open(extra);
    const file = join(cwd, "compaction.jsonl");
    copyFileSync(join(FIXTURES, "reference-v3-compaction.jsonl"), file);
    expect((await p.request({ type: "switch_session", sessionPath: file })).data).toEqual({ cancelled: false });

    const before = {
      messages: (await p.request({ type: "get_messages" })).data.messages,
      entries: (await p.request({ type: "get_entries" })).data,
      tree: (await p.request({ type: "get_tree" })).data,
      state: (await p.request({ type: "get_state" })).data,
    };
    // The file's entries, as written; the context starts with the compaction's summary, and the
    // reference's system-role message is not part of it.
    expect(before.entries).toEqual({ entries: lines(file).slice(1), leafId: lines(file).at(-1)!.id });
    expect(before.messages[0].role).toBe("compactionSummary");
    expect(before.messages.map((m: Rec) => m.role)).not.toContain("system");
    expect(before.state.messageCount).toBe(before.messages.length);

    // An append makes the session read its entries; the answers must not change (but for the new entry).
    const named = await p.request({ type: "set_session_name", name: "renamed" });
    expect(named.success).toBe(true);
    const messages = (await p.request({ type: "get_messages" })).data.messages;
    expect(messages).toEqual(before.messages);
    const entries = (await p.request({ type: "get_entries" })).data;
    expect(entries.entries.slice(0, -1)).toEqual(before.entries.entries);
    expect(entries.entries.at(-1)).toMatchObject({ type: "session_info", name: "renamed", parentId: before.entries.leafId });
    const tree = (await p.request({ type: "get_tree" })).data;
    expect(flat(tree.tree)).toEqual([...flat(before.tree.tree), [entries.entries.at(-1).id, before.entries.leafId]]);
    expect(await p.close()).toBe(0);
  });

  test.concurrent("a linear file (read from its message rows) with a system message, tool calls and other kinds", async () => {
    const { p, cwd } = open(extra);
    const file = join(cwd, "linear.jsonl");
    const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const ts = (i: number) => `2026-01-01T00:00:${String(i).padStart(2, "0")}.000Z`;
    const bodies: Rec[] = [
      { type: "model_change", provider: "fake", modelId: "fake-model" },
      { type: "message", message: { role: "system", content: "", timestamp: 1 } },
      { type: "message", message: { role: "user", content: [{ type: "text", text: "read it ✓ 😀" }], timestamp: 2 } },
      { type: "message", message: { role: "assistant", content: [{ type: "toolCall", id: "t1", name: "read", arguments: { path: "a" } }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage, stopReason: "toolUse", timestamp: 3 } },
      { type: "message", message: { role: "toolResult", toolCallId: "t1", toolName: "read", content: [{ type: "text", text: "x".repeat(5000) }], isError: false, timestamp: 4 } },
      { type: "custom", customType: "ext", data: { n: 1 } },
      { type: "label", targetId: "e0000003", label: "start" },
      { type: "message", message: { role: "assistant", content: [{ type: "text", text: "done" }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage, stopReason: "stop", timestamp: 5 } },
    ];
    const entries: Rec[] = bodies.map(({ type, ...rest }, i) => ({ type, id: `e000000${i}`, parentId: i === 0 ? null : `e000000${i - 1}`, timestamp: ts(i), ...rest }));
    const head = { type: "session", version: 3, id: "0b5e55e0-0000-4000-8000-000000000002", timestamp: ts(0), cwd };
    writeFileSync(file, `${[head, ...entries].map((r) => JSON.stringify(r)).join("\n")}\n`);
    await p.request({ type: "switch_session", sessionPath: file });
    const messages = (await p.request({ type: "get_messages" })).data.messages;
    expect(messages).toEqual([2, 3, 4, 7].map((i) => entries[i]!.message));
    expect((await p.request({ type: "get_state" })).data.messageCount).toBe(4);
    const tree = (await p.request({ type: "get_tree" })).data.tree;
    expect(flat(tree)).toEqual(entries.map((e) => [e.id, e.parentId]));
    expect(tree[0].children[0].children[0].children[0].label).toBe("start");
    await p.request({ type: "set_session_name", name: "read" }); // reads the entries
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual(messages);
    const after = (await p.request({ type: "get_tree" })).data.tree;
    expect(flat(after).slice(0, -1)).toEqual(flat(tree));
    expect(await p.close()).toBe(0);
  });

  test.concurrent("a branched file with labels: the tree, the active branch's messages, and search", async () => {
    const { p, cwd } = open(extra);
    const file = join(cwd, "branched.jsonl");
    const usage = { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } };
    const t = (s: number) => `2026-01-01T00:00:${String(s).padStart(2, "0")}.000Z`;
    const msg = (id: string, parentId: string | null, s: number, role: string, text: string) =>
      role === "user"
        ? { type: "message", id, parentId, timestamp: t(s), message: { role, content: [{ type: "text", text }], timestamp: s } }
        : {
            type: "message",
            id,
            parentId,
            timestamp: t(s),
            message: { role, content: [{ type: "text", text }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage, stopReason: "stop", timestamp: s },
          };
    const rows: Rec[] = [
      { type: "session", version: 3, id: "0b5e55e0-0000-4000-8000-000000000001", timestamp: t(0), cwd },
      msg("a0000001", null, 1, "user", "first question about the walrus"),
      msg("a0000002", "a0000001", 2, "assistant", "first answer"),
      msg("a0000003", "a0000002", 3, "user", "left branch"),
      // Fields in another order than the reference writes them: answered through a parse.
      { message: { role: "assistant", content: [{ type: "text", text: "left answer é \u2028 \"quoted\"" }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage, stopReason: "stop", timestamp: 4 }, type: "message", id: "a0000004", parentId: "a0000003", timestamp: t(4) },
      msg("a0000005", "a0000002", 5, "user", "right branch"),
      { type: "label", id: "a0000006", parentId: "a0000005", timestamp: t(6), targetId: "a0000003", label: "left" },
      { type: "custom", id: "a0000007", parentId: "a0000006", timestamp: t(7), customType: "x", data: { big: "y".repeat(1000) } },
      msg("a0000008", "a0000007", 8, "assistant", "right answer"),
    ];
    // The left branch is written last, so it is the active one.
    const order = [0, 1, 2, 5, 6, 7, 8, 3, 4];
    writeFileSync(file, `${order.map((i) => JSON.stringify(rows[i])).join("\n")}\n`);
    await p.request({ type: "switch_session", sessionPath: file });

    const tree = (await p.request({ type: "get_tree" })).data;
    expect(tree.leafId).toBe("a0000004");
    expect(shape(tree.tree)).toEqual([
      ["a0000001", null, [["a0000002", null, [
        ["a0000003", "left", [["a0000004", null, []]]],
        ["a0000005", null, [["a0000006", null, [["a0000007", null, [["a0000008", null, []]]]]]]],
      ]]]],
    ]);
    expect(tree.tree[0].children[0].children[0].children[0].entry).toEqual(rows[4]);
    const messages = (await p.request({ type: "get_messages" })).data.messages;
    expect(messages).toEqual([rows[1]!.message, rows[2]!.message, rows[3]!.message, rows[4]!.message]);

    await p.request({ type: "set_session_name", name: "x" }); // reads the entries
    const hits = (await p.request({ type: "search_sessions", query: "walrus" })).data.results;
    expect(hits.map((h: Rec) => h.entryId)).toEqual(["a0000001"]);
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual(messages);
    expect(await p.close()).toBe(0);
  });

  /** A linear file of `n` messages of about 2.5 KB in the reference's layout. */
  const bigFile = (cwd: string, n: number, odd: (i: number, line: Rec) => string | undefined) => {
    const t = (i: number) => new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString();
    const rows: string[] = [JSON.stringify({ type: "session", version: 3, id: "0b5e55e0-0000-4000-8000-00000000000b", timestamp: t(0), cwd })];
    for (let i = 0; i < n; i++) {
      const role = i % 2 === 0 ? "user" : "assistant";
      const message =
        role === "user"
          ? { role, content: [{ type: "text", text: `q${i} ${"é".repeat(10)} ${"x".repeat(2500)}` }], timestamp: i }
          : { role, content: [{ type: "text", text: `a${i} ${"y".repeat(2500)}` }], api: "anthropic-messages", provider: "fake", model: "fake-model", usage: { input: 1, output: 1, cacheRead: 0, cacheWrite: 0, totalTokens: 2, cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 } }, stopReason: "stop", timestamp: i };
      const entry = { type: "message", id: `b${String(i).padStart(7, "0")}`, parentId: i === 0 ? null : `b${String(i - 1).padStart(7, "0")}`, timestamp: t(i), message };
      rows.push(odd(i, entry) ?? JSON.stringify(entry));
    }
    writeFileSync(join(cwd, "big.jsonl"), `${rows.join("\n")}\n`);
    return { file: join(cwd, "big.jsonl"), entries: () => rows.slice(1).map((l) => JSON.parse(l) as Rec) };
  };

  test.concurrent("a large file whose message lines are read without a parse: every answer is the file's", async () => {
    const { p, cwd } = open(extra);
    // Two lines the first fields cannot tell apart from the usual: a field after the message, and a
    // time given twice (the parse keeps the second). Both must be answered as their parse says. And an
    // id and a time that are not ASCII before the message (its offset would not count the line's bytes).
    const big = bigFile(cwd, 1000, (i, e) => {
      if (i === 300) return JSON.stringify({ ...e, id: "b0000300-ü€" });
      if (i === 301) return JSON.stringify({ ...e, parentId: "b0000300-ü€" });
      if (i === 302) return JSON.stringify({ ...e, timestamp: "2026-01-01T00:05:02.000Z ⌚" });
      if (i === 501) return `${JSON.stringify(e).slice(0, -1)},"note":"after the message"}`;
      if (i === 800) return `${JSON.stringify(e).slice(0, -1)},"timestamp":"2027-01-01T00:00:00.000Z"}`;
      return undefined;
    });
    const { file } = big;
    const entries = big.entries();
    expect(entries[501]!.note).toBe("after the message");
    expect((await p.request({ type: "switch_session", sessionPath: file })).success).toBe(true);
    expect((await p.request({ type: "get_state" })).data.messageCount).toBe(1000);
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual(entries.map((e) => e.message));
    expect((await p.request({ type: "get_entries" })).data.entries).toEqual(entries);
    const tree = (await p.request({ type: "get_tree" })).data.tree;
    expect(flat(tree)).toEqual(entries.map((e) => [e.id, e.parentId]));
    await p.request({ type: "set_session_name", name: "read" }); // reads the entries
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual(entries.map((e) => e.message));
    expect(await p.close()).toBe(0);
  });

  test.concurrent("a large file in the usual layout: its lines confirmed as they are written, none parsed again", async () => {
    const { p, cwd } = open(extra);
    const big = bigFile(cwd, 1000, () => undefined);
    expect((await p.request({ type: "switch_session", sessionPath: big.file })).success).toBe(true);
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual(big.entries().map((e) => e.message));
    expect(await p.close()).toBe(0);
    // Every line read without a parse was confirmed: the file was not imported a second time, with a parse.
    expect(p.stderr).not.toContain("pion store");
  });

  if (extra.length === 0) {
    test.concurrent("a file over 4 MB: its checkpoint runs on a thread of its own once no command is in hand", async () => {
      const { p, cwd, home } = open(extra);
      const big = bigFile(cwd, 2000, () => undefined);
      expect((await p.request({ type: "switch_session", sessionPath: big.file })).success).toBe(true);
      const db = join(home, "sessions", "pion.db");
      // The answers come from the WAL meanwhile; the database file fills as the thread copies it in,
      // once the process has been quiet for a moment (a command at most every 250 ms here).
      const until = Date.now() + 20_000;
      while (statSync(db).size < 4_000_000 && Date.now() < until) {
        expect((await p.request({ type: "get_state" })).data.messageCount).toBe(2000);
        await Bun.sleep(250);
      }
      expect((await p.request({ type: "get_messages" })).data.messages).toEqual(big.entries().map((e) => e.message));
      expect(statSync(db).size).toBeGreaterThan(4_000_000);
      expect(await p.close()).toBe(0);
      expect(p.stderr).not.toContain("pion store");
    });
  }

  test.concurrent("a large file with a line that is not JSON after usual first fields: refused naming the line, nothing imported", async () => {
    const { p, cwd } = open(extra);
    const { file } = bigFile(cwd, 1000, (i, e) => (i === 600 ? `${JSON.stringify(e).slice(0, -2)},,}` : undefined));
    const before = (await p.request({ type: "get_state" })).data;
    const r = await p.request({ type: "switch_session", sessionPath: file });
    expect(r.success).toBe(false);
    expect(r.error).toContain("big.jsonl:602: not a JSON line");
    expect((await p.request({ type: "get_state" })).data.sessionId).toBe(before.sessionId);
    expect((await p.request({ type: "get_messages" })).data.messages).toEqual([]);
    // The file fixed, it opens.
    writeFileSync(file, readFileSync(file, "utf8").replace(",,}", "}}"));
    expect((await p.request({ type: "switch_session", sessionPath: file })).success).toBe(true);
    expect((await p.request({ type: "get_state" })).data.messageCount).toBe(1000);
    expect(await p.close()).toBe(0);
  });
});
